"""Recordings (`--record PATH`): writing the Snapshot stream, reading it back, playing it in the dashboard.

- `RecordingHeader` is the first line: what was recorded (`RecordedSettings`: the run's plan), typed once;
- `Recorder` writes it, then one JSON line per Snapshot (a subscriber of the run's tick loop);
- `read_recording` reads a file back (a truncated last line is forgiven, with a notice);
- `ReplayPlayer` is a Snapshot source paced like the original run, with pause, step, seek and speed.
"""

from agentx_tui.recording.header import (
    RECORDING_FORMAT,
    RecordedEndpoint,
    RecordedProxy,
    RecordedSettings,
    RecordedSweep,
    RecordingHeader,
)
from agentx_tui.recording.player import ReplayPlayer
from agentx_tui.recording.reader import Recording, read_recording
from agentx_tui.recording.recorder import Recorder

__all__ = [
    "RECORDING_FORMAT",
    "RecordedEndpoint",
    "RecordedProxy",
    "RecordedSettings",
    "RecordedSweep",
    "Recorder",
    "Recording",
    "RecordingHeader",
    "ReplayPlayer",
    "read_recording",
]
