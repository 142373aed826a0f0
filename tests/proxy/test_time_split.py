"""Where the North Star's time went, for real agents' calls through `--proxy` (docs/metrics.md, "Where
the time went"): the proxy reads each answer by the load client's rule (measure/timing.py), so calls
whose answers have a known shape (tests/helpers/shaped_server.py: the first token after 0.4 s, then 19
gaps of 20 ms but one of 0.2 s) give the run the same first-token share, 0.4 / 0.96, and stall share,
0.18 / 0.56, as the load client measures."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from agentx_tui.proxy import LiveProxy
from tests.helpers.forgetful import Recorded
from tests.helpers.shaped_server import AnswerShape, ShapedServer

CALLS = 3
ABS = 0.03  # a busy machine's late timers, well inside what a wrong rule misses by (see the driver's test)


async def _call(http: aiohttp.ClientSession, url: str, session: str) -> None:
    body = {
        "model": "fake",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 20,
        "messages": [{"role": "user", "content": "run the failing tests and fix the parser"}],
    }
    async with http.post(f"{url}/v1/chat/completions", json=body, headers={"X-Session-ID": session}) as resp:
        assert resp.status == 200
        await resp.read()


async def test_a_proxied_calls_time_is_split_by_the_load_clients_rule() -> None:
    server = await ShapedServer(shape=AnswerShape.stalled()).start()
    recorded = Recorded()
    proxy = LiveProxy(server.url, sink=recorded)
    await proxy.start()
    try:
        async with aiohttp.ClientSession() as http:
            await asyncio.gather(*(_call(http, proxy.url, f"agent-{i}") for i in range(CALLS)))
    finally:
        await proxy.close()
        await server.close()
    assert len(recorded.done) == CALLS
    assert all(d.stalls >= 1 and d.output_tokens == 20 for d in recorded.done)
    run = recorded.run()
    assert run.north_star_ttft_share == pytest.approx(0.4 / 0.96, abs=ABS)
    assert run.decode_stall_share == pytest.approx(0.18 / 0.56, abs=ABS)
    assert run.output_tokens_p50 == 20
