"""`python -m tests.helpers.first_request ARGS...`: runs `agentx-tui ARGS` in this process and prints, as its
last line, one JSON object: seconds from this process's start to the first request sent, the peak
resident memory (MB) of this process, and the exit code.

The peak is the kernel's high-water mark of this process's own memory (`VmHWM`), not `getrusage`'s
`ru_maxrss`: on Linux that one survives `exec`, so a process started by a big one (pytest after a
few hundred tests) reports its parent's size."""

from __future__ import annotations

import time

STARTED = time.monotonic()

import json  # noqa: E402  (after the clock starts: the imports count)
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from agentx_tui.load.sending import sender  # noqa: E402


def main(argv: list[str]) -> int:
    first: list[float] = []
    send = sender.RequestSender.send

    async def timed(self: sender.RequestSender, *args: Any, **kwargs: Any) -> Any:
        if not first:
            first.append(time.monotonic() - STARTED)
        return await send(self, *args, **kwargs)

    sender.RequestSender.send = timed  # type: ignore[method-assign]
    from agentx_tui.cli import main as cli

    code = cli(argv)
    status = Path("/proc/self/status").read_text().splitlines()
    peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    found = {"exit_code": code, "first_request_s": first[0] if first else None, "peak_rss_mb": peak_kb / 1024}
    print(json.dumps(found), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
