"""Streaming POSTs over keep-alive HTTP/1.1 connections, the response parsed inside the protocol.

The load client's hot path reads ~140 SSE events per answer, one network read each at a few users.
Through aiohttp every read goes parser → `StreamReader` → a future → a task step of the reading
coroutine before our byte scan sees it; here the protocol's `data_received` hands the read to
httptools (the parser uvicorn uses) and the body straight to the `SseScanner`, and a coroutine wakes
only when the answer is complete. bench/stream_reader.py measures the two side by side on the built-in
simulator. Everything else the client sends (calibration, control calls) stays on aiohttp.

A `StreamPool` serves one server (`http://` or `https://`, with a path prefix if the URL has one): it
keeps idle connections for reuse, and sends a request again on a fresh connection when a reused one
turns out to have been closed by the server while idle (uvicorn closes idle connections after 5 s),
since the server never read that request. Failures surface as `WireError` with the same error kinds
`stream_chat` reports (`connection`, `timeout`).
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import time
from collections.abc import Callable, Mapping
from typing import Protocol, cast
from urllib.parse import urlsplit

import httptools

from agentx_tui import __version__

ERROR_BODY_KEPT = 65_536  # of a non-200 answer, enough for its message (it is cut to 500 characters)
_FRAMING = (b"content-length", b"transfer-encoding")


class WireError(Exception):
    """A request that got no complete answer: `kind` is `connection` or `timeout`; `status` is the
    answer's HTTP status when its headers had arrived."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.status: int | None = None


class BodySink(Protocol):
    """Where a 200 answer's body goes, one network read at a time (an `SseScanner`)."""

    def feed(self, data: bytes, now: float) -> int: ...


class Answer:
    """One response as it arrives: status, a kept error body, and whether it is complete. The
    callbacks are httptools'."""

    __slots__ = ("_body", "complete", "error_body", "framed", "keep_alive", "parser", "sink", "status")

    def __init__(self, sink: BodySink) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.sink = sink
        self.status: int | None = None
        self.framed = False  # the body's end is marked (a length or chunks), not the connection's close
        self.keep_alive = False
        self.complete = False
        self.error_body = bytearray()
        self._body = b""  # of the network read being parsed: its chunks, joined

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() in _FRAMING:
            self.framed = True

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()

    def on_body(self, body: bytes) -> None:
        if self.status == 200:
            self._body = self._body + body if self._body else body  # (one chunk a read, mostly: no copy)
        elif len(self.error_body) < ERROR_BODY_KEPT:
            self.error_body += body

    def on_message_complete(self) -> None:
        self.keep_alive = self.parser.should_keep_alive()
        self.complete = True

    def read(self, data: bytes, now: float) -> None:
        """One network read: parsed, and its body bytes fed to the sink in one piece, so that events
        spread over several chunks of one read share that read's time."""
        self.parser.feed_data(data)
        body = self._body
        if body:
            self._body = b""
            self.sink.feed(body, now)


class _Connection(asyncio.Protocol):
    __slots__ = ("answer", "closed", "done", "got_bytes", "pool", "transport")

    def __init__(self, pool: StreamPool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.answer: Answer | None = None
        self.done: asyncio.Future[None] | None = None
        self.got_bytes = False
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # (uvloop's transports are not its subclasses)

    def send(self, head: bytes, body: bytes, answer: Answer) -> asyncio.Future[None]:
        assert self.transport is not None
        self.answer, self.got_bytes = answer, False
        self.done = asyncio.get_running_loop().create_future()
        self.transport.writelines((head, body))
        return self.done

    def data_received(self, data: bytes) -> None:
        answer = self.answer
        if answer is None:  # bytes nobody asked for: this connection is not in a state to reuse
            self.abort()
            return
        self.got_bytes = True
        try:
            answer.read(data, time.monotonic())
        except httptools.HttpParserError as exc:
            self._end(WireError("connection", f"not an HTTP answer ({exc})"))
            self.abort()
            return
        except Exception as exc:  # the sink's own failure ends this request, never the event loop
            self._end(exc)
            self.abort()
            return
        if answer.complete:
            self._end(None)
            if answer.keep_alive and not self.closed:
                self.pool.release(self)
            else:
                self.abort()

    def eof_received(self) -> bool | None:
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.pool.forget(self)
        answer = self.answer
        if answer is None or self.done is None or self.done.done():
            return
        if answer.status is not None and not answer.framed and exc is None:
            self._end(None)  # a body that ends with the connection: the stream's `[DONE]` says if it was whole
        else:
            detail = type(exc).__name__ if exc is not None else "ServerDisconnected"
            self._end(WireError("connection", detail))

    def fail(self, answer: Answer, error: WireError) -> None:
        """End the request of `answer` with `error` and drop the connection (the stall watch's abort);
        nothing when that request has already ended (the connection may carry another by then)."""
        if self.answer is answer:
            self._end(error)
            self.abort()

    def abort(self) -> None:
        self.closed = True
        self.pool.forget(self)
        if self.transport is not None:
            self.transport.abort()

    def _end(self, error: BaseException | None) -> None:
        done, answer, self.answer = self.done, self.answer, None
        if answer is not None:
            # The parser holds the answer (its callbacks) and the answer the parser: a cycle only the
            # garbage collector would free, once per request. The answer is done parsing: let it go.
            del answer.parser
            if isinstance(error, WireError):
                error.status = answer.status
        if done is not None and not done.done():
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)


class StreamPool:
    """Keep-alive connections to one server for streaming POSTs (see the module's docstring)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        connect_timeout_s: float = 10.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r} is not an http:// or https:// URL")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.tls = parts.scheme == "https"
        self.connect_timeout_s = connect_timeout_s
        self._ssl = ssl_context
        host_header = parts.netloc.rpartition("@")[2]
        fixed = {"Host": host_header, "User-Agent": f"agentx-tui/{__version__}", **(headers or {})}
        for name, value in fixed.items():
            if any(c in name + value for c in "\r\n"):
                raise ValueError(f"header {name!r} holds a line break")
        self._fixed = "".join(f"{k}: {v}\r\n" for k, v in fixed.items())
        self._heads: dict[str, bytes] = {}
        self._idle: dict[_Connection, None] = {}  # (a dict: O(1) to forget one of many, LIFO to reuse)
        self._open: set[_Connection] = set()
        self._closed = False

    async def __aenter__(self) -> StreamPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def connections(self) -> int:
        """Connections open now, idle or busy."""
        return len(self._open)

    async def post(
        self,
        path: str,
        body: bytes,
        sink: BodySink,
        *,
        on_sent: Callable[[Callable[[WireError], None]], None] | None = None,
    ) -> Answer:
        """POST `body` to `path` (under the URL's prefix) and wait for the whole answer; a 200 answer's
        body goes to `sink` as it arrives. `on_sent` receives a function that ends the request with a
        `WireError` (what a stall watch calls). Raises `WireError` when no complete answer came."""
        head = self._heads.get(path)
        if head is None:
            head = self._heads[path] = f"POST {self.prefix}{path} HTTP/1.1\r\n{self._fixed}".encode()
        head += b"Content-Length: %d\r\n\r\n" % len(body)
        while True:
            conn, reused = await self._acquire()
            answer = Answer(sink)
            done = conn.send(head, body, answer)
            if on_sent is not None:
                on_sent(functools.partial(conn.fail, answer))
            try:
                await done
            except WireError as exc:
                if reused and exc.kind == "connection" and not conn.got_bytes and conn.closed:
                    continue  # the server had closed it while idle and never read this request
                raise
            except BaseException:
                conn.abort()  # cancelled mid-answer: the connection's state is unknown
                raise
            return answer

    def release(self, conn: _Connection) -> None:
        if self._closed:
            conn.abort()
        else:
            self._idle[conn] = None

    def forget(self, conn: _Connection) -> None:
        self._open.discard(conn)
        self._idle.pop(conn, None)

    async def close(self) -> None:
        self._closed = True
        for conn in list(self._open):
            conn.abort()
        self._idle.clear()

    async def _acquire(self) -> tuple[_Connection, bool]:
        while self._idle:
            conn, _ = self._idle.popitem()
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                return conn, True
        if self._closed:
            raise WireError("connection", "the client is closed")
        loop = asyncio.get_running_loop()
        try:
            # (`asyncio.timeout`, not `wait_for`: Python 3.11's `wait_for` can swallow a cancellation
            # that lands as the connection completes, and a stopping driver then waits for a request.)
            async with asyncio.timeout(self.connect_timeout_s):
                _, conn = await loop.create_connection(
                    lambda: _Connection(self),
                    self.host,
                    self.port,
                    ssl=self._context() if self.tls else None,
                    server_hostname=self.host if self.tls else None,
                )
        except TimeoutError as exc:
            detail = f"no connection to {self.host}:{self.port} within {self.connect_timeout_s:g} s"
            raise WireError("timeout", detail) from exc
        except OSError as exc:  # refused, unreachable, unknown host, TLS failures (ssl.SSLError is an OSError)
            raise WireError("connection", type(exc).__name__) from exc
        self._open.add(conn)
        return conn, False

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = ssl.create_default_context()
        return self._ssl
