"""Recordings (`--record PATH`): writing the Snapshot stream, reading it back, playing it in the dashboard.

- `Recorder` writes one JSON line per Snapshot (a subscriber of the run's tick loop);
- `read_recording` reads a file back (a truncated last line is forgiven, with a notice);
- `ReplayPlayer` is a Snapshot source paced like the original run, with pause, step, seek and speed.
"""

from agentx_tui.recording.player import ReplayPlayer
from agentx_tui.recording.reader import Recording, read_recording
from agentx_tui.recording.recorder import RECORDING_FORMAT, Recorder

__all__ = ["RECORDING_FORMAT", "Recorder", "Recording", "ReplayPlayer", "read_recording"]
