"""Every miss explained, for a real agent through `--proxy` (docs/capture.md, "Where the prefix went"): an
agent loop on the official `openai` client, against a server whose cache forgets a session's prefix once
it has been idle longer than T, shows a retention curve of 1 below T and 0 above it, and an evicted
share equal to the share of reused tokens sent after an idle gap longer than T. Each call's split is
counted once the server has tokenized its prompt, after the call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from openai import AsyncOpenAI

from agentx_tui.proxy import LiveProxy
from tests.helpers.forgetful import FORGET_S, LONG_S, SERVER_BLOCK, SHORT_S, Recorded, assert_the_cliff
from tests.load.fake_openai import FakeServer

THINKS = (SHORT_S, LONG_S, SHORT_S, LONG_S, SHORT_S)  # between the agent's six calls


async def _agent(base_url: str, name: str) -> list[int]:
    """A coding agent whose context grows every step, idle between calls as `THINKS` says; the server's
    cached tokens of each call."""
    client = AsyncOpenAI(base_url=base_url + "/v1", api_key="sk-forgetful-000")
    messages: list[Any] = [{"role": "system", "content": f"{name} fixes failing tests in the parser module. " * 12}]
    cached = []
    for step in range(len(THINKS) + 1):
        messages.append({"role": "user", "content": f"tool output {step} " + "parser line failing test " * 25})
        stream = await client.chat.completions.create(
            model="fake",
            messages=messages,
            max_tokens=6,
            stream=True,
            stream_options={"include_usage": True},
            extra_headers={"X-Session-ID": name},
        )
        text = []
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                text.append(chunk.choices[0].delta.content)
            if chunk.usage is not None and chunk.usage.prompt_tokens_details is not None:
                cached.append(chunk.usage.prompt_tokens_details.cached_tokens or 0)
        messages.append({"role": "assistant", "content": "".join(text)})
        if step < len(THINKS):
            await asyncio.sleep(THINKS[step])
    await client.close()
    return cached


async def test_an_openai_agent_through_the_proxy_shows_a_forgetful_caches_cliff_exactly() -> None:
    server = await FakeServer(block_size=SERVER_BLOCK, forget_after_s=FORGET_S, max_model_len=16_384).start()
    recorded = Recorded()
    proxy = LiveProxy(server.url, sink=recorded, block_size=SERVER_BLOCK)
    await proxy.start()
    try:
        cached = await asyncio.gather(_agent(proxy.url, "agent-a"), _agent(proxy.url, "agent-b"))
    finally:
        await proxy.close()  # waits for the prompts still being tokenized: every call is counted
        await server.close()
    done = recorded.done
    assert len(done) == 12 and sorted(d.cached_tokens or 0 for d in done) == sorted([*cached[0], *cached[1]])
    assert all(d.step == 1 for d in done if d.idle_s is None)  # only a session's first call has no idle time
    run = recorded.run()
    curve = assert_the_cliff(done, run)
    assert (curve[0.0].requests, curve[2.0].requests) == (6, 4)  # three short and two long gaps an agent
    # Each users-table row has its own session's share: the two agents' prompts are alike, so each row's
    # is the run's.
    rows = {row.name: row for row in proxy.rows()}
    for name in ("agent-a", "agent-b"):
        assert rows[name].prefix_hit_share == pytest.approx(1 - run.prefix_evicted_share, abs=1e-12)
