"""vLLM's OpenAI-compatible HTTP surface over a `SimEngine` (starlette).

Response bodies copy vLLM 0.32's shapes (fields the simulator has no value for are ``null``, as vLLM
sends them). Streamed chunks are assembled from pre-rendered JSON prefixes/suffixes per request: the
serving path must cost a few microseconds per chunk.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from agentx_tui import __version__
from agentx_tui.sim.engine import RequestHandle, SimEngine

_M = TypeVar("_M", bound=BaseModel)
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


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


def _error(exc: _ApiError) -> JSONResponse:
    kind = {400: "BadRequestError", 404: "NotFoundError"}.get(exc.status, "InternalServerError")
    body = {"error": {"message": exc.message, "type": kind, "param": exc.param, "code": exc.status}}
    return JSONResponse(body, status_code=exc.status)


class SimApi:
    def __init__(self, engine: SimEngine) -> None:
        self.engine = engine
        self.profile = engine.profile
        self.model = engine.profile.model_id
        self.created = int(time.time())

    def _check_model(self, model: str | None) -> None:
        if model is not None and model != self.model:
            raise _ApiError(404, f"The model `{model}` does not exist.", "model")

    async def _parse(self, request: Request, cls: type[_M]) -> _M:
        try:
            body = await request.json()
        except ValueError as exc:
            raise _ApiError(400, f"Invalid JSON body: {exc}") from exc
        try:
            return cls.model_validate(body)
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

    def _usage(self, handle: RequestHandle) -> dict[str, Any]:
        r = handle.request
        return {
            "prompt_tokens": r.num_prompt,
            "total_tokens": r.num_prompt + r.num_output,
            "completion_tokens": r.num_output,
            "prompt_tokens_details": {"cached_tokens": r.num_cached_prompt or 0},
        }

    async def chat(self, request: Request) -> Response:
        try:
            req = await self._parse(request, ChatRequest)
            self._check_model(req.model)
            ids = self.engine.tokenizer.encode_chat(req.messages)
            max_tokens = self._limits(len(ids), req, req.max_completion_tokens or req.max_tokens)
        except _ApiError as exc:
            return _error(exc)
        handle = self.engine.submit(
            ids, max_tokens=max_tokens, min_tokens=req.min_tokens, ignore_eos=req.ignore_eos, seed=req.seed
        )
        rid = f"chatcmpl-{uuid.uuid4().hex[:16]}"
        if req.stream:
            opts = req.stream_options or StreamOptions()
            return self._stream(handle, rid, "chat.completion.chunk", opts.include_usage, chat=True)
        text = await self._collect(handle)
        body = {
            "id": rid,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": text,
                        "refusal": None,
                        "annotations": None,
                        "audio": None,
                        "function_call": None,
                        "tool_calls": [],
                        "reasoning": None,
                    },
                    "logprobs": None,
                    "finish_reason": handle.request.finish_reason,
                    "stop_reason": None,
                    "token_ids": None,
                }
            ],
            "service_tier": None,
            "system_fingerprint": None,
            "usage": self._usage(handle),
            "prompt_logprobs": None,
            "prompt_token_ids": None,
            "kv_transfer_params": None,
        }
        return JSONResponse(body)

    async def completions(self, request: Request) -> Response:
        try:
            req = await self._parse(request, CompletionRequest)
            self._check_model(req.model)
            ids = self._prompt_ids(req.prompt)
            max_tokens = self._limits(len(ids), req, req.max_tokens)
        except _ApiError as exc:
            return _error(exc)
        # vLLM's /v1/completions defaults to 16 tokens, unlike chat.
        if req.max_tokens is None:
            max_tokens = min(16, max_tokens)
        handle = self.engine.submit(
            ids, max_tokens=max_tokens, min_tokens=req.min_tokens, ignore_eos=req.ignore_eos, seed=req.seed
        )
        rid = f"cmpl-{uuid.uuid4().hex[:16]}"
        if req.stream:
            opts = req.stream_options or StreamOptions()
            return self._stream(handle, rid, "text_completion", opts.include_usage, chat=False)
        text = await self._collect(handle)
        body = {
            "id": rid,
            "object": "text_completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "text": text,
                    "logprobs": None,
                    "finish_reason": handle.request.finish_reason,
                    "stop_reason": None,
                    "token_ids": None,
                    "prompt_logprobs": None,
                    "prompt_token_ids": None,
                }
            ],
            "service_tier": None,
            "system_fingerprint": None,
            "usage": self._usage(handle),
            "kv_transfer_params": None,
        }
        return JSONResponse(body)

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
        parts: list[str] = []
        try:
            while True:
                text, _, done = await handle.next_chunk()
                parts.append(text)
                if done:
                    return "".join(parts)
        finally:
            self.engine.abort(handle)

    def _stream(self, handle: RequestHandle, rid: str, obj: str, usage: bool, *, chat: bool) -> Response:
        model = _dumps(self.model)
        head = f'{{"id":"{rid}","object":"{obj}","created":{self.created},"model":{model},"choices":'
        if chat:
            role = '{"role":"assistant","content":""}'
            first = f'{head}[{{"index":0,"delta":{role},"logprobs":null,"finish_reason":null}}]}}'
            open_, close = '[{"index":0,"delta":{"content":', '},"logprobs":null,"finish_reason":'
            extra = ',"token_ids":null'
        else:
            first = None
            open_, close = '[{"index":0,"text":', ',"logprobs":null,"finish_reason":'
            extra = ',"stop_reason":null,"prompt_token_ids":null,"token_ids":null'

        async def events() -> AsyncIterator[bytes]:
            try:
                if first is not None:
                    yield f"data: {first}\n\n".encode()
                while True:
                    text, _, done = await handle.next_chunk()
                    if done:
                        reason = _dumps(handle.request.finish_reason)
                        tail = extra if not chat else ',"stop_reason":null' + extra
                    else:
                        reason, tail = "null", extra
                    body = f"{head}{open_}{_dumps(text)}{close}{reason}{tail}}}]}}"
                    yield f"data: {body}\n\n".encode()
                    if done:
                        break
                if usage:
                    tail = f'{head}[],"usage":{_dumps(self._usage(handle))}}}'
                    yield f"data: {tail}\n\n".encode()
                yield b"data: [DONE]\n\n"
            finally:
                self.engine.abort(handle)

        return StreamingResponse(events(), media_type="text/event-stream")

    async def tokenize(self, request: Request) -> Response:
        try:
            req = await self._parse(request, TokenizeRequest)
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
        body = {
            "count": len(ids),
            "max_model_len": self.profile.max_model_len,
            "tokens": ids,
            "token_strs": strs,
        }
        return JSONResponse(body)

    async def models(self, request: Request) -> Response:
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
        return JSONResponse({"object": "list", "data": [card]})

    async def version(self, request: Request) -> Response:
        p = self.profile
        sim = {"profile": p.name, "gpu": p.gpu_name, "gpus": p.gpus, "model": p.model_id}
        return JSONResponse({"version": f"{__version__}-sim", "agentx_sim": sim})

    async def health(self, request: Request) -> Response:
        return Response(status_code=200)

    async def metrics(self, request: Request) -> Response:
        return Response(generate_latest(self.engine.registry), media_type=CONTENT_TYPE_LATEST)


def create_app(engine: SimEngine, *, lifespan: Callable[[Starlette], Any] | None = None) -> Starlette:
    """The starlette app serving ``engine`` (the caller runs ``engine.run()``; see `server`)."""
    api = SimApi(engine)
    routes: list[tuple[str, Callable[[Request], Awaitable[Response]], list[str]]] = [
        ("/v1/chat/completions", api.chat, ["POST"]),
        ("/v1/completions", api.completions, ["POST"]),
        ("/v1/models", api.models, ["GET"]),
        ("/tokenize", api.tokenize, ["POST"]),
        ("/version", api.version, ["GET"]),
        ("/health", api.health, ["GET"]),
        ("/metrics", api.metrics, ["GET"]),
    ]
    return Starlette(routes=[Route(p, h, methods=m) for p, h, m in routes], lifespan=lifespan)
