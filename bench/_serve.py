"""Start a benchmark's server in a subprocess that binds a free port and writes it to a pipe."""

from __future__ import annotations

import os
import select
import subprocess
from collections.abc import Callable, Sequence


def start_reporting_port(
    make_cmd: Callable[[int], Sequence[str]], what: str, *, preexec_fn: Callable[[], None] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """Run `make_cmd(write_fd)`, whose process writes its port number to `write_fd` once it listens;
    return the process and its loopback URL. A server that says nothing within 30 s ends the bench."""
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(list(make_cmd(write_fd)), pass_fds=(write_fd,), preexec_fn=preexec_fn)
    os.close(write_fd)
    ready, _, _ = select.select([read_fd], [], [], 30)
    port = os.read(read_fd, 32).decode().strip() if ready else ""
    os.close(read_fd)
    if not port.isdigit():
        proc.kill()
        raise SystemExit(f"{what} did not start")
    return proc, f"http://127.0.0.1:{port}"
