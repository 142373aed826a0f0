from __future__ import annotations

import asyncio
import json
import time

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from agentx_tui.load.sending.streaming import StallWatch, stream_chat
from agentx_tui.load.sending.wire import StreamPool
from agentx_tui.measure import classify
from tests.load.fake_openai import FakeServer

pytestmark = pytest.mark.both_loops  # the app streams on uvloop; asyncio's loop is the reference

CHAT = "/v1/chat/completions"
BODY = json.dumps(
    {"model": "fake", "stream": True, "max_tokens": 12, "messages": [{"role": "user", "content": "hi there"}]}
).encode()


async def test_stream_counts_content_usage_and_timing(fake: FakeServer) -> None:
    fake.token_delay_s = 0.005  # tokens apart in time, as from a real server: one read each
    async with StreamPool(fake.url) as pool:
        res = await stream_chat(pool, CHAT, BODY)
    assert res.error is None and res.status == 200
    assert res.events == 12 and res.output_tokens == 12
    assert (res.prompt_tokens == 2 + 2 + 1 + 2 and res.cached_tokens == 4) or res.cached_tokens == 0
    assert res.first_at is not None and res.last_at is not None and res.first_at <= res.last_at
    # Every token after the first read carries ITL weight (the first read is the TTFT).
    assert len(res.read_times) > 1
    assert sum(w for _, w in res.itl_samples()) == 12 - res.read_events[0]


async def test_multi_token_chunks_weight_the_itl_by_tokens(fake: FakeServer) -> None:
    fake.chunk_tokens, fake.token_delay_s = 4, 0.01
    async with StreamPool(fake.url) as pool:
        res = await stream_chat(pool, CHAT, BODY)
    assert res.events == 3 and res.output_tokens == 12
    samples = res.itl_samples()
    assert sum(w for _, w in samples) == 8  # the tokens after the first chunk
    assert all(g > 0.001 for g, _ in samples)


async def test_malformed_lines_are_counted_not_fatal(fake: FakeServer) -> None:
    fake.malformed = True
    async with StreamPool(fake.url) as pool:
        res = await stream_chat(pool, CHAT, BODY)
    assert res.error is None and res.malformed == 2 and res.output_tokens == 12


async def test_http_errors_and_dropped_connections_are_classified(fake: FakeServer) -> None:
    fake.plan = [429, 503, 400, 500]
    async with StreamPool(fake.url) as pool:
        kinds = [(await stream_chat(pool, CHAT, BODY)).error for _ in range(4)]
        fake.drop_after = 3
        dropped = await stream_chat(pool, CHAT, BODY)
    assert kinds == ["rate_limited", "unavailable", "http_400", "http_500"]
    assert dropped.error == "connection"
    assert classify(400, "This model's maximum context length is 4096 tokens") == "context_overflow"


async def test_events_split_across_reads_are_reassembled() -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        await resp.prepare(request)
        data = (
            b"".join(b'data: {"choices":[{"delta":{"content":"x%d"}}]}\n\n' % i for i in range(5))
            + b'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5}}\n\ndata: [DONE]\n\n'
        )
        for i in range(0, len(data), 7):
            await resp.write(data[i : i + 7])
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_post("/c", handler)
    server = TestServer(app)
    await server.start_server()
    try:
        async with StreamPool(str(server.make_url(""))) as pool:
            res = await stream_chat(pool, "/c", b"{}", want_text=True)
    finally:
        await server.close()
    assert res.events == 5 and res.output_tokens == 5 and res.malformed == 0
    assert res.text == "x0x1x2x3x4"


async def test_a_silent_stream_is_ended_by_the_stall_watch_as_a_timeout() -> None:
    stall = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        await resp.prepare(request)
        await resp.write(b'data: {"choices":[{"delta":{"content":"x"}}]}\n\n')
        await stall.wait()  # then nothing more: a hung server
        return resp

    app = web.Application()
    app.router.add_post("/c", handler)
    server = TestServer(app)
    await server.start_server()
    watch = StallWatch(idle_s=0.2, every_s=0.05)
    try:
        async with StreamPool(str(server.make_url(""))) as pool:
            started = time.monotonic()
            res = await stream_chat(pool, "/c", b"{}", watch=watch)
            waited = time.monotonic() - started
    finally:
        stall.set()
        await watch.close()
        await server.close()
    assert res.error == "timeout" and res.events == 1
    assert 0.2 <= waited < 5  # the watch's idle time


async def test_the_stall_watch_leaves_slow_but_live_streams_alone(fake: FakeServer) -> None:
    fake.token_delay_s = 0.05  # 12 tokens over 0.6 s, each gap well inside the watch's idle time
    watch = StallWatch(idle_s=0.3, every_s=0.02)
    async with StreamPool(fake.url) as pool:
        res = await stream_chat(pool, CHAT, BODY, watch=watch)
    assert watch.sweep(time.monotonic() + 3600) == 0  # a finished stream is no longer watched
    await watch.close()
    assert res.error is None and res.events == 12
