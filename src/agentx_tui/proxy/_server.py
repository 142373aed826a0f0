"""The transparent proxy: every request goes to the upstream unchanged, every answer streams back chunk by
chunk as it arrives; model calls are also watched, and handed to an observer (docs/capture.md).

aiohttp on both sides (docs/vllm.md measured its compiled HTTP parser at half httpx's CPU per streamed
token). Per chunk the proxy does one read, one write to the agent's socket, then scans the chunk it
has already passed on: the agent never waits for the observation.

What is transparent: method, path and query (raw, never re-encoded), headers (minus hop-by-hop ones,
`_headers.py`), body (read whole first: a request is bounded, and the proxy needs a model call's
body), status, reason, response headers and body (never decompressed, never buffered whole). An
upstream that cannot be reached, refuses, or does not answer in time gives the agent a 502 with a
one-line JSON error; one that fails mid-answer cuts the agent's connection, as a direct connection
would have been cut. Either way the proxy counts it, says so in one sentence, and keeps serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Protocol

import aiohttp
from aiohttp import web
from yarl import URL

from agentx_tui.errors import UsageError
from agentx_tui.measure import LogHistogram, SseScanner
from agentx_tui.proxy._call import ProxiedCall
from agentx_tui.proxy._headers import request_headers, response_headers
from agentx_tui.proxy._request import call_kind, read_call
from agentx_tui.snapshot import Percentiles

log = logging.getLogger(__name__)

DEFAULT_SESSION_HEADER = "X-Session-ID"
CONNECT_TIMEOUT_S = 10.0
IDLE_TIMEOUT_S = 600.0  # no byte from the upstream for this long (before or during an answer): it failed
SHUTDOWN_GRACE_S = 2.0  # open answers get this long to finish when the proxy closes, then are cut
MAX_REQUEST_BYTES = 256 * 1024 * 1024
_EVENT_EVERY_S = 5.0
# Headers that carry credentials: kept with a model call (in memory) for the server's /tokenize.
_AUTH_HEADERS = frozenset({"authorization", "api-key", "x-api-key"})
_UPSTREAM_ERRORS = (aiohttp.ClientError, TimeoutError, OSError)


class ProxyObserver(Protocol):
    """Gets every model call (chat or text completion) the proxy forwards, on the proxy's event loop.

    `call_started` comes just before the request goes upstream (its body already parsed into
    `call.request`); `call_ended` once the answer is over, completed or not (`call.error`). Both must
    return quickly: they run between chunks of every other stream."""

    def call_started(self, call: ProxiedCall) -> None: ...

    def call_ended(self, call: ProxiedCall) -> None: ...


def parent_header(session_header: str) -> str:
    """The header naming a session's parent: X-Session-ID → X-Parent-Session-ID, Session → Parent-Session."""
    if session_header[:2].lower() == "x-":
        return f"{session_header[:2]}Parent-{session_header[2:]}"
    return f"Parent-{session_header}"


@dataclass(frozen=True, slots=True)
class ProxyHealth:
    """The proxy's own figures: what it forwarded, what failed upstream, what it added."""

    url: str
    upstream: str  # scheme://host:port/base, credentials left out
    proxied_requests: int  # model calls (chat and text completions) forwarded, whatever their outcome
    other_requests: int  # every other request forwarded (/v1/models, /tokenize, /health, ...)
    in_flight: int
    upstream_errors: int  # 502s answered, and answers the upstream cut off
    last_upstream_error: str | None  # one sentence, for the dashboard's log
    added_ttft: Percentiles  # upstream's first body bytes → handed to the agent's socket (model calls)
    agent_cancelled: int  # answers the agent hung up on


class _Stream:
    """An answer being relayed: when its upstream last sent bytes (the idle watch reads it)."""

    __slots__ = ("last_read", "upstream")

    def __init__(self, upstream: aiohttp.ClientResponse) -> None:
        self.upstream = upstream
        self.last_read = time.monotonic()


class ProxyServer:
    """`await start()`, point agents at `url`, read `health()` and `events()` each tick, `await close()`."""

    def __init__(
        self,
        upstream_url: str,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        observer: ProxyObserver | None = None,
        session_header: str = DEFAULT_SESSION_HEADER,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        shutdown_grace_s: float = SHUTDOWN_GRACE_S,
        max_request_bytes: int = MAX_REQUEST_BYTES,
    ) -> None:
        self._upstream = _upstream_base(upstream_url)
        self.upstream = str(self._upstream.with_user(None).with_password(None))
        self.host, self._port = host, port
        self.observer = observer
        self.session_header = session_header
        self.parent_header = parent_header(session_header)
        self.connect_timeout_s = connect_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.shutdown_grace_s = shutdown_grace_s
        self.max_request_bytes = max_request_bytes
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None
        self._open: dict[int, _Stream] = {}
        self._watch: asyncio.Task[None] | None = None
        self._closed = False
        self._requests = self._other = self._in_flight = 0
        self._upstream_errors = self._cancelled = 0
        self._last_error: str | None = None
        self._added = LogHistogram()
        self._events: deque[str] = deque(maxlen=200)
        self._pending_events: dict[str, tuple[int, str]] = {}
        self._last_event: dict[str, float] = {}

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._port}"

    async def start(self) -> None:
        """Listen; a port that cannot be bound is a `UsageError` (said before any load is sent)."""
        self._http = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            # The proxy adds nothing of its own: no cookies kept between agents, no default headers,
            # no decompression (the body passes through as the upstream encoded it).
            cookie_jar=aiohttp.DummyCookieJar(),
            skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
            auto_decompress=False,
            timeout=aiohttp.ClientTimeout(
                total=None, sock_connect=self.connect_timeout_s, sock_read=self.idle_timeout_s
            ),
            trust_env=False,
        )
        app = web.Application(client_max_size=self.max_request_bytes)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=self.shutdown_grace_s)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self._port, backlog=4096)
        try:
            await site.start()
        except OSError as exc:
            await self._shutdown()
            raise UsageError(
                f"The proxy cannot listen on {self.host}:{self._port}: {exc.strerror or exc}.",
                "Choose another --proxy port (0 picks a free one).",
            ) from exc
        server = site._server  # aiohttp has no public accessor for the bound port (port 0 → a free one)
        sockets = getattr(server, "sockets", None) or ()
        if sockets:
            self._port = int(sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop listening; open answers get `shutdown_grace_s` to finish, then are cut. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        await self._shutdown()

    async def _shutdown(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
            self._watch = None
        if self._http is not None:
            http, self._http = self._http, None
            await http.close()

    # -- figures ---------------------------------------------------------------------------------
    def health(self) -> ProxyHealth:
        return ProxyHealth(
            url=self.url,
            upstream=self.upstream,
            proxied_requests=self._requests,
            other_requests=self._other,
            in_flight=self._in_flight,
            upstream_errors=self._upstream_errors,
            last_upstream_error=self._last_error,
            added_ttft=self._added.percentiles(),
            agent_cancelled=self._cancelled,
        )

    def events(self) -> list[str]:
        """One-line messages for the dashboard's log since the last call (no header values in them)."""
        self._flush_events(time.monotonic(), force=False)
        out = list(self._events)
        self._events.clear()
        return out

    def _event(self, kind: str, message: str) -> None:
        """Say `message` at once, then at most every few seconds per kind, with how many happened."""
        count, _ = self._pending_events.get(kind, (0, ""))
        self._pending_events[kind] = (count + 1, message)
        self._flush_events(time.monotonic(), force=False)

    def _flush_events(self, now: float, *, force: bool) -> None:
        for kind, (count, message) in list(self._pending_events.items()):
            if force or now - self._last_event.get(kind, -1e9) >= _EVENT_EVERY_S:
                del self._pending_events[kind]
                self._last_event[kind] = now
                self._events.append(message if count == 1 else f"{message} ({count} in the last seconds)")

    # -- one request -----------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        received = time.monotonic()
        assert self._http is not None
        body = await request.read()
        kind = call_kind(request.method, request.path)
        url = URL(str(self._upstream) + request.raw_path, encoded=True)
        opening = self._http.request(
            request.method,
            url,
            headers=request_headers(request.headers.items()),
            data=body if body else None,
            allow_redirects=False,
        )
        if kind is None:
            self._other += 1
            return await self._relay(request, opening, None)
        self._requests += 1
        if self.observer is None:
            return await self._relay(request, opening, None)
        headers = request.headers
        call = ProxiedCall(
            kind=kind,
            body=body,
            received_at=received,
            session_name=headers.get(self.session_header) or None,
            parent_name=headers.get(self.parent_header) or None,
            auth=tuple((k, v) for k, v in headers.items() if k.lower() in _AUTH_HEADERS),
        )
        # Read before it is sent: about half a millisecond for a 200 KB agent history. Sending first (a
        # task, read while it goes) would cost the request an extra turn of the event loop instead, and
        # under load a turn (every other stream's chunks) can take longer than the reading.
        call.request = read_call(kind, body)
        self._notify("call_started", call)
        return await self._relay(request, opening, call)

    async def _relay(
        self, request: web.Request, opening: Awaitable[aiohttp.ClientResponse], call: ProxiedCall | None
    ) -> web.StreamResponse:
        self._in_flight += 1
        try:
            try:
                upstream = await opening
            except _UPSTREAM_ERRORS as exc:
                return self._bad_gateway(exc, call)
            with contextlib.closing(upstream):
                return await self._stream(request, upstream, call)
        finally:
            self._in_flight -= 1
            if call is not None:
                if not call.ended_at:
                    call.finish(time.monotonic(), "cancelled", "the proxy stopped before the answer ended")
                self._notify("call_ended", call)

    async def _stream(
        self, request: web.Request, upstream: aiohttp.ClientResponse, call: ProxiedCall | None
    ) -> web.StreamResponse:
        if call is not None:
            call.status = upstream.status
            if upstream.content_type == "text/event-stream":
                call.scan = SseScanner(want_finish=True, any_tokens=True)
        resp = web.StreamResponse(
            status=upstream.status, reason=upstream.reason, headers=response_headers(upstream.headers.items())
        )
        stream = _Stream(upstream)
        self._watch_stream(stream)
        try:
            try:
                await resp.prepare(request)
            except ConnectionError:
                return self._agent_gone(resp, call)
            content = upstream.content
            scan = call.scan if call is not None else None
            first = True
            while True:
                try:
                    data = await content.readany()
                except _UPSTREAM_ERRORS as exc:
                    message = self._upstream_failed(exc)
                    if call is not None:
                        call.finish(time.monotonic(), _kind(exc), message)
                    return _cut(request, resp)
                if not data:
                    break
                now = stream.last_read = time.monotonic()
                try:
                    await resp.write(data)
                except ConnectionError:
                    return self._agent_gone(resp, call)
                if call is not None:
                    if first:
                        first = False
                        call.first_byte_at = now
                        self._added.add(max(time.monotonic() - now, 1e-7))
                    if scan is not None:
                        scan.feed(data, now)
                    else:
                        call.keep(data)
            if call is not None:
                call.body_relayed = True
            try:
                await resp.write_eof()
            except ConnectionError:
                return self._agent_gone(resp, call, body_relayed=True)
            if call is not None:
                call.finish(time.monotonic())
            return resp
        finally:
            self._open.pop(id(stream), None)

    def _agent_gone(
        self, resp: web.StreamResponse, call: ProxiedCall | None, *, body_relayed: bool = False
    ) -> web.StreamResponse:
        """The agent's connection failed a write. An agent that already had its whole answer (every
        body byte, or a streamed answer's `[DONE]`: `ProxiedCall.answer_relayed`) just closed early:
        nobody hung up, and its call completed."""
        if not (call.answer_relayed if call is not None else body_relayed):
            self._cancelled += 1
        if call is not None:
            call.finish(time.monotonic(), "cancelled", "the agent closed the connection")
        resp.force_close()
        return resp

    def _bad_gateway(self, exc: BaseException, call: ProxiedCall | None) -> web.Response:
        message = self._upstream_failed(exc)
        if call is not None:
            call.status = 502
            call.finish(time.monotonic(), _kind(exc), message)
        body = json.dumps({"error": {"message": message, "type": "proxy_upstream_error"}})
        return web.Response(status=502, text=body, content_type="application/json")

    def _upstream_failed(self, exc: BaseException) -> str:
        """Count an upstream failure and say it; its one-sentence description."""
        message = _describe(exc, self.upstream, self.idle_timeout_s)
        self._upstream_errors += 1
        self._last_error = message
        self._event("upstream", f"proxy: {message}")
        return message

    def _notify(self, what: str, call: ProxiedCall) -> None:
        if self.observer is None:
            return
        try:
            getattr(self.observer, what)(call)
        except Exception as exc:  # a bug in watching must never cost an agent its answer
            log.exception("proxy observer failed")
            self._event("observer", f"proxy: watching a call failed ({type(exc).__name__}); forwarding goes on")

    # -- idle upstreams ----------------------------------------------------------------------------
    def _watch_stream(self, stream: _Stream) -> None:
        """An upstream silent for `idle_timeout_s` fails as a timeout. One sweep every few seconds over
        the open answers replaces aiohttp's per-read timer (load/sending/streaming.py measured that timer at a
        tenth of a client's CPU per token); aiohttp's `sock_read` still covers the wait for headers."""
        connection = stream.upstream.connection
        if connection is not None and connection.protocol is not None:
            connection.protocol.read_timeout = None
        self._open[id(stream)] = stream
        if self._watch is None:
            self._watch = asyncio.get_running_loop().create_task(self._sweeper())

    async def _sweeper(self) -> None:
        every = min(self.idle_timeout_s / 4, 5.0)
        try:
            while self._open:
                await asyncio.sleep(every)
                now = time.monotonic()
                for stream in [s for s in self._open.values() if now - s.last_read > self.idle_timeout_s]:
                    self._open.pop(id(stream), None)
                    stream.upstream.content.set_exception(TimeoutError(f"no data for {self.idle_timeout_s:g} s"))
                    stream.upstream.close()
        finally:
            self._watch = None


def _cut(request: web.Request, resp: web.StreamResponse) -> web.StreamResponse:
    """The upstream failed mid-answer: close the agent's connection (what was sent still goes out), so
    the agent sees a broken answer, as a direct connection would have shown it; a clean end would pass
    a truncated answer off as whole. (aiohttp then fails to end the response, quietly.)"""
    resp.force_close()
    if request.transport is not None:
        request.transport.close()
    return resp


def _upstream_base(url: str) -> URL:
    try:
        parsed = URL(url)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"The proxy's upstream {url!r} is not a URL.") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise UsageError(f"The proxy's upstream must be an http(s) URL with a host, not {url!r}.")
    return parsed.with_query(None).with_fragment(None).with_path(parsed.path.rstrip("/"))


def _kind(exc: BaseException) -> str:
    """The failure's kind in the load client's names (measure/sse.py)."""
    return "timeout" if isinstance(exc, TimeoutError) else "connection"


def _describe(exc: BaseException, upstream: str, idle_s: float) -> str:
    """One sentence, with no header value in it (exception texts name hosts and ports, never headers)."""
    if isinstance(exc, aiohttp.ClientConnectorError):
        reason = exc.os_error.strerror or type(exc.os_error).__name__
        return f"the upstream {upstream} cannot be reached ({reason})"
    if isinstance(exc, TimeoutError):
        return f"the upstream {upstream} did not answer in time (no data for {idle_s:g} s, or no connection)"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return f"the upstream {upstream} closed the connection before its answer ended"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return f"the upstream {upstream} sent a broken answer ({type(exc).__name__})"
    return f"the upstream {upstream} failed ({type(exc).__name__})"
