"""A fake OpenAI-compatible streaming server (aiohttp) with a toy tokenizer, for the driver's unit tests.

Tokenizer: each whitespace-separated word costs 1 token, or 2 when longer than 7 letters; a chat message
renders as `<role>` `:` (2 header tokens) + content + `<end>` (1 token); the generation prompt is 2
tokens. Failures are scripted through `FakeServer.plan` (status codes to answer, in order) and flags.

Its prefix cache holds every prompt's whole blocks of `block_size` tokens and reports `cached_tokens`
honestly: the longest run of leading blocks it holds, short of the prompt's last token. With
`forget_after_s` T it is *forgetful*: a block not used for longer than T is gone (a block is used from
a request's arrival to its answer's end), so a session that sat idle longer than T finds nothing of its
prefix, and one back sooner finds all of it: a cache whose eviction cliff is exactly at T.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

HEADER, TRAILER, GEN = 2, 1, 2


def word_ids(text: str) -> list[int]:
    ids: list[int] = []
    for word in text.split():
        base = sum(ord(c) for c in word) % 1000 + 100
        ids.extend([base, base + 1] if len(word) > 7 else [base])
    return ids


def chat_ids(messages: list[dict[str, Any]], gen: bool) -> list[int]:
    ids: list[int] = []
    for m in messages:
        ids += [10 + len(m["role"]), 11, *word_ids(str(m.get("content") or "")), 12]
    return ids + ([13, 14] if gen else [])


def tokenize_answer(body: dict[str, Any], max_model_len: int) -> dict[str, Any]:
    """What vLLM's /tokenize answers, in this fake tokenizer, for a chat or a plain prompt."""
    if "messages" in body:
        ids = chat_ids(body["messages"], bool(body.get("add_generation_prompt", True)))  # vLLM's default
    else:
        ids = word_ids(body["prompt"])
    return {"count": len(ids), "tokens": ids, "max_model_len": max_model_len}


@dataclass
class FakeServer:
    max_model_len: int = 4096
    tokenize: bool = True
    plan: list[int] = field(default_factory=list)  # statuses to answer before streaming normally
    drop_after: int | None = None  # close the connection after this many content events (once)
    malformed: bool = False
    chunk_tokens: int = 1
    token_delay_s: float = 0.0
    prefill_delay_s: float = 0.0  # before the first content token, as a real server computes the prompt
    # A session's first request (no assistant message yet: its whole prompt is new, a cold prefill) waits
    # this long before its first token instead (None: as every other request).
    first_call_delay_s: float | None = None
    usage_delay_s: float = 0.0  # after the last content token, before the usage chunk and `[DONE]`
    cached_details: bool = True
    block_size: int = 4  # the prefix cache's block, in tokens
    forget_after_s: float | None = None  # a block unused for longer than this is forgotten (None: never)
    requests: list[dict[str, Any]] = field(default_factory=list)
    # (arrived, answered, max_tokens) of every streamed completion, in `time.monotonic()` seconds
    timeline: list[tuple[float, float, int]] = field(default_factory=list)
    auth: list[str | None] = field(default_factory=list)
    prompt_tokens_total: int = 0
    generation_tokens_total: int = 0
    _blocks: dict[int, float] = field(default_factory=dict)  # a block's key (its whole prefix): last used
    server: TestServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("")).rstrip("/")

    async def start(self) -> FakeServer:
        app = web.Application()
        self.routes(app)
        self.server = TestServer(app)
        await self.server.start_server()
        return self

    def routes(self, app: web.Application) -> None:
        """What it serves (a subclass adds its own pages)."""
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/health", self._health)  # what `--attach` probes before it sends load
        app.router.add_post("/tokenize", self._tokenize)
        app.router.add_post("/v1/chat/completions", self._chat)

    async def close(self) -> None:
        if self.server is not None:
            await self.server.close()

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "fake", "max_model_len": self.max_model_len}]})

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(text="")

    async def _tokenize(self, request: web.Request) -> web.Response:
        if not self.tokenize:
            return web.json_response({"error": "not found"}, status=404)
        return web.json_response(tokenize_answer(await request.json(), self.max_model_len))

    def _keys(self, ids: list[int]) -> list[int]:
        """Each whole block's key: a chained hash of every token up to its end (equal keys, equal prefix)."""
        keys, h, size = [], 0, self.block_size
        for end in range(size, len(ids) + 1, size):
            h = hash((h, tuple(ids[end - size : end])))
            keys.append(h)
        return keys

    def _cached(self, ids: list[int], now: float) -> int:
        """The prompt's leading blocks still held (short of its last token), then all of its blocks used."""
        keys = self._keys(ids)
        held = 0
        for key in keys[: (len(ids) - 1) // self.block_size]:
            used = self._blocks.get(key)
            if used is None or (self.forget_after_s is not None and now - used > self.forget_after_s):
                break
            held += 1
        self._used(keys, now)
        return held * self.block_size

    def _used(self, keys: list[int], now: float) -> None:
        for key in keys:
            self._blocks[key] = now

    def _refusal(self, request: web.Request, body: dict[str, Any]) -> web.Response | None:
        """A chat completion noted, and the answer it gets instead of a stream: a scripted status, a
        context overflow, or a one-token answer when it did not ask for a stream (None: stream it)."""
        self.requests.append(body)
        self.auth.append(request.headers.get("Authorization"))
        if self.plan:
            status = self.plan.pop(0)
            return web.json_response({"error": {"message": f"scripted {status}"}}, status=status)
        ids = chat_ids(body["messages"], True)
        out = int(body.get("max_tokens") or 16)
        if len(ids) + out > self.max_model_len:
            msg = f"This model's maximum context length is {self.max_model_len} tokens."
            return web.json_response({"error": {"message": msg}}, status=400)
        if not body.get("stream"):
            return web.json_response({"usage": {"prompt_tokens": len(ids), "completion_tokens": 1}})
        return None

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        arrived = time.monotonic()
        body = await request.json()
        refused = self._refusal(request, body)
        if refused is not None:
            return refused
        ids = chat_ids(body["messages"], True)
        out = int(body.get("max_tokens") or 16)
        cached = self._cached(ids, arrived)
        self.prompt_tokens_total += len(ids)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        head = {"id": "x", "object": "chat.completion.chunk", "model": body["model"]}
        first = {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
        await resp.write(f"data: {json.dumps(first)}\n\n".encode())
        if self.malformed:
            await resp.write(b"data: not json at all\n\ngarbage line\n\n")
        prefill = self.prefill_delay_s
        if self.first_call_delay_s is not None and not any(m.get("role") == "assistant" for m in body["messages"]):
            prefill = self.first_call_delay_s
        if prefill:
            await asyncio.sleep(prefill)
        sent = 0
        while sent < out:
            k = min(self.chunk_tokens, out - sent)
            chunk = {**head, "choices": [{"index": 0, "delta": {"content": " tok" * k}}]}
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
            sent += k
            if self.drop_after is not None and sent >= self.drop_after:
                self.drop_after = None
                assert request.transport is not None
                request.transport.close()
                return resp
            if self.token_delay_s:
                await asyncio.sleep(self.token_delay_s)
        self.generation_tokens_total += out
        if self.usage_delay_s:  # a server that sends its usage late (an inflated E2E, if it counted)
            await asyncio.sleep(self.usage_delay_s)
        usage: dict[str, Any] = {"prompt_tokens": len(ids), "completion_tokens": out, "total_tokens": len(ids) + out}
        if self.cached_details:
            usage["prompt_tokens_details"] = {"cached_tokens": cached}
        await resp.write(f"data: {json.dumps({**head, 'choices': [], 'usage': usage})}\n\n".encode())
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        self._used(self._keys(ids), time.monotonic())  # its blocks were in use until its end
        self.timeline.append((arrived, time.monotonic(), out))
        return resp
