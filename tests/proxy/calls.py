"""Model calls as the proxy records them, made by hand (no HTTP), for the session and capture tests."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentx_tui.measure import Completed, Failed, SseScanner
from agentx_tui.proxy import ProxiedCall
from agentx_tui.proxy._request import read_call

SYSTEM = {"role": "system", "content": "You are a coding agent. Use the tools."}


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


def tool(text: str) -> dict[str, str]:
    return {"role": "tool", "content": text, "tool_call_id": "call_1"}


def make_call(
    messages: list[dict[str, Any]],
    *,
    at: float,
    header: str | None = None,
    parent: str | None = None,
    user_field: str | None = None,
    usage: bool = True,
) -> ProxiedCall:
    body: dict[str, Any] = {"model": "m", "messages": messages, "stream": True}
    if usage:
        body["stream_options"] = {"include_usage": True}
    if user_field is not None:
        body["user"] = user_field
    raw = json.dumps(body).encode()
    call = ProxiedCall(kind="chat", body=raw, received_at=at, session_name=header, parent_name=parent)
    call.request = read_call("chat", raw)
    return call


def stream(
    call: ProxiedCall,
    *,
    first: float,
    tokens: int = 4,
    gap: float = 0.01,
    prompt: int | None = 100,
    cached: int | None = 0,
    error: str | None = None,
) -> None:
    """The answer streams `tokens` content events from `first`, one per read, then ends: with `[DONE]`,
    or, given an `error`, without (an answer whose `[DONE]` was relayed is complete, `ProxiedCall.finish`)."""
    call.status = 200
    scan = call.scan = SseScanner(want_finish=True, any_tokens=True)
    t = first
    for i in range(tokens):
        finish = '"stop"' if i == tokens - 1 else "null"
        event = f'data: {{"choices":[{{"index":0,"delta":{{"content":" w{i}"}},"finish_reason":{finish}}}]}}\n\n'
        scan.feed(event.encode(), t)
        t += gap
    if prompt is not None:
        usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": tokens}
        if cached is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": cached}
        scan.feed(f'data: {{"choices":[],"usage":{json.dumps(usage)}}}\n\n'.encode(), t)
    if error is None:
        scan.feed(b"data: [DONE]\n\n", t)
    call.finish(t + 0.001, error)


@dataclass
class Sink:
    """A `StatsSink` that keeps what it is given."""

    added: list[Completed] = field(default_factory=list)
    errors: list[Failed] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)
    ended_trees: list[tuple[str, int]] = field(default_factory=list)  # (how, tree) of each session end

    def add(self, done: Completed) -> None:
        self.added.append(done)

    def error(self, failed: Failed) -> None:
        self.errors.append(failed)

    def session_ended(self, how: str, tree: int = -1) -> None:
        self.ended.append(how)
        self.ended_trees.append((how, tree))
