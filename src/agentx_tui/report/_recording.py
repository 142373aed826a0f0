"""Recordings: every Snapshot of a run as one JSON line after a header line (`--record PATH`).

Each line is flushed as it is written, so a crash or ``kill -9`` loses at most the tick being
written; reading back ignores such a truncated last line with a notice. The header says what was
recorded (version, target, workload, settings). API keys never reach the file: header fields named
like a credential are dropped, and every secret the recorder is given is masked in every line.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from agentx_tui import __version__
from agentx_tui.errors import RecordingError
from agentx_tui.telemetry.snapshot import SCHEMA_VERSION, Snapshot

RECORDING_FORMAT = 1
MASK = "********"
_CREDENTIAL_WORDS = ("api_key", "apikey", "api-key", "authorization", "password", "secret", "bearer")


def redact(text: str, secrets: Iterable[str]) -> str:
    """Mask every secret in `text`, both as written and as it appears inside a JSON string."""
    for secret in secrets:
        if len(secret) < 4:
            # Masking a very short string would shred ordinary text; such a key is no secret anyway.
            continue
        for form in {secret, json.dumps(secret)[1:-1]}:
            text = text.replace(form, MASK)
    return text


def redact_value(value: Any, secrets: Iterable[str]) -> Any:
    """`value` (a report: mappings, lists, strings, numbers) with every secret masked in its strings.

    A server's text reaches the report (its model name, version, status lines), and a server may
    repeat the key it was sent; masking the finished report is the one place that covers them all."""
    secrets = [s for s in secrets if s]
    if not secrets:
        return value
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {
            redact(k, secrets) if isinstance(k, str) else k: redact_value(v, secrets) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_value(v, secrets) for v in value]
    return value


def _drop_credentials(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            k: _drop_credentials(v)
            for k, v in value.items()
            if not any(word in str(k).lower() for word in _CREDENTIAL_WORDS)
        }
    if isinstance(value, list | tuple):
        return [_drop_credentials(v) for v in value]
    return value


class Recorder:
    def __init__(self, path: Path, header: dict[str, Any], *, secrets: Iterable[str] = ()) -> None:
        self.path = path
        self._secrets = [s for s in secrets if s]
        self.error: str | None = None  # set when writing failed; recording then stops, the run goes on
        try:
            self._file: IO[str] | None = path.open("w", encoding="utf-8")
        except OSError as exc:
            raise RecordingError(f"--record {path} cannot be written: {exc.strerror or exc}.") from exc
        full = {
            "agentx_recording": RECORDING_FORMAT,
            "version": __version__,
            "schema_version": SCHEMA_VERSION,
            "created_at": time.time(),
            **_drop_credentials(header),
        }
        full["agentx_recording"] = RECORDING_FORMAT
        self._line(json.dumps(full, default=str, ensure_ascii=False))

    def _line(self, text: str) -> None:
        if self._file is None:
            return
        try:
            self._file.write(redact(text, self._secrets) + "\n")
            self._file.flush()
        except OSError as exc:
            self.error = f"recording to {self.path} stopped: {exc.strerror or exc}"
            self.close()

    def write(self, snap: Snapshot) -> None:
        self._line(snap.to_json())

    def close(self) -> None:
        if self._file is not None:
            f, self._file = self._file, None
            try:
                f.close()
            except OSError as exc:
                self.error = (
                    self.error or f"recording to {self.path} could not be closed: {exc.strerror or exc}"
                )

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Recording:
    path: Path
    header: dict[str, Any]
    snapshots: list[Snapshot]
    notice: str | None = None


def _not_a_recording(path: Path, why: str) -> RecordingError:
    return RecordingError(
        f"{path} is not an agentx-tui recording: {why}.", "Make one with `agentx-tui --record PATH`."
    )


def read_recording(path: Path) -> Recording:
    """Read a recording line by line (a long run's file need not fit in memory twice)."""
    try:
        f = path.open("rb")
    except IsADirectoryError as exc:
        raise RecordingError(f"{path} is a directory, not a recording.") from exc
    except OSError as exc:
        raise RecordingError(f"{path} cannot be read: {exc.strerror or exc}.") from exc
    with f:
        head = f.read(8192)
        if b"\x00" in head:
            raise _not_a_recording(path, "it is a binary file")
        f.seek(0)
        lines = (_decode(path, raw) for raw in f)
        first = next((line for line in lines if line.strip()), None)
        if first is None:
            raise _not_a_recording(path, "the file is empty")
        header = _header(path, first)
        snapshots, notice = _snapshots(path, lines)
    if not snapshots:
        raise RecordingError(f"{path} holds no snapshots: the run ended before its first tick.")
    return Recording(path=path, header=header, snapshots=snapshots, notice=notice)


def _decode(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_a_recording(path, "it is not UTF-8 text") from exc


def _snapshots(path: Path, lines: Iterator[str]) -> tuple[list[Snapshot], str | None]:
    snapshots: list[Snapshot] = []
    failed: tuple[int, ValidationError] | None = None  # a bad line is forgiven only if it is the last
    for number, line in enumerate(lines, start=2):
        if not line.strip():
            continue
        if failed is not None:
            bad, exc = failed
            raise RecordingError(
                f"{path} line {bad} is not a valid snapshot: {exc.errors()[0]['msg']}.",
                "The file may be damaged or from another agentx-tui version.",
            ) from exc
        try:
            snapshots.append(Snapshot.from_json(line))
        except ValidationError as exc:
            failed = (number, exc)
    if failed is None:
        return snapshots, None
    return snapshots, f"{path}: ignored a truncated last line (line {failed[0]}); the recording ends there"


def _header(path: Path, line: str) -> dict[str, Any]:
    try:
        header = json.loads(line)
    except json.JSONDecodeError as exc:
        raise _not_a_recording(path, "its first line is not JSON") from exc
    if not isinstance(header, dict) or "agentx_recording" not in header:
        raise _not_a_recording(path, "its first line is not a recording header")
    fmt = header["agentx_recording"]
    if not isinstance(fmt, int) or isinstance(fmt, bool):
        raise _not_a_recording(path, "its header has no format number")
    if fmt > RECORDING_FORMAT:
        raise RecordingError(
            f"{path} is a recording in format {fmt}, newer than this agentx-tui ({__version__}) reads.",
            "Replay it with a newer agentx-tui.",
        )
    return header
