"""Writing a recording: every Snapshot of a run as one JSON line after a header line (`--record PATH`).

Each line is flushed as it is written, so a crash or ``kill -9`` loses at most the tick being
written (the reader ignores such a truncated last line). The header (header.py) says what was
recorded: version, target, workload, settings. API keys never reach the file: the header has no field
for one, and every secret the recorder is given is masked in every line.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import IO

from agentx_tui.errors import RecordingError
from agentx_tui.recording.header import RecordingHeader
from agentx_tui.redaction import redact
from agentx_tui.snapshot import Snapshot


class Recorder:
    def __init__(self, path: Path, header: RecordingHeader, *, secrets: Iterable[str] = ()) -> None:
        self.path = path
        self._secrets = [s for s in secrets if s]
        self.error: str | None = None  # set when writing failed; recording then stops, the run goes on
        try:
            self._file: IO[str] | None = path.open("w", encoding="utf-8")
        except OSError as exc:
            raise RecordingError(f"--record {path} cannot be written: {exc.strerror or exc}.") from exc
        self._line(header.model_dump_json())

    def _line(self, text: str) -> None:
        if self._file is None:
            return
        try:
            self._file.write(redact(text, self._secrets) + "\n")
            self._file.flush()
        except OSError as exc:
            self.error = f"recording to {self.path} stopped: {exc.strerror or exc}"
            self.close()

    def publish(self, snap: Snapshot) -> None:
        self._line(snap.to_json())

    def close(self) -> None:
        if self._file is not None:
            f, self._file = self._file, None
            try:
                f.close()
            except OSError as exc:
                self.error = self.error or f"recording to {self.path} could not be closed: {exc.strerror or exc}"

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
