"""vLLM's OpenAI-compatible HTTP surface over a `SimEngine`, independent of the HTTP server.

`SimApi` answers each route with a `Reply` (status, body, content type) or, for a streamed completion,
an `SseStream`, which renders the request's SSE events as the engine publishes its tokens;
`create_app` serves those answers as a starlette app (under uvicorn: sim/server.py).

Response bodies copy vLLM 0.32's shapes (fields the simulator has no value for are ``null``, as vLLM
sends them). Streamed chunks are assembled from pre-rendered JSON prefixes/suffixes per request: the
serving path must cost a few microseconds per chunk.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ConfigDict, ValidationError

from agentx_tui import __version__
from agentx_tui.sim.engine import RequestHandle, SimEngine
from agentx_tui.sim.kvcache import PromptBlocks

if TYPE_CHECKING:
    from starlette.applications import Starlette

_M = TypeVar("_M", bound=BaseModel)
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_DONE = b"data: [DONE]\n\n"


class _ApiError(Exception):
    def __init__(self, status: int, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.param = status, message, param


class StreamOptions(BaseModel):
    include_usage: bool = False
    continuous_usage_stats: bool = False


class _Sampling(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str | None = None
    max_tokens: int | None = None
    min_tokens: int = 0
    ignore_eos: bool = False
    temperature: float | None = None
    seed: int | None = None
    n: int = 1
    stream: bool = False
    stream_options: StreamOptions | None = None


class ChatRequest(_Sampling):
    messages: list[dict[str, Any]]
    max_completion_tokens: int | None = None


class CompletionRequest(_Sampling):
    prompt: str | list[int] | list[str] | list[list[int]] | None = None


class TokenizeRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str | None = None
    prompt: str | None = None
    messages: list[dict[str, Any]] | None = None
    add_special_tokens: bool = True
    add_generation_prompt: bool = True
    return_token_strs: bool = False


@dataclass(frozen=True, slots=True)
class Reply:
    """A whole answer. ``content_type`` None sends none (as for vLLM's empty /health answer)."""

    status: int
    body: bytes
    content_type: str | None = "application/json"


def json_reply(body: Any, status: int = 200) -> Reply:
    return Reply(status, _dumps(body).encode())


def _error(exc: _ApiError) -> Reply:
    kind = {400: "BadRequestError", 404: "NotFoundError"}.get(exc.status, "InternalServerError")
    body = {"error": {"message": exc.message, "type": kind, "param": exc.param, "code": exc.status}}
    return json_reply(body, exc.status)


def _choice(handle: RequestHandle, field: str, content: Any) -> dict[str, Any]:
    """A finished request's one choice in vLLM's non-streamed shape, `content` under `field` (the chat
    `message`, a completion's `text`)."""
    return {
        "index": 0,
        field: content,
        "logprobs": None,
        "finish_reason": handle.request.finish_reason,
        "stop_reason": None,
        "token_ids": None,
    }


class SseStream:
    """The SSE events of one streamed completion, in vLLM's shape: for chat, a first event with the
    assistant role; then one event per `render` with the tokens published since the last one (the
    last of them with ``finish_reason``); then, if asked, the usage event; then ``[DONE]``."""

    def __init__(self, api: SimApi, handle: RequestHandle, rid: str, obj: str, usage: bool, *, chat: bool) -> None:
        self.api = api
        self.handle = handle
        self.usage = usage
        self.chat = chat
        model = _dumps(api.model)
        self._head = f'{{"id":"{rid}","object":"{obj}","created":{api.created},"model":{model},"choices":'
        if chat:
            self._open = '[{"index":0,"delta":{"content":'
            self._close = '},"logprobs":null,"finish_reason":'
            self._tail = ',"token_ids":null}]}\n\n'
            self._final_tail = ',"stop_reason":null,"token_ids":null}]}\n\n'
        else:
            self._open = '[{"index":0,"text":'
            self._close = ',"logprobs":null,"finish_reason":'
            self._tail = self._final_tail = ',"stop_reason":null,"prompt_token_ids":null,"token_ids":null}]}\n\n'

    def opening(self) -> bytes:
        """What is sent before any token: the role event for chat, nothing for completions."""
        if not self.chat:
            return b""
        role = '[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}'
        return f"data: {self._head}{role}\n\n".encode()

    def render(self) -> tuple[bytes, bool]:
        """The events for the tokens published since the last call; and whether the stream has ended."""
        start, stop, done = self.handle.take()
        text = _dumps(self.api.engine.output_text(self.handle, start, stop))
        if not done:
            return f"data: {self._head}{self._open}{text}{self._close}null{self._tail}".encode(), False
        reason = _dumps(self.handle.request.finish_reason)
        out = f"data: {self._head}{self._open}{text}{self._close}{reason}{self._final_tail}"
        if self.usage:
            out += f'data: {self._head}[],"usage":{_dumps(self.api.usage(self.handle))}}}\n\n'
        return out.encode() + _DONE, True


Answer = Reply | SseStream


class SimApi:
    def __init__(self, engine: SimEngine) -> None:
        self.engine = engine
        self.profile = engine.profile
        self.model = engine.profile.model_id
        self.created = int(time.time())

    def _check_model(self, model: str | None) -> None:
        if model is not None and model != self.model:
            raise _ApiError(404, f"The model `{model}` does not exist.", "model")

    @staticmethod
    def _parse(body: bytes, cls: type[_M]) -> _M:
        try:
            data = json.loads(body)
        except ValueError as exc:
            raise _ApiError(400, f"Invalid JSON body: {exc}") from exc
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise _ApiError(400, f"{first['msg']} (parameter={loc})", loc or None) from exc

    def _limits(self, num_prompt: int, req: _Sampling, max_tokens: int | None) -> int:
        max_len = self.profile.max_model_len
        if req.n != 1:
            raise _ApiError(400, "The simulated engine supports n=1 only.", "n")
        if num_prompt >= max_len:
            raise _ApiError(
                400,
                f"This model's maximum context length is {max_len} tokens. However, your request has "
                f"{num_prompt} input tokens. Please reduce the length of the input messages.",
                "messages",
            )
        if max_tokens is None:
            return max_len - num_prompt
        if max_tokens < 1:
            raise _ApiError(400, f"max_tokens must be at least 1, got {max_tokens}.", "max_tokens")
        if max_tokens > max_len - num_prompt:
            raise _ApiError(
                400,
                f"'max_tokens' or 'max_completion_tokens' is too large: {max_tokens}. This model's maximum "
                f"context length is {max_len} tokens and your request has {num_prompt} input tokens "
                f"({max_tokens} > {max_len} - {num_prompt}).",
                "max_tokens",
            )
        if req.min_tokens > max_tokens:
            raise _ApiError(400, "min_tokens must be less than or equal to max_tokens.", "min_tokens")
        return max_tokens

    def usage(self, handle: RequestHandle) -> dict[str, Any]:
        r = handle.request
        return {
            "prompt_tokens": r.num_prompt,
            "total_tokens": r.num_prompt + r.num_output,
            "completion_tokens": r.num_output,
            "prompt_tokens_details": {"cached_tokens": r.num_cached_prompt or 0},
        }

    async def chat(self, body: bytes) -> Answer:
        try:
            req = self._parse(body, ChatRequest)
            self._check_model(req.model)
            prompt = self.engine.prompts.encode(req.messages)
            max_tokens = self._limits(prompt.num_tokens, req, req.max_completion_tokens or req.max_tokens)
        except _ApiError as exc:
            return _error(exc)
        handle, rid, stream = self._start(prompt, max_tokens, req, chat=True)
        if stream is not None:
            return stream
        text = await self._collect(handle)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": text,
            "refusal": None,
            "annotations": None,
            "audio": None,
            "function_call": None,
            "tool_calls": [],
            "reasoning": None,
        }
        choice = _choice(handle, "message", message)
        return self._reply(rid, "chat.completion", handle, choice, prompt_logprobs=None, prompt_token_ids=None)

    async def completions(self, body: bytes) -> Answer:
        try:
            req = self._parse(body, CompletionRequest)
            self._check_model(req.model)
            ids = self._prompt_ids(req.prompt)
            max_tokens = self._limits(len(ids), req, req.max_tokens)
        except _ApiError as exc:
            return _error(exc)
        # vLLM's /v1/completions defaults to 16 tokens, unlike chat.
        if req.max_tokens is None:
            max_tokens = min(16, max_tokens)
        handle, rid, stream = self._start(ids, max_tokens, req, chat=False)
        if stream is not None:
            return stream
        text = await self._collect(handle)
        choice = {**_choice(handle, "text", text), "prompt_logprobs": None, "prompt_token_ids": None}
        return self._reply(rid, "text_completion", handle, choice)

    def _start(
        self, prompt: list[int] | PromptBlocks, max_tokens: int, req: ChatRequest | CompletionRequest, *, chat: bool
    ) -> tuple[RequestHandle, str, SseStream | None]:
        """Submit the request: its handle, its id, and its SSE answer when it asked to stream."""
        handle = self.engine.submit(
            prompt, max_tokens=max_tokens, min_tokens=req.min_tokens, ignore_eos=req.ignore_eos, seed=req.seed
        )
        rid = f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex[:16]}"
        if not req.stream:
            return handle, rid, None
        opts = req.stream_options or StreamOptions()
        chunk = "chat.completion.chunk" if chat else "text_completion"
        return handle, rid, SseStream(self, handle, rid, chunk, opts.include_usage, chat=chat)

    def _reply(self, rid: str, kind: str, handle: RequestHandle, choice: dict[str, Any], **extra: None) -> Answer:
        """A whole (non-streamed) answer, keys in vLLM's order; `extra`: the endpoint's own null keys."""
        return json_reply(
            {
                "id": rid,
                "object": kind,
                "created": self.created,
                "model": self.model,
                "choices": [choice],
                "service_tier": None,
                "system_fingerprint": None,
                "usage": self.usage(handle),
                **extra,
                "kv_transfer_params": None,
            }
        )

    def _prompt_ids(self, prompt: str | list[int] | list[str] | list[list[int]] | None) -> list[int]:
        if prompt is None or prompt == "" or prompt == []:
            raise _ApiError(400, "Either prompt or prompt_embeds must be provided and non-empty.", "prompt")
        if isinstance(prompt, str):
            return self.engine.tokenizer.encode(prompt, add_bos=True)
        if len(prompt) != 1 and not isinstance(prompt[0], int):
            raise _ApiError(400, "The simulated engine takes one prompt per request.", "prompt")
        first = prompt[0]
        if isinstance(first, str):
            return self.engine.tokenizer.encode(first, add_bos=True)
        if isinstance(first, list):
            return list(first)
        return [int(t) for t in prompt if isinstance(t, int)]

    async def _collect(self, handle: RequestHandle) -> str:
        try:
            while not handle.done:
                await handle.wait()
                handle.take()
            return self.engine.output_text(handle, 0, handle.visible)
        finally:
            self.engine.abort(handle)

    async def tokenize(self, body: bytes) -> Answer:
        try:
            req = self._parse(body, TokenizeRequest)
            self._check_model(req.model)
            tok = self.engine.tokenizer
            if req.messages is not None:
                text = tok.render_chat(req.messages, add_generation_prompt=req.add_generation_prompt)
                ids = tok.encode(text)
            elif req.prompt is not None:
                text = req.prompt
                ids = tok.encode(text, add_bos=req.add_special_tokens)
            else:
                raise _ApiError(400, "Either prompt or messages must be provided.", "prompt")
        except _ApiError as exc:
            return _error(exc)
        strs = None
        if req.return_token_strs:
            strs = (["<|begin_of_text|>"] if len(ids) > len(tok.pieces(text)) else []) + tok.pieces(text)
        return json_reply(
            {"count": len(ids), "max_model_len": self.profile.max_model_len, "tokens": ids, "token_strs": strs}
        )

    async def models(self, body: bytes) -> Answer:
        perm = {
            "id": f"modelperm-{uuid.uuid5(uuid.NAMESPACE_URL, self.model).hex[:16]}",
            "object": "model_permission",
            "created": self.created,
            "allow_create_engine": False,
            "allow_sampling": True,
            "allow_logprobs": True,
            "allow_search_indices": False,
            "allow_view": True,
            "allow_fine_tuning": False,
            "organization": "*",
            "group": None,
            "is_blocking": False,
        }
        card = {
            "id": self.model,
            "object": "model",
            "created": self.created,
            "owned_by": "vllm",
            "root": self.model,
            "parent": None,
            "max_model_len": self.profile.max_model_len,
            "permission": [perm],
        }
        return json_reply({"object": "list", "data": [card]})

    async def version(self, body: bytes) -> Answer:
        p = self.profile
        sim = {
            "profile": p.name,
            "gpu": p.gpu_name,
            "gpus": p.gpus,
            "model": p.model_id,
            # The modelled GPU's peaks (dense BF16 TFLOP/s, HBM TB/s): what a client's MFU and MBU are of.
            "bf16_tflops": p.gpu.bf16_tflops,
            "hbm_tb_s": p.gpu.hbm_tb_s,
            # Its KV residency histograms record every block (vLLM's --kv-cache-metrics-sample 1).
            "kv_cache_metrics_sample": 1.0,
            "cpu_kv_bytes": p.num_cpu_blocks * p.block_bytes,
            "cpu_kv_gb_per_s": p.cpu_kv_gb_per_s if p.num_cpu_blocks else None,
        }
        return json_reply({"version": f"{__version__}-sim", "agentx_sim": sim})

    async def health(self, body: bytes) -> Answer:
        return Reply(200, b"", None)

    async def metrics(self, body: bytes) -> Answer:
        return Reply(200, generate_latest(self.engine.registry), CONTENT_TYPE_LATEST)

    def routes(self) -> dict[str, tuple[str, Callable[[bytes], Awaitable[Answer]]]]:
        """Path → (method, handler)."""
        return {
            "/v1/chat/completions": ("POST", self.chat),
            "/v1/completions": ("POST", self.completions),
            "/v1/models": ("GET", self.models),
            "/tokenize": ("POST", self.tokenize),
            "/version": ("GET", self.version),
            "/health": ("GET", self.health),
            "/metrics": ("GET", self.metrics),
        }


def create_app(engine: SimEngine, *, lifespan: Callable[[Starlette], Any] | None = None) -> Starlette:
    """The simulator's answers as a starlette app serving ``engine`` (the caller runs ``engine.run()``,
    e.g. from ``lifespan``, as sim/server.py does)."""
    # Imported here: the rest of the package (profiles, the engine model) needs no web framework.
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    api = SimApi(engine)

    def endpoint(handler: Callable[[bytes], Awaitable[Answer]]) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            answer = await handler(await request.body())
            if isinstance(answer, Reply):
                return Response(answer.body, answer.status, media_type=answer.content_type)
            return StreamingResponse(_events(engine, answer), media_type="text/event-stream")

        return run

    routes = [Route(path, endpoint(handler), methods=[method]) for path, (method, handler) in api.routes().items()]
    return Starlette(routes=routes, lifespan=lifespan)


async def _events(engine: SimEngine, stream: SseStream) -> AsyncIterator[bytes]:
    try:
        if opening := stream.opening():
            yield opening
        while True:
            await stream.handle.wait()
            data, done = stream.render()
            yield data
            if done:
                return
    finally:
        engine.abort(stream.handle)
