"""Through the proxy, an agent loop on the official `openai` client gets what it gets directly: the same
streamed content, byte for byte, and the same usage (the built-in simulator, real HTTP on loopback)."""

from __future__ import annotations

import uuid
from typing import Any

from openai import AsyncOpenAI

from agentx_tui.proxy import LiveProxy
from tests.proxy.calls import Sink

STEPS = 4


async def agent_loop(base_url: str, marker: str) -> list[dict[str, Any]]:
    """A coding-agent-like loop: the context grows by the reply and a tool result every step."""
    client = AsyncOpenAI(base_url=base_url + "/v1", api_key="sk-sim-key-000111")
    model = (await client.models.list()).data[0].id
    messages: list[Any] = [
        {"role": "system", "content": f"{marker} You are a careful coding agent. " * 20},
        {"role": "user", "content": "Find and fix the failing test in the parser module."},
    ]
    steps: list[dict[str, Any]] = []
    for step in range(STEPS):
        pieces: list[str] = []
        usage = None
        stream = await client.chat.completions.create(
            model=model,
            messages=messages,
            max_tokens=24,
            seed=7 + step,
            stream=True,
            stream_options={"include_usage": True},
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                pieces.append(chunk.choices[0].delta.content)
            if chunk.usage is not None:
                usage = chunk.usage.model_dump()
        text = "".join(pieces)
        messages += [
            {"role": "assistant", "content": text},
            {"role": "user", "content": f"Tool result {step}: " + "line of output " * 30},
        ]
        # The content as bytes: the simulator groups tokens into events by timing, so only the joined
        # text, not where its events split it, can be compared between two runs.
        steps.append({"content": text.encode(), "usage": usage})
    whole = await client.chat.completions.create(model=model, messages=messages, max_tokens=16, seed=99)
    content = (whole.choices[0].message.content or "").encode()
    steps.append({"content": content, "usage": whole.usage.model_dump() if whole.usage else None})
    await client.close()
    return steps


def _marker() -> str:
    return "".join(chr(ord("a") + int(c, 16)) for c in uuid.uuid4().hex[:10])


async def test_an_openai_agent_gets_the_same_content_and_usage_through_the_proxy(sim_url: str) -> None:
    sink = Sink()
    proxy = LiveProxy(sim_url, sink=sink)
    await proxy.start()
    try:
        # Two markers of ten letters (one token each): the runs send prompts of the same lengths, and
        # share no cache.
        direct = await agent_loop(sim_url, _marker())
        proxied = await agent_loop(proxy.url, _marker())
    finally:
        await proxy.close()
    assert proxied == direct
    assert all(step["content"] and step["usage"]["completion_tokens"] for step in direct)
    assert direct[-1]["usage"]["prompt_tokens_details"]["cached_tokens"] > 0  # the loop's own prefix hits
    figures = proxy.figures()
    assert figures.proxied_requests == STEPS + 1 and figures.calls_completed == STEPS + 1
    assert figures.proxied_sessions == 1 and figures.upstream_errors == 0  # one inferred session
    assert [d.prompt_tokens for d in sink.added] == [s["usage"]["prompt_tokens"] for s in proxied]
    assert [d.cached_tokens for d in sink.added] == [
        s["usage"]["prompt_tokens_details"]["cached_tokens"] for s in proxied
    ]
    assert all(d.ttft_s is not None for d in sink.added[:STEPS]) and sink.added[-1].ttft_s is None
