"""Reading a recording back: the header (header.py), then the snapshots, forgiving a truncated last line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from agentx_tui import __version__
from agentx_tui.errors import RecordingError
from agentx_tui.recording.header import RECORDING_FORMAT, RecordingHeader
from agentx_tui.snapshot import Snapshot


@dataclass(frozen=True)
class Recording:
    path: Path
    header: RecordingHeader
    snapshots: list[Snapshot]
    notice: str | None = None


def _not_a_recording(path: Path, why: str) -> RecordingError:
    return RecordingError(f"{path} is not an agentx-tui recording: {why}.", "Make one with `agentx-tui --record PATH`.")


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


def _header(path: Path, line: str) -> RecordingHeader:
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
    try:
        return RecordingHeader.model_validate(header)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise RecordingError(
            f"{path} has a header this agentx-tui cannot read: {where}: {error['msg']}.",
            "The file may be damaged or from another agentx-tui version.",
        ) from exc
