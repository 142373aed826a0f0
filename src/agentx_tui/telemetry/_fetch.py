"""One GET of a metrics page with a hard deadline and a size cap; every failure becomes a short
reason string."""

from __future__ import annotations

import asyncio

import httpx

# A real vLLM page is ~56 KB per engine (tiny model, vLLM 0.32); 8 MiB holds well over a hundred
# engines. Anything larger is refused unread: a hostile or broken server must not make the scraper
# hold tens of MB or spend seconds of the tick parsing them.
MAX_PAGE_BYTES = 8 * 1024 * 1024


class FetchError(Exception):
    """The page could not be read; ``reason`` is a few words for a status line."""

    def __init__(self, reason: str, *, answered: bool = False, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.answered = answered  # the server answered (with a non-2xx status, or a page too large)
        self.timed_out = timed_out  # no (whole) answer within the deadline: slow, or gone


async def _read_capped(response: httpx.Response, limit: int) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise FetchError(
            f"/metrics page of {int(declared) / 2**20:.0f} MiB is over the {limit // 2**20} MiB cap", answered=True
        )
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise FetchError(f"/metrics page is over the {limit // 2**20} MiB cap", answered=True)
        chunks.append(chunk)
    return b"".join(chunks)


async def fetch_text(client: httpx.AsyncClient, url: str, timeout_s: float, *, max_bytes: int = MAX_PAGE_BYTES) -> str:
    # httpx's timeout applies per phase; the outer deadline bounds the whole request, so a server
    # that trickles bytes cannot hold a tick. The body is streamed so that a huge page is cut off
    # at `max_bytes` instead of being read whole.
    try:
        async with asyncio.timeout(timeout_s), client.stream("GET", url, timeout=timeout_s) as response:
            if response.status_code != 200:
                raise FetchError(f"HTTP {response.status_code} from {url}", answered=True)
            body = await _read_capped(response, max_bytes)
            encoding = response.encoding or "utf-8"
    except (TimeoutError, httpx.TimeoutException) as exc:
        raise FetchError(f"no answer within {timeout_s:g} s", timed_out=True) from exc
    except httpx.ConnectError as exc:
        raise FetchError("connection refused or host unreachable") from exc
    except httpx.HTTPError as exc:
        raise FetchError(f"{type(exc).__name__}") from exc
    return body.decode(encoding, errors="replace")
