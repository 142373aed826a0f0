"""`sessions pull --to DIR`: the pulled files in a folder of the user's, to keep beside a report.

Hard links to the cache's files where the cache is on the same file system (no second copy of a 2 GB
corpus, and they outlive a cache clean-up), copies elsewhere. The cache's files are never written; a
file already in DIR is replaced as a whole (written beside it, then renamed), never edited in place.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from agentx_tui.errors import UsageError


def keep_files(snapshot: Path, files: tuple[str, ...], to: Path) -> Path:
    """`files` (relative to `snapshot`) at the same places under `to`; returns `to`."""
    to = to.expanduser()
    if to.exists() and not to.is_dir():
        raise UsageError(f"--to {to} is a file, not a folder.", "Give a folder (it is made when missing).")
    try:
        for name in files:
            _keep(snapshot / name, to / name)
    except OSError as exc:
        where = exc.filename or to
        raise UsageError(f"Cannot put the corpus files in {to} ({exc.strerror or exc}: {where}).") from exc
    return to


def _keep(source: Path, target: Path) -> None:
    blob = source.resolve()  # the cache's snapshot entries are links to its blobs
    if target.exists() and target.samefile(blob):
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    try:
        os.link(blob, partial)
    except OSError:  # another file system, or one without hard links
        shutil.copyfile(blob, partial)
    os.replace(partial, target)
