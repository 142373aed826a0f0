"""Session files written: a `SessionFile` → its JSON bytes (compact, fields in the schema's order, the
ones a file leaves out when unknown left out), and to disk all or nothing, owner-only (docs/capture.md)."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from agentx_tui.sessionfile.schema import SessionFile


def session_file_bytes(session: SessionFile) -> bytes:
    return session.model_dump_json().encode()


def write_session_file(path: Path, session: SessionFile) -> None:
    """`session` at `path`, all or nothing: a temporary file (mode 0600, not `*.json`, so a replay never
    reads it) in the same folder, synced, then renamed over `path`. `OSError` when it cannot be."""
    data = session_file_bytes(session)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself survives a crash once the folder is synced
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
