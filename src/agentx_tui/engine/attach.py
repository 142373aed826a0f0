"""What a URL is: probe `/health`, `/v1/models`, `/version` and `/metrics` of a server, once.

The `ServerInfo` it returns is shared by everything that talks to the server (the load driver, the
scrapers, the cost meter): nothing fetches `/v1/models` or `/metrics` again to learn the same facts.

A URL that is not an OpenAI-compatible vLLM (or SGLang, or the built-in simulator) gets a
`NotVllmError` saying what was found instead; an unreachable one a `TargetError` (exit 3).
"""

from __future__ import annotations

from typing import Any

import httpx

from agentx_tui.engine.info import ServerInfo
from agentx_tui.errors import NotVllmError, TargetError, UsageError
from agentx_tui.snapshot import Flavor
from agentx_tui.telemetry import describe_page


def normalize_url(url: str) -> str:
    url = url.strip().rstrip("/")
    if url.endswith("/v1"):
        url = url[: -len("/v1")]
    if "://" not in url:
        url = "http://" + url
    return url


# The probe only needs to see which metric names a page uses; they show in its first lines. Reading
# no more than this keeps a broken or hostile server's endless page out of memory.
_METRICS_HEAD_BYTES = 1 << 20


async def _read_head(response: httpx.Response, limit: int) -> bytes:
    head = bytearray()
    async for chunk in response.aiter_bytes():
        head += chunk
        if len(head) >= limit:
            break
    return bytes(head[:limit])


def _describe(response: httpx.Response) -> str:
    kind = response.headers.get("content-type", "no content type").split(";")[0]
    body = response.text.strip().replace("\n", " ")[:60]
    return f"HTTP {response.status_code} {kind}" + (f" ({body!r})" if body else "")


async def probe_server(url: str, *, api_key: str | None = None, timeout_s: float = 5.0) -> ServerInfo:
    url = normalize_url(url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(base_url=url, timeout=timeout_s, headers=headers) as client:
            models = await client.get("/v1/models")
            if models.status_code in (401, 403):
                raise TargetError(
                    f"{url} refused the API key (HTTP {models.status_code}).",
                    "Pass --api-key or set AGENTX_API_KEY / VLLM_API_KEY / OPENAI_API_KEY.",
                )
            model, max_len = _parse_models(url, models)
            health = await client.get("/health")
            version = await client.get("/version")
            async with client.stream("GET", "/metrics") as metrics:
                head = await _read_head(metrics, _METRICS_HEAD_BYTES) if metrics.status_code == 200 else b""
    except httpx.ConnectError as exc:
        raise TargetError(
            f"Could not connect to {url}: connection refused or host unreachable.",
            "Check that the server is running and the host and port are right.",
        ) from exc
    except httpx.TimeoutException as exc:
        raise TargetError(f"{url} did not answer within {timeout_s:.0f} s.", "Is the server frozen?") from exc
    except httpx.HTTPError as exc:
        raise TargetError(f"Talking to {url} failed: {exc}.", "Check the URL.") from exc
    except httpx.InvalidURL as exc:  # not an HTTPError: raised while building the request
        raise UsageError(f"{url} is not a usable URL: {exc}.", "Write it like http://HOST:8000.") from exc
    if health.status_code != 200:
        raise TargetError(f"{url}/health answered {_describe(health)}: the server is not healthy yet.")
    engine_version, sim = _parse_version(version)
    page = describe_page(head.decode("utf-8", errors="replace"))
    flavor: Flavor = "sim" if sim is not None else page.flavor or "unknown"
    return ServerInfo(
        url,
        model,
        max_model_len=max_len,
        engine_version=engine_version,
        flavor=flavor,
        has_metrics=bool(head),
        block_size=page.block_size,
        sim=sim,
    )


def _parse_models(url: str, response: httpx.Response) -> tuple[str, int | None]:
    try:
        payload = response.json()
        first = payload["data"][0]
        model = str(first["id"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise NotVllmError(
            f"{url} is not an OpenAI-compatible vLLM server: /v1/models answered {_describe(response)}.",
            "Check the URL and port (vLLM listens on 8000 by default).",
        ) from exc
    max_len = first.get("max_model_len")
    return model, int(max_len) if isinstance(max_len, int | float) else None


def _parse_version(response: httpx.Response) -> tuple[str | None, dict[str, Any] | None]:
    if response.status_code != 200:
        return None, None
    try:
        payload = response.json()
    except ValueError:
        return None, None
    if not isinstance(payload, dict):
        return None, None
    sim = payload.get("agentx_sim")
    version = payload.get("version")
    return (str(version) if version is not None else None), (sim if isinstance(sim, dict) else None)
