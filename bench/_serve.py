"""Benchmark servers in subprocesses: a server binds a free port and writes it to a pipe
(`start_reporting_port`), and the fast local streaming server the client benchmarks share.

The streaming server (`python bench/_serve.py --port-fd FD --step-s S`, started by `start_stream_server`)
answers OpenAI chat completions streamed as vLLM streams them: one SSE event per token in vLLM's chunk
format, every request exactly as long as its `max_tokens` / `max_completion_tokens` asks. It paces
tokens like an engine's decode steps: every `step_s`, each open stream gets its next token (or its next
`tokens_per_step` tokens, in one write). It counts what it streamed at `/bench/stats`, so a benchmark
reads every client's throughput from the same place.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import select
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

MODEL = "agentx-tiny"


def start_reporting_port(
    make_cmd: Callable[[int], Sequence[str]], what: str, *, preexec_fn: Callable[[], None] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """Run `make_cmd(write_fd)`, whose process writes its port number to `write_fd` once it listens;
    return the process and its loopback URL. A server that says nothing within 30 s ends the bench."""
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(list(make_cmd(write_fd)), pass_fds=(write_fd,), preexec_fn=preexec_fn)
    os.close(write_fd)
    ready, _, _ = select.select([read_fd], [], [], 30)
    port = os.read(read_fd, 32).decode().strip() if ready else ""
    os.close(read_fd)
    if not port.isdigit():
        proc.kill()
        raise SystemExit(f"{what} did not start")
    return proc, f"http://127.0.0.1:{port}"


# ---------------------------------------------------------------------------------------------------
# The streaming server
# ---------------------------------------------------------------------------------------------------

_WORDS = ("the", "agent", "reads", "file", "and", "calls", "a", "tool", "then", "writes", "tests", "again")
_TEMPLATE_HEADER = 2  # `<role>` `:` before each message's content
_TEMPLATE_END = 1  # `<end>` after it
_GENERATION_PROMPT = 2  # `<assistant>` `:`


class WordTokenizer:
    """One token per whitespace-separated word; ids are stable for the server's lifetime.

    Enough for every client: agentx-tui calibrates against /tokenize, `vllm bench serve` realigns its
    random prompts with /tokenize and /detokenize, AIPerf counts with its own tokenizer."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._words: list[str] = []

    def encode(self, text: str) -> list[int]:
        out = []
        for word in text.split():
            token = self._ids.get(word)
            if token is None:
                token = self._ids[word] = len(self._words) + 100
                self._words.append(word)
            out.append(token)
        return out

    def decode(self, ids: Sequence[int]) -> str:
        return " ".join(self._words[i - 100] for i in ids if 100 <= i < len(self._words) + 100)

    def encode_chat(self, messages: Sequence[dict[str, Any]], generation_prompt: bool) -> list[int]:
        ids: list[int] = []
        for message in messages:
            role = str(message.get("role", "user"))
            ids += [1 + len(role) % 7, 9, *self.encode(_content_text(message.get("content"))), 10]
        return ids + ([11, 9] if generation_prompt else [])

    def count_chat(self, messages: Sequence[dict[str, Any]]) -> int:
        per_message = _TEMPLATE_HEADER + _TEMPLATE_END
        words = sum(len(_content_text(m.get("content")).split()) for m in messages)
        return words + per_message * len(messages) + _GENERATION_PROMPT


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _chunk(body: str) -> bytes:
    return b"data: " + body.encode() + b"\n\n"


def _head() -> str:
    return f'{{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"{MODEL}"'


def _token_event(word: str, last: bool) -> bytes:
    finish = '"length"' if last else "null"
    return _chunk(
        _head() + f',"choices":[{{"index":0,"delta":{{"content":" {word}"}},"logprobs":null,'
        f'"finish_reason":{finish}}}]}}'
    )


_ROLE_EVENT = _chunk(
    _head() + ',"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}'
)
_TOKEN_EVENTS = [_token_event(w, last=False) for w in _WORDS]
_LAST_EVENTS = [_token_event(w, last=True) for w in _WORDS]
_DONE = b"data: [DONE]\n\n"


def _event(i: int, out: int) -> bytes:
    """Token `i` of `out`, the last one with its finish reason."""
    return (_LAST_EVENTS if i == out - 1 else _TOKEN_EVENTS)[i % len(_WORDS)]


@dataclass
class ServerStats:
    tokens: int = 0  # content events written
    started: int = 0
    done: int = 0
    prompt_tokens: int = 0
    request_bytes: int = 0
    connections: int = 0  # distinct connections that carried chat requests


async def serve(port_fd: int, step_s: float, tokens_per_step: int = 1) -> None:
    from aiohttp import web

    tokenizer = WordTokenizer()
    stats = ServerStats()
    loop = asyncio.get_running_loop()
    tick: asyncio.Future[None] = loop.create_future()
    seen_connections: set[int] = set()

    async def clock() -> None:
        # One decode step for every open stream at once, as an engine's batch does.
        nonlocal tick
        next_at = loop.time()
        while True:
            next_at += step_s
            await asyncio.sleep(max(0.0, next_at - loop.time()))
            fired, tick = tick, loop.create_future()
            fired.set_result(None)

    async def chat(request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        body = json.loads(raw)
        stats.started += 1
        stats.request_bytes += len(raw)
        if id(request.transport) not in seen_connections:
            seen_connections.add(id(request.transport))
            stats.connections = len(seen_connections)
        prompt = tokenizer.count_chat(body.get("messages") or [])
        stats.prompt_tokens += prompt
        out = int(body.get("max_completion_tokens") or body.get("max_tokens") or 16)
        usage = {"prompt_tokens": prompt, "total_tokens": prompt + out, "completion_tokens": out}
        if not body.get("stream"):
            stats.tokens += out
            stats.done += 1
            text = "".join(" " + _WORDS[i % len(_WORDS)] for i in range(out))
            return web.json_response(
                {
                    "id": "chatcmpl-bench",
                    "object": "chat.completion",
                    "model": MODEL,
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
                    ],
                    "usage": usage,
                }
            )
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        try:
            for first in range(0, out, tokens_per_step):
                await tick
                last = min(out, first + tokens_per_step)
                events = [_event(i, out) for i in range(first, last)]
                if first == 0:
                    events.insert(0, _ROLE_EVENT)
                if last == out:
                    if include_usage:
                        usage_json = json.dumps(usage, separators=(",", ":"))
                        events.append(_chunk(_head() + ',"choices":[],"usage":' + usage_json + "}"))
                    events.append(_DONE)
                await resp.write(b"".join(events))
                stats.tokens += last - first
            await resp.write_eof()
        except ConnectionResetError:  # the client went away (a run ended early): nothing to stream to
            return resp
        stats.done += 1
        return resp

    async def tokenize(request: web.Request) -> web.Response:
        body = await request.json()
        if "messages" in body:
            ids = tokenizer.encode_chat(body["messages"], bool(body.get("add_generation_prompt")))
        else:
            ids = tokenizer.encode(str(body.get("prompt", "")))
        return web.json_response({"count": len(ids), "tokens": ids, "max_model_len": 1_000_000})

    async def detokenize(request: web.Request) -> web.Response:
        body = await request.json()
        return web.json_response({"prompt": tokenizer.decode([int(t) for t in body.get("tokens", [])])})

    async def models(request: web.Request) -> web.Response:
        card = {"id": MODEL, "object": "model", "owned_by": "bench", "max_model_len": 1_000_000}
        return web.json_response({"object": "list", "data": [card]})

    async def health(request: web.Request) -> web.Response:
        return web.Response(text="")

    async def bench_stats(request: web.Request) -> web.Response:
        return web.json_response(stats.__dict__)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/tokenize", tokenize)
    app.router.add_post("/detokenize", detokenize)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/health", health)
    app.router.add_get("/bench/stats", bench_stats)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
    await site.start()
    assert site._server is not None and site._server.sockets  # type: ignore[union-attr]
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    os.write(port_fd, f"{port}\n".encode())
    os.close(port_fd)
    clock_task = asyncio.create_task(clock())
    try:
        await asyncio.Event().wait()
    finally:
        clock_task.cancel()
        await runner.cleanup()


@dataclass
class StreamServer:
    proc: subprocess.Popen[bytes]
    url: str

    def stats(self) -> dict[str, Any]:
        return get_json(self.url + "/bench/stats")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=5) as resp:
        data: dict[str, Any] = json.loads(resp.read())
        return data


def start_stream_server(step_s: float, tokens_per_step: int = 1, cpu: int | None = None) -> StreamServer:
    """The streaming server in its own process (pinned to `cpu` when given)."""

    def pin() -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})

    def cmd(fd: int) -> list[str]:
        return [sys.executable, __file__, "--port-fd", str(fd), "--step-s", str(step_s),
                "--tokens-per-step", str(tokens_per_step)]  # fmt: skip

    proc, url = start_reporting_port(cmd, "the bench server", preexec_fn=pin)
    return StreamServer(proc, url)


def run_fast(coro: Any) -> None:
    """uvloop where it is installed (the app runs under it), asyncio otherwise."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(coro)
        return
    with contextlib.suppress(KeyboardInterrupt):
        uvloop.run(coro)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="the benchmarks' streaming server")
    parser.add_argument("--port-fd", type=int, required=True)
    parser.add_argument("--step-s", type=float, required=True)
    parser.add_argument("--tokens-per-step", type=int, default=1)
    args = parser.parse_args()
    run_fast(serve(args.port_fd, args.step_s, args.tokens_per_step))
