"""One GET of a metrics page with a hard deadline; every failure becomes a short reason string."""

from __future__ import annotations

import asyncio

import httpx


class FetchError(Exception):
    """The page could not be read; ``reason`` is a few words for a status line."""

    def __init__(self, reason: str, *, answered: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.answered = answered  # the server answered (with a non-2xx status)


async def fetch_text(client: httpx.AsyncClient, url: str, timeout_s: float) -> str:
    # httpx's timeout applies per phase; the outer deadline bounds the whole request, so a server
    # that trickles bytes cannot hold a tick.
    try:
        async with asyncio.timeout(timeout_s):
            response = await client.get(url, timeout=timeout_s)
    except TimeoutError as exc:
        raise FetchError(f"no answer within {timeout_s:g} s") from exc
    except httpx.TimeoutException as exc:
        raise FetchError(f"no answer within {timeout_s:g} s") from exc
    except httpx.ConnectError as exc:
        raise FetchError("connection refused or host unreachable") from exc
    except httpx.HTTPError as exc:
        raise FetchError(f"{type(exc).__name__}") from exc
    if response.status_code != 200:
        raise FetchError(f"HTTP {response.status_code} from {url}", answered=True)
    return response.text
