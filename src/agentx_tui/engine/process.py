"""A child process tree that is always stopped: its own session and process group, a parent-death
signal, a bounded log buffer, and a stop that signals the whole group (SIGTERM, wait, SIGKILL).

vLLM's API server spawns an engine core and a worker in its process group; SIGKILL to the API server
alone leaves those running (docs/vllm.md), so every stop here goes to the group, and the group is
checked, not just the leader's PID.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from agentx_tui.procfs import group_members
from agentx_tui.redaction import redact

_PR_SET_PDEATHSIG = 1
_live: weakref.WeakSet[ManagedProcess] = weakref.WeakSet()


def _set_parent_death_signal() -> None:
    # Runs in the child between fork and exec: if agentx-tui dies (even by SIGKILL), the kernel
    # sends SIGTERM to the server, which then stops its own children.
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


class LogBuffer:
    """The last `maxlen` lines of a process's output, with secrets scrubbed as lines arrive."""

    def __init__(self, maxlen: int = 2000, secrets: Iterable[str] = ()) -> None:
        self._lines: deque[str] = deque(maxlen=maxlen)
        self._secrets = [s for s in secrets if s]
        self._lock = threading.Lock()
        self._total = 0

    def append(self, line: str) -> None:
        line = redact(line, self._secrets)
        with self._lock:
            self._lines.append(line)
            self._total += 1

    def tail(self, n: int = 20) -> list[str]:
        with self._lock:
            return list(self._lines)[-n:]

    @property
    def total(self) -> int:
        """Lines seen since start (a cursor for readers that want only the new ones)."""
        return self._total

    def since(self, cursor: int) -> tuple[list[str], int]:
        """Lines appended after `cursor` (as far as the buffer still holds them) and the new cursor."""
        with self._lock:
            new = min(self._total - cursor, len(self._lines))
            lines = list(self._lines)[len(self._lines) - new :] if new > 0 else []
            return lines, self._total


class ManagedProcess:
    """Start `argv` (never through a shell) as the leader of a new process group."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        log: LogBuffer | None = None,
        on_line: Callable[[str], None] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.log = log or LogBuffer()
        self._on_line = on_line
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            start_new_session=True,
            preexec_fn=_set_parent_death_signal,
        )
        self.pid = self._proc.pid
        self.pgid = self.pid
        _live.add(self)
        self._reader = threading.Thread(target=self._read, name=f"log-{self.pid}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for raw in self._proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.log.append(line)
            if self._on_line is not None:
                self._on_line(line)

    def poll(self) -> int | None:
        """The leader's exit code, or None while it runs."""
        return self._proc.poll()

    def group_alive(self) -> bool:
        try:
            os.killpg(self.pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        # A zombie leader still counts for killpg; reap it so the check reflects real processes.
        self._proc.poll()
        try:
            os.killpg(self.pgid, 0)
        except ProcessLookupError:
            return False
        return True

    def pids(self) -> set[int]:
        """Every process of the group (Linux /proc; empty elsewhere): whose GPUs are the server's."""
        return group_members(self.pgid)

    def stop(self, timeout_s: float = 10.0) -> None:
        """SIGTERM the whole group, wait up to `timeout_s`, then SIGKILL what is left. Idempotent."""
        self._signal_group(signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.group_alive():
            time.sleep(0.05)
        if self.group_alive():
            self._signal_group(signal.SIGKILL)
            deadline = time.monotonic() + 5.0
            while time.monotonic() < deadline and self.group_alive():
                time.sleep(0.05)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=1.0)
        self._reader.join(timeout=1.0)
        _live.discard(self)

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, sig)


@contextlib.contextmanager
def stopped_on_exit(timeout_s: float = 10.0) -> Iterator[None]:
    """On the way out of the block, stop every process started inside it that is still alive.

    The last line of defence of a run: whatever ends it (an error, a signal during start-up), nothing
    it launched survives it. Processes started before the block (another run's, in the same Python
    process) are not its to stop."""
    before = set(_live)
    try:
        yield
    finally:
        for proc in [p for p in list(_live) if p not in before]:
            proc.stop(timeout_s)
