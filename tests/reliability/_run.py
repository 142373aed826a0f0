"""Running agentx-tui (and the simulator) as real processes, the way a user or a CI job does.

`CliRun` starts `python -m agentx_tui ...` in its own session, timestamps every stdout line as it
arrives (so tests can measure tick gaps and how fast a fault shows), sends stderr to a file, and on
exit from its context kills whatever is left of it and of the servers it started.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import TracebackType

import httpx

from tests.helpers.procs import alive, descendants, wait_gone

# A headless tick row starts with the elapsed time, e.g. "   00:07      4 ...".
TICK_ROW = re.compile(r"^\s*\d+:\d\d(:\d\d)?\s+\d+\s")
KEY_VARS = ("AGENTX_API_KEY", "VLLM_API_KEY", "OPENAI_API_KEY")

SMALL_WORKLOAD = """\
description: a short agent loop that fits any small model
shared_prefix_tokens: 200
unique_prefix_tokens: 20
first_message_tokens: 40
steps: 3
output_tokens: 16
tool_result_tokens: 60
tool_latency_s: 0.05
"""


def clean_env(**extra: str) -> dict[str, str]:
    """The test's environment without any API key a developer may have set, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    env["NO_COLOR"] = "1"
    env.update(extra)
    return env


def write_workload(folder: Path, text: str = SMALL_WORKLOAD, name: str = "small.yaml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


class CliRun:
    def __init__(
        self,
        *args: str,
        stderr_path: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.args = args
        self.stderr_path = stderr_path
        self._stderr = stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentx_tui", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=dict(env) if env is not None else clean_env(),
            cwd=cwd,
            start_new_session=True,  # like a terminal's job: signals to it reach no server we launch
        )
        self.pid = self.proc.pid
        self.lines: list[tuple[float, str]] = []
        self._cond = threading.Condition()
        self._hang_up = False
        self._closed = False
        self.seen_pids: set[int] = set()
        self._started: dict[int, int] = {}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            with self._cond:
                self.lines.append((time.monotonic(), raw.decode("utf-8", "replace").rstrip("\n")))
                self._cond.notify_all()
                if self._hang_up:  # the terminal is gone: nothing reads the tool's output any more
                    self.proc.stdout.close()
                    break
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # ---- observing ----------------------------------------------------------------------------
    @property
    def stderr(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    @property
    def stdout(self) -> str:
        with self._cond:
            return "\n".join(line for _, line in self.lines)

    def ticks(self) -> list[tuple[float, str]]:
        with self._cond:
            return [(t, line) for t, line in self.lines if TICK_ROW.match(line)]

    def wait_for(self, pred: Callable[[str], bool], timeout_s: float, *, after: float = 0.0) -> tuple[float, str]:
        """The first stdout line after monotonic time `after` that satisfies `pred`."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                for t, line in self.lines:
                    if t >= after and pred(line):
                        return t, line
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    break
                self._cond.wait(min(left, 0.5))
                self.remember_tree()
        raise AssertionError(
            f"no such line within {timeout_s} s (exit {self.proc.poll()}).\nstdout:\n{self.stdout[-3000:]}"
            f"\nstderr:\n{self.stderr[-3000:]}"
        )

    def wait_ticks(self, n: int, timeout_s: float, pred: Callable[[str], bool] = lambda _: True) -> None:
        """Wait until `n` tick rows satisfying `pred` have been printed."""
        deadline = time.monotonic() + timeout_s
        after = 0.0
        for _ in range(n):
            t, _line = self.wait_for(
                lambda s: bool(TICK_ROW.match(s)) and pred(s), deadline - time.monotonic(), after=after
            )
            after = t + 1e-6

    def remember_tree(self) -> set[int]:
        """Every process below agentx-tui seen so far (a killed parent's orphans leave its tree)."""
        with contextlib.suppress(OSError):
            for pid in descendants(self.pid) - self.seen_pids:
                started = _start_time(pid)
                if started is not None:
                    self.seen_pids.add(pid)
                    self._started[pid] = started
        return set(self.seen_pids)

    # ---- acting -------------------------------------------------------------------------------
    def signal(self, sig: signal.Signals) -> None:
        self.remember_tree()
        os.kill(self.pid, sig)

    def hang_up_terminal(self, timeout_s: float = 10.0) -> None:
        """Stop reading stdout and close it (an SSH drop), after the next line the tool prints."""
        with self._cond:
            self._hang_up = True
            deadline = time.monotonic() + timeout_s
            while not self._closed and time.monotonic() < deadline:
                self._cond.wait(0.2)
            assert self._closed, "the tool printed nothing more to hang up on"

    def wait(self, timeout_s: float) -> int:
        try:
            return self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(
                f"agentx-tui did not exit within {timeout_s} s.\nstdout:\n{self.stdout[-2000:]}"
                f"\nstderr:\n{self.stderr[-2000:]}"
            ) from exc

    def cleanup(self) -> None:
        """Kill what is left of the tool and everything it started (a failed test leaves nothing)."""
        tree = self.remember_tree()
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
        for pid in alive(tree):
            if _start_time(pid) == self._started.get(pid):  # the same process, not a reused PID
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)
        self._reader.join(5)
        self._stderr.close()

    def __enter__(self) -> CliRun:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.cleanup()


def assert_gone(pids: set[int], timeout_s: float, what: str) -> None:
    """Every process of `pids` ends within `timeout_s`; else fail naming the survivors."""
    left = wait_gone(pids, timeout_s)
    if left:
        raise AssertionError(f"{what}: still running after {timeout_s} s:\n" + "\n".join(map(describe, sorted(left))))


def describe(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return f"  {pid}: gone"
    return f"  {pid}: state {fields[0]} ppid {fields[1]} pgid {fields[2]}: {cmdline[:160]}"


def _start_time(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(text[text.rindex(")") + 2 :].split()[19])


def max_gap(ticks: list[tuple[float, str]]) -> float:
    return max((b - a for (a, _), (b, _) in itertools.pairwise(ticks)), default=0.0)


@contextlib.contextmanager
def sim_server(port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`agentx-tui sim --port PORT` in its own session, healthy on return, killed on exit."""
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentx_tui", "sim", "--port", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", 30, proc)
        yield proc
    finally:
        if proc.poll() is None:  # not yet reaped: its PID is still ours to signal
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def wait_healthy(url: str, timeout_s: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the server at {url} exited with {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return
        time.sleep(0.1)
    raise AssertionError(f"{url} was not healthy within {timeout_s} s")


def listening_addresses(pid: int) -> set[tuple[str, int]]:
    """(IPv4 address, port) of every TCP socket `pid` listens on, from /proc (no tools needed)."""
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    found = set()
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
                fields = row.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == "0A" and inode in inodes:  # 0A = LISTEN
                    addr, port = local.split(":")
                    found.add((_address(addr), int(port, 16)))
    return found


def _address(hex_addr: str) -> str:
    if len(hex_addr) == 8:  # IPv4, little-endian
        return ".".join(str(int(hex_addr[i : i + 2], 16)) for i in (6, 4, 2, 0))
    return "ipv6:" + hex_addr


def completed_requests(record: Path) -> int:
    """Requests completed so far, from the last whole line of a recording being written."""
    lines = [line for line in record.read_text().splitlines() if line.strip()]
    for line in reversed(lines[1:]):
        try:
            snap = json.loads(line)
        except ValueError:
            continue
        client = snap.get("client") or {}
        return int((client.get("totals") or {}).get("requests_completed", 0))
    return 0
