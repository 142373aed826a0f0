"""The streaming POST client: connection reuse, stale connections, framing, failures, TLS."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from agentx_tui.load.sending.streaming import StallWatch, StreamResult, stream_chat
from agentx_tui.load.sending.wire import Answer, StreamPool, WireError
from agentx_tui.measure import SseScanner
from tests.load.fake_openai import FakeServer

CHAT = "/v1/chat/completions"
BODY = b'{"model":"fake","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}'
EVENTS = (
    b"".join(b'data: {"choices":[{"delta":{"content":"x%d"}}]}\n\n' % i for i in range(3))
    + b'data: {"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":3}}\n\ndata: [DONE]\n\n'
)

# Each test on asyncio's own loop and on uvloop, which the app runs (their transports differ).
pytestmark = pytest.mark.both_loops


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def raw_server(handler: Handler, tls: ssl.SSLContext | None = None) -> AsyncIterator[str]:
    """A TCP server speaking whatever `handler` writes; yields its base URL."""
    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=tls)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.lower().split(b"\r\n")
    length = next(int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length"))
    await reader.readexactly(length)
    return head


async def test_requests_reuse_one_keep_alive_connection(fake: FakeServer) -> None:
    async with StreamPool(fake.url) as pool:
        results = [await stream_chat(pool, CHAT, BODY) for _ in range(3)]
        assert pool.connections == 1
    assert [r.error for r in results] == [None, None, None]
    assert all(r.output_tokens == 5 for r in results)


async def test_a_connection_the_server_closed_while_idle_is_replaced_without_an_error() -> None:
    connections: list[int] = []

    async def closes_after_one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(EVENTS), EVENTS))
        await writer.drain()
        with contextlib.suppress(asyncio.IncompleteReadError):
            await read_request(reader)
        # The next request raced the server's keep-alive timeout: closed without a byte of answer.
        writer.close()

    async with raw_server(closes_after_one) as url, StreamPool(url) as pool:
        first = await stream_chat(pool, CHAT, BODY)
        second = await stream_chat(pool, CHAT, BODY)
    assert first.error is None and second.error is None and second.events == 3
    assert len(connections) == 2


async def test_a_body_that_ends_with_the_connection_is_whole_only_with_done() -> None:
    async def until_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        cut = len(EVENTS) if served else EVENTS.index(b"data: [DONE]")
        served.append(cut)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + EVENTS[:cut])
        await writer.drain()
        writer.close()

    served: list[int] = []
    async with raw_server(until_close) as url, StreamPool(url) as pool:
        cut_short = await stream_chat(pool, CHAT, BODY)
        whole = await stream_chat(pool, CHAT, BODY)
    assert cut_short.error == "incomplete_stream" and cut_short.events == 3
    assert whole.error is None and whole.output_tokens == 3


async def test_an_error_answer_keeps_its_message_and_a_dropped_stream_its_status() -> None:
    async def errors(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        message = b'{"error":"This model\'s maximum context length is 4096 tokens"}'
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: %d\r\n\r\n%s" % (len(message), message))
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n" + EVENTS[:16] + b"\r\n")
        await writer.drain()
        writer.close()

    async with raw_server(errors) as url, StreamPool(url) as pool:
        overflow = await stream_chat(pool, CHAT, BODY)
        dropped = await stream_chat(pool, CHAT, BODY)
    assert overflow.error == "context_overflow" and "maximum context length" in overflow.detail
    assert dropped.error == "connection" and dropped.status == 200


async def test_a_server_that_does_not_speak_http_and_a_closed_port_are_connection_errors() -> None:
    async def not_http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(100)
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
        await writer.drain()

    async with raw_server(not_http) as url, StreamPool(url) as pool:
        garbled = await stream_chat(pool, CHAT, BODY)
    async with StreamPool(url) as pool:  # the server is gone: nothing listens there now
        refused = await stream_chat(pool, CHAT, BODY)
    assert garbled.error == "connection" and "not an HTTP answer" in garbled.detail
    assert refused.error == "connection" and refused.detail == "ConnectionRefusedError"


async def test_a_server_that_never_answers_is_ended_by_the_watch() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await asyncio.sleep(30)

    watch = StallWatch(idle_s=0.2, every_s=0.05)
    async with raw_server(silent) as url, StreamPool(url) as pool:
        res = await stream_chat(pool, CHAT, BODY, watch=watch)
        assert pool.connections == 0  # a timed-out connection is not reused
    await watch.close()
    assert res.error == "timeout" and res.status is None


async def test_a_cancelled_request_drops_its_connection(fake: FakeServer) -> None:
    fake.token_delay_s = 0.05
    async with StreamPool(fake.url) as pool:
        task = asyncio.create_task(stream_chat(pool, CHAT, BODY))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert pool.connections == 0
        fake.token_delay_s = 0.0
        after = await stream_chat(pool, CHAT, BODY)
    assert after.error is None and after.events == 5


async def test_headers_and_the_urls_path_prefix_are_sent() -> None:
    seen: list[web.Request] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request)
        return web.Response(body=EVENTS, content_type="text/event-stream")

    app = web.Application()
    app.router.add_post("/gateway/v1/chat/completions", handler)
    server = TestServer(app)
    await server.start_server()
    try:
        async with StreamPool(str(server.make_url("/gateway/")), headers={"Authorization": "Bearer k"}) as pool:
            res = await stream_chat(pool, CHAT, BODY)
    finally:
        await server.close()
    assert res.error is None and res.events == 3
    assert seen[0].headers["Authorization"] == "Bearer k" and seen[0].headers["Content-Length"] == str(len(BODY))
    assert seen[0].headers["User-Agent"].startswith("agentx-tui/")


def test_bad_urls_and_headers_are_refused() -> None:
    with pytest.raises(ValueError, match="not an http"):
        StreamPool("ftp://host/")
    with pytest.raises(ValueError, match="line break"):
        StreamPool("http://host/", headers={"X-Api-Key": "k\r\nEvil: 1"})


async def test_events_in_many_chunks_of_one_read_share_its_time() -> None:
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(e + b"\n\n"), e + b"\n\n") for e in EVENTS.split(b"\n\n") if e)

    async def many_chunks(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked + b"0\r\n\r\n")
        await writer.drain()

    scan = SseScanner()
    async with raw_server(many_chunks) as url, StreamPool(url) as pool:
        answer = await pool.post(CHAT, BODY, scan)
    assert answer.status == 200 and scan.events == 3 and scan.done
    assert len(scan.read_times) == len(scan.read_events) and sum(scan.read_events) == 3
    assert len(set(scan.read_times)) == len(scan.read_times)  # no two reads at one instant: no zero gaps


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


async def test_https_streams_and_an_untrusted_certificate_is_a_connection_error(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await read_request(reader)
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            return  # the untrusting client hung up during the handshake
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(EVENTS), EVENTS))
        await writer.drain()

    async with raw_server(answer, tls=server_tls) as url:
        async with StreamPool(url, ssl_context=ssl.create_default_context(cafile=str(cert))) as pool:
            trusted = await stream_chat(pool, CHAT, BODY)
        async with StreamPool(url) as pool:
            untrusted = await stream_chat(pool, CHAT, BODY)
    assert trusted.error is None and trusted.events == 3 and url.startswith("https://")
    assert untrusted.error == "connection" and untrusted.detail == "SSLCertVerificationError"


async def test_post_raises_wire_error_with_its_kind() -> None:
    async with StreamPool("http://127.0.0.1:9", connect_timeout_s=2) as pool:
        with pytest.raises(WireError) as caught:
            await pool.post(CHAT, BODY, SseScanner())
    assert caught.value.kind == "connection" and caught.value.status is None


async def test_a_finished_request_leaves_no_reference_cycle_of_ours(fake: FakeServer) -> None:
    """Cycles wait for the garbage collector, which costs a busy load process a sixth of its CPU."""
    ours = (Answer, SseScanner, StreamResult)
    async with StreamPool(fake.url) as pool:
        await stream_chat(pool, CHAT, BODY)  # the connection opened: only requests from here on
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            for _ in range(3):
                assert (await stream_chat(pool, CHAT, BODY)).error is None
            gc.collect()
            left = [type(o).__name__ for o in gc.garbage if isinstance(o, ours)]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
    assert left == []


async def test_a_late_abort_leaves_the_next_request_on_the_connection_alone(fake: FakeServer) -> None:
    aborts: list[Callable[[WireError], None]] = []
    async with StreamPool(fake.url) as pool:
        await pool.post(CHAT, BODY, SseScanner(), on_sent=aborts.append)
        fake.token_delay_s = 0.02
        scan = SseScanner()
        second = asyncio.create_task(pool.post(CHAT, BODY, scan, on_sent=aborts.append))
        await asyncio.sleep(0.05)
        aborts[0](WireError("timeout", "late"))  # the first request's watch, after it ended
        answer = await second
    assert answer.status == 200 and scan.done and scan.events == 5 and len(aborts) == 2
