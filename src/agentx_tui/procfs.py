"""Processes and memory as Linux's /proc tells them: a launched server's process group (engine), the runs
a page server started (web), and this machine's DRAM (engine: the server's offload budget). Empty, or
None, where there is no /proc."""

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


def mem_total_bytes(path: str = "/proc/meminfo") -> int | None:
    """This machine's DRAM as the kernel counts it (`MemTotal`, in bytes); None where /proc does not say."""
    with contextlib.suppress(OSError, ValueError), open(path, encoding="ascii", errors="replace") as fh:
        for line in fh:
            name, _, rest = line.partition(":")
            if name == "MemTotal":
                value, *unit = rest.split()
                return int(value) * (1024 if unit == ["kB"] else 1)  # the kernel's kB are KiB
    return None
