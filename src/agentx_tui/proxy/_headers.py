"""Which headers a proxy forwards (RFC 7230 §6.1, RFC 9110 §7.6.1): everything but the hop-by-hop ones.

Hop-by-hop headers describe one connection (agent ↔ proxy, or proxy ↔ upstream), so a proxy must not
pass them on: the fixed list below, and any header the `Connection` header names. `Host` is rewritten
to the upstream's (aiohttp derives it from the upstream URL); `Content-Length` is recomputed from the
same body bytes, so it carries the same value. Every other header, the API key included, goes through
unchanged and in order, repeated headers (e.g. `Set-Cookie`) included.
"""

from __future__ import annotations

from collections.abc import Iterable

from multidict import CIMultiDict

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",  # not standard, but sent by old clients and meant for one hop
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
_REQUEST_ONLY = frozenset({"host", "content-length"})


def _named_by_connection(headers: Iterable[tuple[str, str]]) -> set[str]:
    named: set[str] = set()
    for name, value in headers:
        if name.lower() == "connection":
            named.update(token.strip().lower() for token in value.split(",") if token.strip())
    return named


def _forwarded(headers: Iterable[tuple[str, str]], also_drop: frozenset[str]) -> CIMultiDict[str]:
    items = list(headers)
    drop = HOP_BY_HOP | also_drop | _named_by_connection(items)
    return CIMultiDict((name, value) for name, value in items if name.lower() not in drop)


def request_headers(headers: Iterable[tuple[str, str]]) -> CIMultiDict[str]:
    """The agent's request headers as the upstream must get them."""
    return _forwarded(headers, _REQUEST_ONLY)


def response_headers(headers: Iterable[tuple[str, str]]) -> CIMultiDict[str]:
    """The upstream's response headers as the agent must get them (`Content-Length` kept: the body is
    passed through byte for byte, never decompressed or re-encoded)."""
    return _forwarded(headers, frozenset())
