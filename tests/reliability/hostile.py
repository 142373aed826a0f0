"""A hostile OpenAI-compatible server for reliability tests, run in a background thread.

It speaks enough of vLLM's API for agentx-tui to attach and drive load (`/v1/models`, `/health`,
`/version`, `/tokenize` with the toy tokenizer of `tests/load/fake_openai.py`, streaming
`/v1/chat/completions`, `/metrics`), and misbehaves on demand:

- chat requests follow `chat_script`, cycled per request: ``ok``, ``500``, ``429``, ``400``,
  ``malformed`` (junk SSE lines inside an otherwise good stream), ``truncated`` (the body ends cleanly
  after a few tokens, without usage or ``[DONE]``), ``dropped`` (the connection is cut mid-stream);
- `/metrics` follows `metrics_mode`: ``normal`` (a small vLLM page whose counters follow what was
  served), ``garbage`` (binary and text junk), ``huge`` (50 MB of valid-looking vLLM lines, sent
  chunked with no Content-Length, the worst case for a scraper);
- with `echo_secrets`, every answer it can shape repeats the request's Authorization header: error
  bodies, junk SSE lines, the garbage page, the version string and the model's name, so any path by
  which server text reaches the tool's output would carry the key.

Both modes can be switched while a run is going (plain attribute writes; the loop reads them per
request). It binds 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from tests.load.fake_openai import chat_ids, tokenize_answer

HUGE_PAGE_BYTES = 50 * 1024 * 1024
MODEL = "hostile"


def _huge_page() -> bytes:
    line = 'vllm:num_requests_running{engine="%d",model_name="hostile"} 1.0\n'
    one = "".join(line % i for i in range(20_000)).encode()
    return (one * (HUGE_PAGE_BYTES // len(one) + 1))[:HUGE_PAGE_BYTES]


class HostileServer:
    def __init__(
        self,
        *,
        chat_script: Sequence[str] = ("ok",),
        metrics_mode: str = "normal",
        echo_secrets: bool = False,
        max_model_len: int = 4096,
        token_delay_s: float = 0.002,
        models_status: int = 200,
    ) -> None:
        self.chat_script = list(chat_script)
        self.metrics_mode = metrics_mode
        self.echo_secrets = echo_secrets
        self.max_model_len = max_model_len
        self.token_delay_s = token_delay_s
        self.models_status = models_status
        self.chat_by_behaviour: Counter[str] = Counter()
        self.scrapes_by_mode: Counter[str] = Counter()
        self.auth_seen: set[str] = set()
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self._n_chat = 0
        self._huge: bytes | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # ---- lifecycle (called from the test's thread) ------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> HostileServer:
        if self.metrics_mode == "huge":
            self._huge = _huge_page()
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        def serve() -> None:
            assert self._loop is not None
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(self._start())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, name="hostile-server", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the hostile server did not start")
        return self

    def stop(self) -> None:
        if self._loop is None:
            return
        future = asyncio.run_coroutine_threadsafe(self._stop(), self._loop)
        with contextlib.suppress(Exception):
            future.result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        self._loop.close()
        self._loop = None

    def use_huge_metrics(self) -> None:
        """Switch /metrics to the 50 MB page (built here, off the server's loop)."""
        if self._huge is None:
            self._huge = _huge_page()
        self.metrics_mode = "huge"

    def __enter__(self) -> HostileServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/health", self._health)
        app.router.add_get("/version", self._version)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_post("/tokenize", self._tokenize)
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # ---- answers --------------------------------------------------------------------------------
    def _echo(self, request: web.Request) -> str:
        auth = request.headers.get("Authorization", "")
        if auth:
            self.auth_seen.add(auth)
        return f" (you sent Authorization: {auth})" if self.echo_secrets and auth else ""

    def _model_name(self, request: web.Request) -> str:
        auth = request.headers.get("Authorization", "")
        return f"{MODEL}-{auth.removeprefix('Bearer ')}" if self.echo_secrets and auth else MODEL

    async def _models(self, request: web.Request) -> web.Response:
        echo = self._echo(request)
        if self.models_status != 200:
            return web.Response(status=self.models_status, text=f"no such route{echo}")
        card = {"id": self._model_name(request), "object": "model", "max_model_len": self.max_model_len}
        return web.json_response({"object": "list", "data": [card]})

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(text="")

    async def _version(self, request: web.Request) -> web.Response:
        return web.json_response({"version": "hostile-1" + self._echo(request)})

    async def _tokenize(self, request: web.Request) -> web.Response:
        return web.json_response(tokenize_answer(await request.json(), self.max_model_len))

    def _normal_page(self) -> str:
        labels = '{engine="0",model_name="hostile"}'
        return (
            "# TYPE vllm:num_requests_running gauge\n"
            f"vllm:num_requests_running{labels} 1.0\n"
            "# TYPE vllm:num_requests_waiting gauge\n"
            f"vllm:num_requests_waiting{labels} 0.0\n"
            "# TYPE vllm:kv_cache_usage_perc gauge\n"
            f"vllm:kv_cache_usage_perc{labels} 0.25\n"
            "# TYPE vllm:prompt_tokens counter\n"
            f"vllm:prompt_tokens_total{labels} {float(self.prompt_tokens)}\n"
            "# TYPE vllm:generation_tokens counter\n"
            f"vllm:generation_tokens_total{labels} {float(self.generation_tokens)}\n"
        )

    async def _metrics(self, request: web.Request) -> web.StreamResponse:
        mode = self.metrics_mode
        self.scrapes_by_mode[mode] += 1
        echo = self._echo(request)
        if mode == "garbage":
            junk = b"\xff\xfe\x00 }{ not a metric {{{ \x80\n" * 2000
            junk += f'vllm:kv_cache_usage_perc{{engine="0" 0.5 garbage{echo}\n'.encode()
            return web.Response(body=junk, content_type="text/plain")
        if mode == "huge" and self._huge is not None:
            resp = web.StreamResponse(headers={"Content-Type": "text/plain; version=0.0.4"})
            resp.enable_chunked_encoding()
            await resp.prepare(request)
            step = 1 << 20
            with contextlib.suppress(ConnectionError, RuntimeError):  # the reader gave up: as it should
                for i in range(0, len(self._huge), step):
                    await resp.write(self._huge[i : i + step])
                await resp.write_eof()
            return resp
        return web.Response(text=self._normal_page(), content_type="text/plain")

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        behaviour = self.chat_script[self._n_chat % len(self.chat_script)]
        self._n_chat += 1
        self.chat_by_behaviour[behaviour] += 1
        echo = self._echo(request)
        if behaviour in ("500", "429", "400"):
            message = {"500": "internal error", "429": "slow down", "400": "bad request"}[behaviour]
            error = {"error": {"message": message + echo, "type": "HostileError", "code": int(behaviour)}}
            return web.json_response(error, status=int(behaviour))
        ids = chat_ids(body["messages"], True)
        out = int(body.get("max_tokens") or 16)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        head: dict[str, Any] = {"id": "h", "object": "chat.completion.chunk", "model": body.get("model")}
        first = {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
        await resp.write(f"data: {json.dumps(first)}\n\n".encode())
        if behaviour == "malformed":
            junk = f"data: not json at all{echo}\n\ngarbage line{echo}\n\ndata: {{broken json\n\n"
            await resp.write(junk.encode())
        self.prompt_tokens += len(ids)
        cut = max(1, out // 2)
        for sent in range(1, out + 1):
            chunk = {**head, "choices": [{"index": 0, "delta": {"content": " tok"}}]}
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.generation_tokens += 1
            if behaviour in ("truncated", "dropped") and sent >= cut:
                if behaviour == "dropped":
                    assert request.transport is not None
                    request.transport.close()
                else:
                    await resp.write_eof()
                return resp
            if self.token_delay_s:
                await asyncio.sleep(self.token_delay_s)
        usage: dict[str, Any] = {
            "prompt_tokens": len(ids),
            "completion_tokens": out,
            "total_tokens": len(ids) + out,
            "prompt_tokens_details": {"cached_tokens": 0},
        }
        await resp.write(f"data: {json.dumps({**head, 'choices': [], 'usage': usage})}\n\n".encode())
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp
