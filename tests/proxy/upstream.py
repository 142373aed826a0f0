"""A scriptable upstream for the proxy's tests (aiohttp, in the test's own loop).

- any path under `/echo`: answers what it got (method, raw path, headers, body) as JSON;
- `/status/{code}`: that status, a JSON error body and headers that must pass through (two Set-Cookie);
- `/v1/chat/completions`: a streamed chat answer in vLLM's shape, one event per chunk, with `gap_s`
  between chunks; it records when it sent each chunk (`sent`), so a test can check when each arrived;
  `tokens`, `usage`, `cut_after` (close the connection after that many chunks) and `end_after_s` (hold
  the end of the body that long after `[DONE]`, as a busy proxy's loop may) script it; with `paced` set,
  each chunk after the first waits for the test to `release()` it (lock-step with the reader, so a test
  of ordering does not depend on how busy the machine is);
  a non-streamed request gets one JSON answer with usage;
- `/tokenize`: one token per whitespace-separated word of every message (and a fixed template);
- `/hang`: never answers (the proxy's idle timeout must end it);
- `/v1/models`.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer


def word_ids(text: str) -> list[int]:
    return [sum(map(ord, w)) % 50_000 + 100 for w in text.split()]


def chat_ids(messages: list[dict[str, Any]]) -> list[int]:
    ids: list[int] = [1]
    for m in messages:
        content = m.get("content")
        ids += [2, len(str(m.get("role"))), *word_ids(content if isinstance(content, str) else json.dumps(content)), 3]
    return [*ids, 4, 5]  # the generation prompt


def _chunk(content: str, finish: str | None = None) -> bytes:
    delta = {"content": content}
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "fake", "choices": [choice]}
    return f"data: {json.dumps(body)}\n\n".encode()


@dataclass
class Upstream:
    gap_s: float = 0.0
    tokens: int = 5
    usage: bool | None = None  # None: as the request asks (stream_options.include_usage)
    cached: int = 0
    cut_after: int | None = None
    end_after_s: float = 0.0
    sent: list[float] = field(default_factory=list)  # time.monotonic() of every chat chunk written
    seen: list[dict[str, Any]] = field(default_factory=list)  # every request: method, path, headers, body
    tokenized: list[dict[str, Any]] = field(default_factory=list)
    paced: bool = False
    server: TestServer | None = None
    _releases: asyncio.Queue[None] = field(default_factory=asyncio.Queue)

    def release(self) -> None:
        """Let a paced stream write its next chunk."""
        self._releases.put_nowait(None)

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("")).rstrip("/")

    async def start(self) -> Upstream:
        app = web.Application()
        app.router.add_route("*", "/echo{tail:.*}", self._echo)
        app.router.add_route("*", "/status/{code}", self._status)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/tokenize", self._tokenize)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/hang", self._hang)
        self.server = TestServer(app)
        await self.server.start_server()
        return self

    async def close(self) -> None:
        if self.server is not None:
            await self.server.close()

    def _record(self, request: web.Request, body: bytes) -> None:
        self.seen.append(
            {"method": request.method, "path": request.raw_path, "headers": list(request.headers.items()), "body": body}
        )

    async def _echo(self, request: web.Request) -> web.Response:
        body = await request.read()
        self._record(request, body)
        answer = {
            "method": request.method,
            "path": request.raw_path,
            "headers": [[k, v] for k, v in request.headers.items()],
            "body": body.decode(errors="replace"),
        }
        return web.json_response(answer, headers={"X-Upstream": "echo"})

    async def _status(self, request: web.Request) -> web.Response:
        self._record(request, await request.read())
        code = int(request.match_info["code"])
        body = {"error": {"message": f"scripted {code}", "type": "BadRequestError", "code": code}}
        resp = web.json_response(body, status=code, headers={"X-Request-Id": "abc123", "Retry-After": "7"})
        resp.headers.add("Set-Cookie", "a=1")
        resp.headers.add("Set-Cookie", "b=2")
        return resp

    async def _models(self, request: web.Request) -> web.Response:
        self._record(request, b"")
        return web.json_response({"object": "list", "data": [{"id": "fake", "max_model_len": 4096}]})

    async def _hang(self, request: web.Request) -> web.Response:
        await asyncio.sleep(3600)
        return web.Response()

    async def _tokenize(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.tokenized.append({"body": body, "auth": request.headers.get("Authorization")})
        ids = chat_ids(body["messages"]) if "messages" in body else word_ids(body.get("prompt", ""))
        return web.json_response({"count": len(ids), "tokens": ids, "max_model_len": 4096})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        self._record(request, raw)
        body = json.loads(raw)
        prompt = len(chat_ids(body["messages"]))
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": self.tokens,
            "total_tokens": prompt + self.tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached},
        }
        if not body.get("stream"):
            message = {"role": "assistant", "content": " tok" * self.tokens}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            return web.json_response({"id": "x", "object": "chat.completion", "choices": [choice], "usage": usage})
        include = self.usage if self.usage is not None else (body.get("stream_options") or {}).get("include_usage")
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "X-Stream": "yes"})
        await resp.prepare(request)
        events = [_chunk("")] + [_chunk(f" t{i}", "stop" if i == self.tokens - 1 else None) for i in range(self.tokens)]
        tail = (f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n" if include else "") + "data: [DONE]\n\n"
        for i, event in enumerate(events):
            if i and self.paced:
                await self._releases.get()
            if i and self.gap_s:
                await asyncio.sleep(self.gap_s)
            if self.cut_after is not None and i >= self.cut_after:
                assert request.transport is not None
                request.transport.close()
                return resp
            self.sent.append(time.monotonic())
            await resp.write(event + (tail.encode() if i == len(events) - 1 else b""))
        if self.end_after_s:
            await asyncio.sleep(self.end_after_s)
        await resp.write_eof()
        return resp
