"""Fixtures for the simulator tests: a real sim server in a subprocess on a free loopback port."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

SIM_MODEL = "meta-llama/Llama-3.1-8B-Instruct"


@contextlib.contextmanager
def run_sim(*args: str) -> Iterator[str]:
    """Start ``python -m agentx_tui.sim --port 0`` and yield its base URL once it listens."""
    read_fd, write_fd = os.pipe()
    cmd = [sys.executable, "-m", "agentx_tui.sim", "--port", "0", "--ready-fd", str(write_fd), *args]
    proc = subprocess.Popen(cmd, pass_fds=(write_fd,), stderr=subprocess.PIPE)
    os.close(write_fd)
    try:
        ready, _, _ = select.select([read_fd], [], [], 20)
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


@pytest.fixture(scope="session")
def sim_url() -> Iterator[str]:
    with run_sim() as url:
        yield url


@pytest.fixture(scope="session")
def sim_pressure_url() -> Iterator[str]:
    """A simulator with a tiny KV cache (48 blocks of 16 tokens) and 16 sequences at most."""
    with run_sim("--num-gpu-blocks-override", "48", "--max-num-seqs", "16") as url:
        yield url
