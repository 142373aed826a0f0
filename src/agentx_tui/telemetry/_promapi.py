"""The Prometheus HTTP API over httpx: each call one request with a hard deadline and a size cap.

Every failure becomes a `PromError` holding one sentence that names the server by its URL without
user-info (``https://user:pw@host`` is shown as ``https://host``) and never holds a credential: the
bearer token and header values live only in the client's headers, and any text the server sends back
is masked with them before it reaches a message.

No Prometheus client library: the API is four JSON endpoints, httpx is already the project's control
plane client, and `prometheus-api-client` would bring pandas and numpy for none of it.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterable
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx

from agentx_tui.redaction import redact

Sample = tuple[dict[str, str], float]
Vector = list[Sample]
PromErrorKind = Literal["unreachable", "timeout", "auth", "query", "server", "not_prometheus"]

# A fleet's worth of series is a few MB of JSON; a selector that matches a whole shared Prometheus
# must not make a tick hold hundreds of MB.
MAX_ANSWER_BYTES = 32 * 1024 * 1024
_ERROR_TEXT_CHARS = 200


class PromError(Exception):
    """A call failed. ``sentence`` says why in one sentence (no credentials); ``kind`` sorts it."""

    def __init__(self, kind: PromErrorKind, sentence: str) -> None:
        super().__init__(sentence)
        self.kind: PromErrorKind = kind
        self.sentence = sentence


def shown_url(url: str) -> str:
    """``url`` without user-info, query or fragment: safe for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


class PromApi:
    """Calls to one Prometheus-compatible server (Prometheus, Thanos, Mimir, VictoriaMetrics…)."""

    def __init__(self, base_url: str, *, client: httpx.AsyncClient, secrets: Iterable[str] = ()) -> None:
        self.base_url = base_url.rstrip("/")
        self.shown = shown_url(base_url)
        self._client = client
        self._secrets = tuple(s for s in secrets if s)

    def __repr__(self) -> str:
        return f"PromApi({self.shown!r})"

    def _clean(self, text: str) -> str:
        return redact(text, self._secrets)

    async def query(self, promql: str, timeout_s: float, at: float | None = None) -> Vector:
        """An instant query, evaluated at unix time ``at`` on Prometheus's clock (its now when None)."""
        # POST: a fleet's selector and `or` chains can outgrow a URL; Prometheus, Thanos and Mimir
        # all take form-encoded queries. `timeout` lets the server give up when we do.
        form = {"query": promql, "timeout": f"{timeout_s:.3f}"}
        if at is not None:
            form["time"] = f"{at:.3f}"
        return _vector(await self._call("POST", "/api/v1/query", form, timeout_s), self.shown)

    async def get(self, path: str, params: dict[str, str], timeout_s: float) -> Any:
        return await self._call("GET", path, params, timeout_s)

    async def _call(self, method: str, path: str, params: dict[str, str], timeout_s: float) -> Any:
        url = self.base_url + path
        request = self._client.build_request(
            method,
            url,
            timeout=timeout_s,
            data=params if method == "POST" else None,
            params=params if method == "GET" else None,
        )
        try:
            async with asyncio.timeout(timeout_s):
                response = await self._client.send(request, stream=True)
                try:
                    body = await self._read(response)
                finally:
                    await response.aclose()
                status = response.status_code
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise PromError("timeout", f"Prometheus at {self.shown} did not answer within {timeout_s:g} s") from exc
        except httpx.ConnectError as exc:
            raise PromError(
                "unreachable", f"Prometheus at {self.shown} cannot be reached (connection refused or host unreachable)"
            ) from exc
        except httpx.HTTPError as exc:
            raise PromError("unreachable", f"Prometheus at {self.shown} failed: {type(exc).__name__}") from exc
        return self._answer(path, status, body)

    async def _read(self, response: httpx.Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise PromError(
                    "server",
                    f"Prometheus at {self.shown} sent an answer over {MAX_ANSWER_BYTES // 2**20} MiB "
                    "(narrow the selector)",
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _answer(self, path: str, status: int, body: bytes) -> Any:
        if status in (401, 403):
            raise PromError("auth", f"Prometheus at {self.shown} refused access (HTTP {status})")
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if not isinstance(answer, dict) or answer.get("status") not in ("success", "error"):
            if status == 404:
                raise PromError("not_prometheus", f"{self.shown} has no Prometheus API at {path} (HTTP 404)")
            if status >= 500 or status == 429:
                raise PromError("server", f"Prometheus at {self.shown} answered HTTP {status}")
            raise PromError(
                "not_prometheus", f"{self.shown} answered HTTP {status} with something that is not the Prometheus API"
            )
        if answer["status"] == "error":
            raise self._api_error(status, answer)
        return answer.get("data")

    def _api_error(self, status: int, answer: dict[str, Any]) -> PromError:
        text = self._clean(str(answer.get("error", "")))[:_ERROR_TEXT_CHARS].rstrip(". ")
        error_type = str(answer.get("errorType", ""))
        if error_type == "bad_data" or status == 400:
            return PromError("query", f"Prometheus at {self.shown} rejected a query: {text}")
        if error_type == "timeout":
            return PromError("timeout", f"Prometheus at {self.shown} timed out evaluating a query: {text}")
        return PromError("server", f"Prometheus at {self.shown} failed a query (HTTP {status}, {error_type}): {text}")


def _value(raw: Any) -> float | None:
    try:
        value = float(raw[1])
    except (TypeError, ValueError, IndexError):
        return None
    return value if math.isfinite(value) else None  # histogram_quantile gives NaN for an empty window


def _vector(data: Any, shown: str) -> Vector:
    if not isinstance(data, dict):
        raise PromError("not_prometheus", f"{shown} sent a query answer without data")
    kind, result = data.get("resultType"), data.get("result")
    if kind == "scalar":
        value = _value(result)
        return [] if value is None else [({}, value)]
    if kind != "vector" or not isinstance(result, list):
        raise PromError("not_prometheus", f"{shown} sent a query answer of type {kind!r}, not a vector")
    out: Vector = []
    for item in result:
        if not isinstance(item, dict):
            continue
        value = _value(item.get("value"))
        labels = item.get("metric")
        if value is not None and isinstance(labels, dict):
            out.append((labels, value))  # JSON object keys and Prometheus label values are strings
    return out
