"""Fixtures for the proxy's tests: a scriptable upstream in the test's loop, and the built-in simulator
in a subprocess (real HTTP on loopback)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator

import pytest

from tests.proxy.upstream import Upstream


@pytest.fixture
async def upstream() -> AsyncIterator[Upstream]:
    server = await Upstream().start()
    yield server
    await server.close()


@pytest.fixture(scope="session")
def sim_url() -> Iterator[str]:
    """`python -m agentx_tui.sim` on a free loopback port, for the whole session."""
    read_fd, write_fd = os.pipe()
    cmd = [sys.executable, "-m", "agentx_tui.sim", "--port", "0", "--ready-fd", str(write_fd)]
    proc = subprocess.Popen(cmd, pass_fds=(write_fd,), stderr=subprocess.PIPE)
    os.close(write_fd)
    try:
        ready, _, _ = select.select([read_fd], [], [], 20)
        line = os.read(read_fd, 64).decode() if ready else ""
        if not line.strip().isdigit():
            proc.kill()
            pytest.fail("the simulator did not start")
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
