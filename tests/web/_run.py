"""`agentx-tui --web` as a user starts it, on the built-in simulated engine, for the tests that open its
page (with aiohttp's websocket client, or a real browser): start it, read what its page's run did
from the run itself (its `--record` file and report: the page's terminal is a canvas), check the
process tree."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helpers.procs import descendants, kill_left

Snapshot = dict[str, Any]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class WebRun:
    proc: subprocess.Popen[str]
    port: int
    record: Path
    report: Path
    seen: set[int] = field(default_factory=set)  # every process of the tree seen so far

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def tree(self) -> set[int]:
        """The serving process's descendants now (remembered in `seen`)."""
        found = descendants(self.proc.pid)
        self.seen |= found
        return found

    def snapshots(self) -> list[Snapshot]:
        """The page's run's snapshots so far (the first line is the recording's header)."""
        if not self.record.exists():
            return []
        out: list[Snapshot] = []
        for line in self.record.read_text(encoding="utf-8").splitlines()[1:]:
            with contextlib.suppress(ValueError):  # the last line may be half written
                out.append(json.loads(line))
        return out

    def wait_snapshots(
        self, ok: Callable[[list[Snapshot]], bool], what: str, timeout_s: float = 30.0
    ) -> list[Snapshot]:
        deadline = time.monotonic() + timeout_s
        while True:
            self.tree()
            snaps = self.snapshots()
            if ok(snaps):
                return snaps
            assert self.proc.poll() is None, f"the server exited ({self.proc.returncode}) waiting for {what}"
            assert time.monotonic() < deadline, f"no {what} in {timeout_s:g} s ({len(snaps)} snapshots)"
            time.sleep(0.1)


@contextlib.contextmanager
def web_run(tmp_path: Path, *flags: str, env: dict[str, str] | None = None) -> Iterator[WebRun]:
    """`agentx-tui --web 127.0.0.1:PORT --record … --report … --interval 0.5 -u 2 FLAGS` in tmp_path."""
    port = free_port()
    record, report = tmp_path / "run.jsonl", tmp_path / "report.json"
    argv = [sys.executable, "-m", "agentx_tui", "--web", f"127.0.0.1:{port}", "--record", str(record)]
    argv += ["--report", str(report), "--interval", "0.5", "-u", "2", *flags]
    proc = subprocess.Popen(
        argv,
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    run = WebRun(proc, port, record, report)
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline, "agentx-tui --web did not listen"
            time.sleep(0.1)
        yield run
    finally:
        if proc.poll() is None:
            run.tree()
            proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        kill_left(run.seen)  # never leave a test's processes behind, whatever failed


def generated(snap: Snapshot) -> float:
    """The simulated server's generated tokens so far: a live figure that grows as the run runs."""
    return float(snap["aggregate"]["totals"]["generation_tokens"] or 0)


def figure_grows(snaps: list[Snapshot]) -> bool:
    return len(snaps) >= 3 and generated(snaps[-1]) > generated(snaps[len(snaps) // 2]) > 0


def users(snaps: list[Snapshot]) -> int | None:
    return int(snaps[-1]["run"]["users"]) if snaps else None


def cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    return ""


def environ(pid: int) -> dict[str, str]:
    with contextlib.suppress(OSError):
        raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        return dict(item.decode().split("=", 1) for item in raw if b"=" in item)
    return {}
