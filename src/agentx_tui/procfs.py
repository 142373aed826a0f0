"""Processes as Linux's /proc tells them: a launched server's process group (engine) and the runs a page
server started (web). Empty where there is no /proc."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


def _stats() -> Iterator[tuple[int, list[bytes]]]:
    """(pid, the fields of /proc/PID/stat after the command name: state, parent, group, …) of every process."""
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    # The command name is in parentheses and may hold spaces: split after it.
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            yield int(entry.name), fields


def group_members(pgid: int) -> set[int]:
    """Every process of the process group `pgid`."""
    return {pid for pid, fields in _stats() if len(fields) > 2 and int(fields[2]) == pgid}


def child_pids(parent: int) -> set[int]:
    """Live (non-zombie) processes whose parent is `parent`."""
    return {pid for pid, fields in _stats() if len(fields) > 1 and fields[0] != b"Z" and int(fields[1]) == parent}
