"""A small coding agent on the official `openai` client, for the capture round trip: its context grows
every step (its reply and a tool result are appended), and one step delegates to a sub-agent that
shares its system prompt, named by the session headers as an SDK agent would name it. Sized for the
tiny model's 4,096-token context."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from openai import AsyncOpenAI

WORDS = [
    "parser",
    "module",
    "test",
    "failing",
    "index",
    "token",
    "buffer",
    "read",
    "write",
    "file",
    "path",
    "config",
    "cache",
    "request",
    "server",
    "client",
    "stream",
    "thread",
    "queue",
    "lock",
    "value",
    "error",
    "line",
    "column",
    "scope",
    "branch",
    "merge",
    "commit",
    "patch",
    "build",
]


@dataclass(frozen=True)
class CallUsage:
    agent: str
    prompt_tokens: int
    cached_tokens: int | None
    completion_tokens: int
    prompt: list[dict[str, Any]]  # the messages sent (the test's own copy: never written by the capture)


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


async def _step(
    client: AsyncOpenAI, model: str, messages: list[dict[str, Any]], headers: dict[str, str], max_tokens: int
) -> tuple[str, Any]:
    stream = await client.chat.completions.create(
        model=model,
        messages=messages,  # type: ignore[arg-type]
        max_tokens=max_tokens,
        temperature=0.0,
        stream=True,
        stream_options={"include_usage": True},
        extra_headers=headers,
    )
    pieces: list[str] = []
    usage = None
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        if chunk.usage is not None:
            usage = chunk.usage
    return "".join(pieces), usage


async def coding_agent(
    base_url: str,
    *,
    marker: str,
    api_key: str,
    steps: int = 8,
    sub_steps: int = 3,
    max_tokens: int = 8,
    seed: int = 1,
) -> list[CallUsage]:
    """Run the agent (and its sub-agent after step 2) through `base_url`; the usage of every call."""
    rng = random.Random(seed)
    client = AsyncOpenAI(base_url=base_url + "/v1", api_key=api_key, max_retries=0)
    model = (await client.models.list()).data[0].id
    system = {"role": "system", "content": f"{marker} You are a coding agent. " + prose(rng, 90)}
    parent_headers = {"X-Session-ID": f"parent-{marker}"}
    messages: list[dict[str, Any]] = [system, {"role": "user", "content": f"{marker} " + prose(rng, 25)}]
    calls: list[CallUsage] = []

    def note(agent: str, sent: list[dict[str, Any]], usage: Any) -> None:
        details = usage.prompt_tokens_details
        cached = details.cached_tokens if details is not None else None
        calls.append(CallUsage(agent, usage.prompt_tokens, cached, usage.completion_tokens, list(sent)))

    for step in range(steps):
        text, usage = await _step(client, model, messages, parent_headers, max_tokens)
        note("parent", messages, usage)
        messages = [*messages, {"role": "assistant", "content": text}]
        if step == 2:
            # Delegate: a sub-agent with the same system prompt and a task of its own.
            sub_headers = {"X-Session-ID": f"sub-{marker}", "X-Parent-Session-ID": f"parent-{marker}"}
            sub: list[dict[str, Any]] = [system, {"role": "user", "content": "Explore: " + prose(rng, 30)}]
            for _ in range(sub_steps):
                sub_text, sub_usage = await _step(client, model, sub, sub_headers, max_tokens)
                note("sub", sub, sub_usage)
                sub = [*sub, {"role": "assistant", "content": sub_text}, {"role": "user", "content": prose(rng, 60)}]
        messages.append({"role": "user", "content": f"Tool result {step}: " + prose(rng, 80)})
    await client.close()
    return calls
