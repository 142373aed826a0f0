"""Client CPU per streamed SSE event: the load client's reader (`wire.StreamPool`) against aiohttp.

    .venv/bin/python bench/stream_reader.py [--streams 1,16,128,512] [--tokens 140] [--seconds 4] [--repeat 2]

Both read the same answers from the fast local streaming server (bench/_serve.py, its own process,
pinned to another core where the machine has one), closed loop, N streams in flight, under uvloop:

- **aiohttp**: the reader the load client used before, kept here as the reference: `ClientSession.post`
  on a `TCPConnector(limit=0)`, then `await resp.content.readany()` per network read, each read fed to
  the same `SseScanner`;
- **wire**: `stream_chat` on a `StreamPool`, as the sender calls it (the read parsed by httptools in the
  protocol's callback, the body fed to the scanner there; the result built as the sender gets it).

The server paces tokens like decode steps (each open stream gets its next token every step; the step
is N / `--rate`, at least 5 ms, so one stream reads 200 tokens/s and many share `--rate` tokens/s). CPU
is this process's user + system time over each window; the two readers alternate, `--repeat` times, so
drift on a shared machine hits both. Printed per stream count: µs of CPU per event and ms per answer,
each reader's tokens/s (both must keep up for the comparison to hold) and the ratio wire / aiohttp.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _serve import MODEL, run_fast, start_stream_server
from agentx_tui.load.sending.streaming import stream_chat
from agentx_tui.load.sending.wire import StreamPool
from agentx_tui.measure import SseScanner

CHAT = "/v1/chat/completions"
Reader = Callable[[bytes], Awaitable[int]]


def _cpu() -> float:
    return time.process_time()  # user + system of the whole process, at ns resolution (os.times ticks 10 ms)


def _body(tokens: int) -> bytes:
    words = " ".join(["the agent reads a file"] * 200)
    return json.dumps(
        {"model": MODEL, "stream": True, "stream_options": {"include_usage": True}, "max_tokens": tokens,
         "messages": [{"role": "user", "content": words}]}
    ).encode()  # fmt: skip


async def _window(read: Reader, body: bytes, streams: int, seconds: float) -> tuple[float, int, int, float]:
    """CPU seconds, events, answers and wall seconds of `streams` closed loops for about `seconds`."""
    import asyncio

    await asyncio.gather(*(read(body) for _ in range(streams)))  # connections open, caches warm
    stop = time.monotonic() + seconds
    events = answers = 0

    async def loop() -> None:
        nonlocal events, answers
        while time.monotonic() < stop:
            got = await read(body)  # (not `events += await ...`: that reads `events` before the wait)
            events += got
            answers += 1

    cpu0, wall0 = _cpu(), time.monotonic()
    await asyncio.gather(*(loop() for _ in range(streams)))
    return _cpu() - cpu0, events, answers, time.monotonic() - wall0


async def _measure(url: str, streams: int, args: argparse.Namespace) -> dict[str, list[tuple[float, int, int, float]]]:
    body = _body(args.tokens)
    out: dict[str, list[tuple[float, int, int, float]]] = {"aiohttp": [], "wire": []}
    headers = {"Content-Type": "application/json"}
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), headers=headers) as http,
        StreamPool(url, headers=headers) as pool,
    ):

        async def via_aiohttp(body: bytes) -> int:
            scan = SseScanner()
            async with http.post(url + CHAT, data=body) as resp:
                content = resp.content
                while data := await content.readany():
                    scan.feed(data, time.monotonic())
            return scan.events

        async def via_wire(body: bytes) -> int:
            result = await stream_chat(pool, CHAT, body)
            return result.events if result.error is None else 0

        for _ in range(args.repeat):
            out["aiohttp"].append(await _window(via_aiohttp, body, streams, args.seconds))
            out["wire"].append(await _window(via_wire, body, streams, args.seconds))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", default="1,16,128,512")
    parser.add_argument("--tokens", type=int, default=140, help="tokens per answer (the replay's ~140)")
    parser.add_argument("--rate", type=float, default=8000.0, help="the server's aggregate tokens/s")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    two_cores = (os.cpu_count() or 1) > 1
    print(f"{args.tokens} tokens per answer; CPU of this process; each reader {args.repeat} x {args.seconds:g} s")
    print(f"{'streams':>7} {'reader':>8} {'us/event':>9} {'ms/answer':>9} {'tok/s':>8} {'wire/aiohttp':>12}")
    for streams in (int(s) for s in args.streams.split(",")):
        server = start_stream_server(max(0.005, streams / args.rate), cpu=1 if two_cores else None)
        if two_cores:
            os.sched_setaffinity(0, {0})
        try:
            results: dict[str, list[tuple[float, int, int, float]]] = {}

            async def run(streams: int = streams, url: str = server.url, into: dict = results) -> None:  # type: ignore[type-arg]
                into.update(await _measure(url, streams, args))

            run_fast(run())
        finally:
            server.stop()
        per_event = {}
        for reader, runs in results.items():
            cpu, events, answers, wall = (sum(r[i] for r in runs) for i in range(4))
            per_event[reader] = cpu / max(events, 1)
            spread = [r[0] / max(r[1], 1) * 1e6 for r in runs]
            print(
                f"{streams:>7} {reader:>8} {per_event[reader] * 1e6:>9.1f} {cpu / max(answers, 1) * 1e3:>9.2f} "
                f"{events / wall:>8,.0f}"
                + (f" {per_event['wire'] / per_event['aiohttp']:>11.2f}x" if reader == "wire" else "")
                + f"   (runs: {', '.join(f'{s:.1f}' for s in spread)}; sd {statistics.pstdev(spread):.1f})"
            )


if __name__ == "__main__":
    main()
