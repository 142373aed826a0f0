"""Where a corpus's sessions are, without reading them: one `SessionRef` a session (its file, and in a
`.jsonl` corpus its line's number, byte offset and length), so that a replay can read any one session
when a user takes it (`read_ref`) instead of the whole corpus before its first request.

Indexing parses nothing: a folder's `*.json` files are listed and sized (one session a file), a
`.jsonl` file's lines are found by scanning its bytes for newlines (about a second a gigabyte once the
file is in the page cache; blank lines hold no session, as `read_sessions` reads them). Memory is a
few dozen bytes a session. A session read through its ref is validated exactly as `read_sessions`
validates it, with the same one-sentence errors (its line's number included).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentx_tui.errors import WorkloadError
from agentx_tui.sessionfile.reader import HINT, read_session_bytes, read_session_file
from agentx_tui.sessionfile.schema import SessionFile

_CHUNK = 8 << 20  # bytes read at a time while looking for a .jsonl file's line ends


@dataclass(frozen=True, slots=True)
class SessionRef:
    """One session of a corpus: a whole `.json` file (`line` None), or one line of a `.jsonl` file."""

    path: Path
    line: int | None  # 1-based, blank lines counted, as messages name it
    offset: int  # where its bytes start in the file
    length: int  # how many bytes it has (its line's end of line left out)

    @property
    def suffix(self) -> str:
        """What names it beside its file's name: ":LINE" for a line of a `.jsonl` file."""
        return f":{self.line}" if self.line is not None else ""


def index_sessions(files: Sequence[Path]) -> tuple[SessionRef, ...]:
    """Every session of `files` (`session_file_paths` order), one ref each; an unreadable file, or a
    `.jsonl` file without a session, is one `WorkloadError`."""
    return tuple(ref for path in files for ref in _file_refs(path))


def read_ref(ref: SessionRef) -> SessionFile:
    """The session `ref` points at, validated and in the reference format (`read_sessions`' errors)."""
    if ref.line is None:
        return read_session_file(ref.path)
    try:
        with ref.path.open("rb") as source:
            source.seek(ref.offset)
            raw = source.read(ref.length)
    except OSError as exc:
        raise WorkloadError(f"Cannot read the session file {ref.path} ({exc.strerror or exc}).") from exc
    if len(raw) != ref.length:
        raise WorkloadError(f"The session file {ref.path} changed while it was replayed (line {ref.line} is gone).")
    return read_session_bytes(raw, ref.path, line=ref.line)


def _file_refs(path: Path) -> Iterator[SessionRef]:
    try:
        if path.suffix != ".jsonl":
            yield SessionRef(path, None, 0, path.stat().st_size)
            return
        refs = list(_line_refs(path))
    except OSError as exc:
        raise WorkloadError(f"Cannot read the session file {path} ({exc.strerror or exc}).") from exc
    if not refs:
        raise WorkloadError(f"The session file {path} holds no sessions (one JSON object a line).", HINT)
    yield from refs


def _line_refs(path: Path) -> Iterator[SessionRef]:
    """The non-blank lines of a `.jsonl` file, found chunk by chunk (a line may span many chunks)."""
    line, start, blank, at = 1, 0, True, 0  # the line being read: its number, its offset, blank so far
    with path.open("rb") as source:
        while chunk := source.read(_CHUNK):
            pos = 0
            while (end := chunk.find(b"\n", pos)) >= 0:
                if not (blank and _blank(chunk, pos, end)):
                    yield SessionRef(path, line, start, at + end - start)
                line, start, blank, pos = line + 1, at + end + 1, True, end + 1
            blank = blank and _blank(chunk, pos, len(chunk))
            at += len(chunk)
    if not blank:  # a last line without its newline
        yield SessionRef(path, line, start, at - start)


def _blank(chunk: bytes, start: int, end: int) -> bool:
    """Whether chunk[start:end] is whitespace only; a session line starts with `{`, so its first bytes
    answer at once (the whole slice is looked at only when they are blank)."""
    if start >= end:
        return True
    head = chunk[start : min(end, start + 64)]
    return head.isspace() and (end - start <= 64 or chunk[start:end].isspace())
