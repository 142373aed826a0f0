"""What the proxy reads from a model call's request body: the fields that name or shape the session,
and a chain of keys over its messages, cheap enough for the request path.

A chat request's prompt is its `tools` and `messages`; an agent resends its whole history every turn
and appends what is new. Key i is a hash chained over the tools and the first i messages, so a request
whose messages extend an earlier request's has that request's last key among its own: finding the
session a request continues is a few dictionary look-ups, not a comparison of texts. The keys are
Python hashes: they live only in this process's memory and are never written anywhere.

A text completion (`/v1/completions`) has one string prompt, so its chain has one key: calls that
extend an earlier prompt are not recognised (the session header or the `user` field names them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

CallKind = Literal["chat", "completion"]
_ROOT = 0x6A78  # any constant: the chain's seed before the tools are mixed in
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode


def call_kind(method: str, path: str) -> CallKind | None:
    """Whether a request is a model call the proxy observes (any other is only forwarded)."""
    if method != "POST":
        return None
    path = path.rstrip("/")
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/completions"):
        return "completion"
    return None


@dataclass(frozen=True, slots=True)
class CallRequest:
    """A model call's request as the session tracker and the capture need it (no text is kept here)."""

    kind: CallKind
    model: str | None
    stream: bool
    usage_asked: bool  # stream_options.include_usage: the final event will carry the server's usage
    user: str | None  # the OpenAI `user` field; in memory only, never logged or written
    chain: tuple[int, ...]  # keys after the tools and each message (one key for a text completion)
    head: int | None  # key of the first message alone (tools left out): what a sub-agent may share
    last_role: str | None  # role of the last message: what the call answers (a tool result, a user turn)


def read_call(kind: CallKind, body: bytes) -> CallRequest | None:
    """The call's fields, or None when the body is not a JSON object (the server will refuse it)."""
    data = _json_object(body)
    if data is None:
        return None
    options = data.get("stream_options")
    model, user = data.get("model"), data.get("user")
    if kind == "chat":
        messages = data.get("messages")
        messages = messages if isinstance(messages, list) else []
        chain = message_chain(data.get("tools"), messages)
        head = _message_key(_ROOT, messages[0]) if messages else None
        last = messages[-1] if messages and isinstance(messages[-1], dict) else None
        last_role = last.get("role") if last is not None else None
    else:
        prompt = data.get("prompt")
        chain = (hash((_ROOT, "prompt", prompt if isinstance(prompt, str) else _dumps(prompt))),)
        head = last_role = None
    return CallRequest(
        kind=kind,
        model=model if isinstance(model, str) else None,
        stream=data.get("stream") is True,
        usage_asked=isinstance(options, dict) and options.get("include_usage") is True,
        user=user if isinstance(user, str) and user else None,
        chain=chain,
        head=head,
        last_role=last_role if isinstance(last_role, str) else None,
    )


def message_chain(tools: Any, messages: list[Any]) -> tuple[int, ...]:
    """Key i+1 covers the tools and messages[0..i]. A message that is just a role and a string (most
    of an agent's history) is hashed as is; any other is hashed as canonical JSON, so key order and
    spacing in how an agent re-serialises its history do not matter."""
    key = hash((_ROOT, _dumps(tools) if tools else ""))
    out: list[int] = []
    for message in messages:
        key = _message_key(key, message)
        out.append(key)
    return tuple(out)


def _message_key(previous: int, message: Any) -> int:
    if isinstance(message, dict) and len(message) == 2 and isinstance(message.get("content"), str):
        return hash((previous, message.get("role"), message["content"]))
    return hash((previous, _dumps(message)))


# Fields of a chat request that change how vLLM renders its prompt: passed to /tokenize as they are.
_RENDER_FIELDS = (
    "tools",
    "add_generation_prompt",
    "continue_final_message",
    "chat_template",
    "chat_template_kwargs",
    "documents",
    "add_special_tokens",
    "mm_processor_kwargs",
)


def tokenize_request(kind: CallKind, body: bytes) -> dict[str, Any] | list[int] | None:
    """The `/tokenize` body that renders this call's prompt exactly as the server's endpoint does, or
    the prompt's own token ids when the call sent ids; None when there is nothing to tokenize."""
    data = _json_object(body)
    if data is None:
        return None
    out: dict[str, Any] = {}
    if isinstance(data.get("model"), str):
        out["model"] = data["model"]
    if kind == "chat":
        if not isinstance(data.get("messages"), list):
            return None
        out["messages"] = data["messages"]
        out.update((name, data[name]) for name in _RENDER_FIELDS if data.get(name) is not None)
        return out
    prompt = data.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str | list):
        prompt = prompt[0]  # a batch of one
    if isinstance(prompt, str):
        out["prompt"] = prompt
        if data.get("add_special_tokens") is not None:
            out["add_special_tokens"] = data["add_special_tokens"]
        return out
    if isinstance(prompt, list) and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt):
        return list(prompt)
    return None


def _json_object(body: bytes) -> dict[str, Any] | None:
    """The body as a JSON object; None when it is not one."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None
