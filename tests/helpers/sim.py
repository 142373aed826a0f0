"""The built-in simulated engine as a subprocess of a test: started on a free loopback port, its URL
yielded once it listens, stopped (SIGTERM, then SIGKILL) however the test ends."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence

import pytest


@contextlib.contextmanager
def sim_server(*args: str, program: Sequence[str] = ("-m", "agentx_tui.sim"), start_s: float = 20) -> Iterator[str]:
    """`python PROGRAM --port 0 ARGS…` (the simulator, or a script that runs it), its base URL once it
    says its port on the ready pipe; a simulator that does not start within `start_s` fails the test
    with the end of its stderr."""
    read_fd, write_fd = os.pipe()
    cmd = [sys.executable, *program, "--port", "0", "--ready-fd", str(write_fd), *args]
    proc = subprocess.Popen(cmd, pass_fds=(write_fd,), stderr=subprocess.PIPE)
    os.close(write_fd)
    try:
        ready, _, _ = select.select([read_fd], [], [], start_s)
        line = os.read(read_fd, 64).decode() if ready else ""
        if not line.strip().isdigit():
            proc.kill()
            _, err = proc.communicate(timeout=5)
            pytest.fail(f"the simulator did not start: {err.decode(errors='replace')[-2000:]}")
        yield f"http://127.0.0.1:{int(line)}"
    finally:
        os.close(read_fd)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr:
            proc.stderr.close()
