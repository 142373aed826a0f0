"""Process-tree inspection for tests: a test must check the whole tree, not just one PID."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path


def _stat(pid: int) -> tuple[int, int] | None:
    """(ppid, pgid) of a live, non-zombie process, or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    if fields[0] == "Z":
        return None
    return int(fields[1]), int(fields[2])


def all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def descendants(pid: int) -> set[int]:
    parents: dict[int, list[int]] = {}
    for p in all_pids():
        st = _stat(p)
        if st:
            parents.setdefault(st[0], []).append(p)
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def in_group(pgid: int) -> set[int]:
    return {p for p in all_pids() if (st := _stat(p)) and st[1] == pgid}


def alive(pids: set[int]) -> set[int]:
    return {p for p in pids if _stat(p) is not None}


def wait_gone(pids: set[int], timeout_s: float = 20.0) -> set[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        left = alive(pids)
        if not left:
            return set()
        time.sleep(0.1)
    return alive(pids)


def kill_left(pids: set[int]) -> None:
    """SIGKILL whatever of `pids` still runs: a test's last word, so that none of its processes outlives it
    (nothing is left when the test passed)."""
    for pid in alive(pids):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
