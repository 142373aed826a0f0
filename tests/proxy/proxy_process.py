"""The proxy with a capture in a process of its own, stopped by a signal as a run is: `python -m
tests.proxy.proxy_process UPSTREAM DIR` prints its URL, and on SIGTERM or SIGHUP closes the proxy (the
run's signal path calls the same `close()`), then exits 128 + N."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from agentx_tui.proxy import LiveProxy


async def main(upstream: str, folder: Path) -> int:
    proxy = LiveProxy(upstream, capture_dir=folder, shutdown_grace_s=0.5)
    await proxy.start()
    print(proxy.url, flush=True)
    got: asyncio.Queue[int] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, got.put_nowait, int(sig))
    number = await got.get()
    await proxy.close()
    return 128 + number


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], Path(sys.argv[2]))))
