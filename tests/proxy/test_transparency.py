"""The proxy passes everything through unchanged and streams as it arrives; an upstream that is down,
silent or cut off costs the agent a 502 (or a cut connection), never the proxy its service."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from openai import AsyncOpenAI

from agentx_tui.errors import UsageError
from agentx_tui.measure import SseScanner
from agentx_tui.proxy import ProxiedCall, ProxyServer
from agentx_tui.proxy._headers import request_headers, response_headers
from tests.proxy.upstream import Upstream

KEY = "sk-test-KEY-0123456789"


@contextlib.asynccontextmanager
async def running(proxy: ProxyServer) -> AsyncIterator[ProxyServer]:
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.close()


class Calls:
    """An observer that keeps every call."""

    def __init__(self) -> None:
        self.started: list[ProxiedCall] = []
        self.ended: list[ProxiedCall] = []

    def call_started(self, call: ProxiedCall) -> None:
        self.started.append(call)

    def call_ended(self, call: ProxiedCall) -> None:
        self.ended.append(call)


def test_hop_by_hop_headers_are_dropped_and_the_rest_kept_in_order() -> None:
    sent = [
        ("Host", "proxy:1"),
        ("Authorization", f"Bearer {KEY}"),
        ("Connection", "keep-alive, X-Hop"),
        ("X-Hop", "only for this hop"),
        ("Keep-Alive", "timeout=5"),
        ("TE", "trailers"),
        ("Transfer-Encoding", "chunked"),
        ("Proxy-Authorization", "Basic xyz"),
        ("Upgrade", "h2c"),
        ("Content-Length", "12"),
        ("X-Multi", "a"),
        ("X-Multi", "b"),
    ]
    forwarded = list(request_headers(sent).items())
    assert forwarded == [("Authorization", f"Bearer {KEY}"), ("X-Multi", "a"), ("X-Multi", "b")]
    back = list(response_headers([("Content-Length", "3"), ("Connection", "close"), ("Set-Cookie", "a=1")]).items())
    assert back == [("Content-Length", "3"), ("Set-Cookie", "a=1")]


async def test_method_path_query_headers_and_body_reach_the_upstream_unchanged(upstream: Upstream) -> None:
    async with running(ProxyServer(upstream.url)) as proxy, aiohttp.ClientSession() as http:
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
            body = b"" if method == "GET" else f'{{"any": "body", "m": "{method}", "x": [1, 2]}}'.encode()
            headers = [
                ("Authorization", f"Bearer {KEY}"),
                ("X-Custom", "v1"),
                ("X-Multi", "a"),
                ("X-Multi", "b"),
                ("Connection", "X-Hop"),
                ("X-Hop", "dropped"),
            ]
            path = "/echo/a%2Fb/c;p?x=1&y=%20z&y=2"
            url = aiohttp.client.URL(proxy.url + path, encoded=True)
            async with http.request(method, url, data=body or None, headers=headers) as resp:
                assert resp.status == 200
                assert resp.headers["X-Upstream"] == "echo"
                echo = await resp.json()
            assert echo["method"] == method
            assert echo["path"] == path
            assert echo["body"].encode() == body
            got = [(k.lower(), v) for k, v in echo["headers"]]
            assert ("authorization", f"Bearer {KEY}") in got
            assert ("x-custom", "v1") in got
            assert [v for k, v in got if k == "x-multi"] == ["a", "b"]
            assert "x-hop" not in dict(got)
            assert dict(got)["host"] == upstream.url.removeprefix("http://")  # rewritten, as a proxy must


async def test_status_codes_error_bodies_and_response_headers_come_back_unchanged(upstream: Upstream) -> None:
    async with running(ProxyServer(upstream.url)) as proxy, aiohttp.ClientSession() as http:
        for code in (400, 401, 404, 429, 500, 503):
            async with http.get(f"{upstream.url}/status/{code}") as direct:
                direct_body = await direct.read()
            async with http.get(f"{proxy.url}/status/{code}") as resp:
                assert resp.status == code
                assert await resp.read() == direct_body
                assert resp.headers["X-Request-Id"] == "abc123"
                assert resp.headers["Retry-After"] == "7"
                assert resp.headers.getall("Set-Cookie") == ["a=1", "b=2"]
        assert proxy.health().upstream_errors == 0  # the upstream's own errors are its answers


async def test_models_tokenize_and_the_api_key_pass_through(upstream: Upstream) -> None:
    headers = {"Authorization": f"Bearer {KEY}"}
    async with running(ProxyServer(upstream.url)) as proxy, aiohttp.ClientSession(headers=headers) as http:
        async with http.get(f"{proxy.url}/v1/models") as resp:
            assert (await resp.json())["data"][0]["id"] == "fake"
        payload = {"model": "fake", "messages": [{"role": "user", "content": "two words"}]}
        async with http.post(f"{proxy.url}/tokenize", json=payload) as resp:
            assert (await resp.json())["count"] == len([1, 2, 4, 100, 200, 3, 4, 5])
    assert [s["path"] for s in upstream.seen] == ["/v1/models"]
    assert upstream.tokenized[0]["auth"] == f"Bearer {KEY}"
    assert upstream.tokenized[0]["body"] == payload
    assert proxy.health().other_requests == 2 and proxy.health().proxied_requests == 0


async def test_each_chunk_reaches_the_agent_before_the_next_is_sent(upstream: Upstream) -> None:
    # Lock-step: the upstream writes chunk i+1 only once the agent has read chunk i whole, so a proxy
    # that held a chunk back (buffering until more arrives) would stall the stream and fail here,
    # however busy the machine. How fast each chunk crosses is bench/proxy_overhead.py's job.
    upstream.paced, upstream.tokens = True, 8
    calls = Calls()
    body = {"model": "fake", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    events: list[bytes] = []
    async with (
        running(ProxyServer(upstream.url, observer=calls)) as proxy,
        aiohttp.ClientSession() as http,
        http.post(f"{proxy.url}/v1/chat/completions", json=body) as resp,
    ):
        assert resp.headers["X-Stream"] == "yes"
        pending = b""
        while len(events) < 9:
            try:
                data = await asyncio.wait_for(resp.content.readany(), timeout=30)
            except TimeoutError:
                pytest.fail(f"chunk {len(events)} never reached the agent: the proxy held it back")
            assert data, f"the stream ended after {len(events)} chunks"
            pending += data
            if pending.endswith(b"\n\n"):
                events.append(pending)
                pending = b""
                upstream.release()
        assert await resp.content.read() == b""
    assert len(upstream.sent) == 9
    assert all(event.startswith(b"data: ") for event in events)
    assert events[-1].endswith(b"data: [DONE]\n\n")
    (call,) = calls.ended
    assert call.error is None and call.scan is not None and call.scan.events == 8
    assert call.finish_reason == "stop"
    assert proxy.health().added_ttft.p50 is not None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_down_upstream_gets_a_502_and_the_proxy_serves_on_when_it_is_back() -> None:
    port = _free_port()
    calls = Calls()
    async with (
        running(ProxyServer(f"http://127.0.0.1:{port}", observer=calls)) as proxy,
        aiohttp.ClientSession() as http,
    ):
        body = {"model": "fake", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        headers = {"Authorization": f"Bearer {KEY}", "X-Session-ID": "secret-session-name"}
        for _ in range(2):
            async with http.post(f"{proxy.url}/v1/chat/completions", json=body, headers=headers) as resp:
                assert resp.status == 502
                text = await resp.text()
        assert "\n" not in text.strip()
        error = json.loads(text)["error"]
        assert error["type"] == "proxy_upstream_error"
        assert "cannot be reached" in error["message"] and str(port) in error["message"]
        health = proxy.health()
        assert health.upstream_errors == 2 and health.last_upstream_error == error["message"]
        events = proxy.events()
        assert events and "cannot be reached" in events[0]
        assert all(KEY not in e and "secret-session-name" not in e for e in events)
        assert [c.error for c in calls.ended] == ["connection", "connection"]
        # The upstream comes back on the same port: the same proxy serves it.
        app = Upstream()
        app.server = None
        back = await _upstream_on(app, port)
        try:
            async with http.get(f"{proxy.url}/v1/models") as resp:
                assert resp.status == 200
        finally:
            await back.close()


async def _upstream_on(app: Upstream, port: int) -> Upstream:
    await app.start()
    assert app.server is not None
    await app.server.close()
    app.server = TestServer(app.server.app, port=port)
    await app.server.start_server()
    return app


async def test_a_silent_upstream_times_out_as_a_502(upstream: Upstream) -> None:
    async with running(ProxyServer(upstream.url, idle_timeout_s=0.3)) as proxy, aiohttp.ClientSession() as http:
        started = time.monotonic()
        async with http.get(f"{proxy.url}/hang") as resp:
            assert resp.status == 502
            assert "did not answer in time" in (await resp.json())["error"]["message"]
        assert time.monotonic() - started < 5
        async with http.get(f"{proxy.url}/v1/models") as resp:
            assert resp.status == 200


async def test_an_upstream_that_stalls_mid_stream_is_cut_by_the_idle_watch(upstream: Upstream) -> None:
    upstream.gap_s, upstream.tokens = 30.0, 3
    calls = Calls()
    proxy = ProxyServer(upstream.url, observer=calls, idle_timeout_s=0.4)
    async with running(proxy), aiohttp.ClientSession() as http:
        body = {"model": "fake", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        started = time.monotonic()
        with pytest.raises(aiohttp.ClientPayloadError):
            async with http.post(f"{proxy.url}/v1/chat/completions", json=body) as resp:
                await resp.read()
        assert time.monotonic() - started < 5
    assert calls.ended[0].error == "timeout"


async def test_an_upstream_cut_mid_stream_cuts_the_agent_and_is_counted(upstream: Upstream) -> None:
    upstream.cut_after = 3
    calls = Calls()
    async with running(ProxyServer(upstream.url, observer=calls)) as proxy, aiohttp.ClientSession() as http:
        body = {"model": "fake", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        with pytest.raises(aiohttp.ClientPayloadError):
            async with http.post(f"{proxy.url}/v1/chat/completions", json=body) as resp:
                await resp.read()  # a clean end would pass a truncated answer off as whole
        async with http.get(f"{proxy.url}/v1/models") as resp:
            assert resp.status == 200
        assert proxy.health().upstream_errors == 1
    assert calls.ended[0].error == "connection"


async def test_an_agent_hanging_up_is_counted_and_its_upstream_answer_dropped(upstream: Upstream) -> None:
    upstream.gap_s, upstream.tokens = 0.05, 40
    calls = Calls()
    async with running(ProxyServer(upstream.url, observer=calls)) as proxy:
        body = {"model": "fake", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        async with aiohttp.ClientSession() as http, http.post(f"{proxy.url}/v1/chat/completions", json=body) as resp:
            await resp.content.readany()
        for _ in range(100):
            if calls.ended:
                break
            await asyncio.sleep(0.05)
        assert proxy.health().agent_cancelled == 1
        failed = calls.ended[0].failed()
        assert failed.kind == "cancelled" and not failed.final  # not a failure of the server
        await asyncio.sleep(0.2)
        assert len(upstream.sent) < 41  # the upstream stopped streaming to nobody


async def test_an_agent_closing_after_done_completed_its_call(upstream: Upstream) -> None:
    """Issue 30: the official `openai` client reads `[DONE]`, drains the rest for at most 0.1 s, then
    closes its connection. A proxy whose loop is busy then (the dashboard) writes the body's end to a
    closed connection; the agent has its whole answer all the same, so its call completed. The upstream
    holds the end of its body 0.5 s after `[DONE]` to make that race certain."""
    upstream.end_after_s = 0.5
    calls = Calls()
    async with running(ProxyServer(upstream.url, observer=calls)) as proxy:
        client = AsyncOpenAI(base_url=proxy.url + "/v1", api_key=KEY, max_retries=0)
        stream = await client.chat.completions.create(
            model="fake",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        usage = [chunk.usage async for chunk in stream if chunk.usage is not None]
        assert usage and usage[0].completion_tokens == upstream.tokens
        for _ in range(100):
            if calls.ended:
                break
            await asyncio.sleep(0.05)
        assert calls.ended, "the call never ended"
        await client.close()
        assert proxy.health().agent_cancelled == 0
    call = calls.ended[0]
    assert call.error is None
    assert call.completed(call.prompt_tokens or 0).output_tokens == upstream.tokens


def test_an_answer_relayed_whole_is_complete_whatever_its_connection_does_after() -> None:
    streamed = ProxiedCall(kind="chat", body=b"{}", received_at=0.0, status=200)
    streamed.scan = SseScanner(want_finish=True, any_tokens=True)
    streamed.scan.feed(b'data: {"choices": [{"delta": {"content": "a"}}]}\n\n', 0.1)
    cut = ProxiedCall(kind="chat", body=b"{}", received_at=0.0, status=200, scan=streamed.scan)
    cut.finish(0.2, "cancelled", "the agent closed the connection")
    assert cut.error == "cancelled"  # no [DONE] relayed yet: the agent hung up mid-answer
    streamed.scan.feed(b"data: [DONE]\n\n", 0.2)
    streamed.finish(0.3, "cancelled", "the agent closed the connection")
    assert streamed.error is None and streamed.detail == ""
    whole = ProxiedCall(kind="chat", body=b"{}", received_at=0.0, status=200, body_relayed=True)
    whole.keep(b'{"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}')
    whole.finish(0.3, "cancelled", "the agent closed the connection")
    assert whole.error is None and whole.output_tokens == 2
    refused = ProxiedCall(kind="chat", body=b"{}", received_at=0.0, status=429, body_relayed=True)
    refused.keep(b'{"error": {"message": "slow down"}}')
    refused.finish(0.3, "cancelled", "the agent closed the connection")
    assert refused.error == "rate_limited"  # relayed whole, and still the server's refusal


def test_a_calls_statistics_are_its_answers_figures_r_i_included() -> None:
    """A proxied call becomes a `Completed` as the load client's requests do: its content times, TTFT and
    r_i from when the proxy had the request to the last content token (the late usage chunk is not it)."""
    call = ProxiedCall(kind="chat", body=b"{}", received_at=10.0, status=200)
    call.scan = SseScanner(want_finish=True, any_tokens=True)
    call.scan.feed(b'data: {"choices": [{"delta": {"content": "a"}}]}\n\n', 10.5)
    call.scan.feed(b'data: {"choices": [{"delta": {"content": "b"}}]}\n\n', 11.0)
    call.scan.feed(b'data: {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2}}\n\n', 13.0)
    call.scan.feed(b"data: [DONE]\n\n", 13.0)
    call.finish(13.0)
    done = call.completed(7)
    assert (done.first_token_at, done.last_token_at, done.ended_at) == (10.5, 11.0, 13.0)
    assert done.output_tokens == 2 and done.ttft_s == pytest.approx(0.5)
    assert done.e2e_s == pytest.approx(1.0) and done.e2e_per_token_s == pytest.approx(0.5)
    assert done.e2e_per_token_s == call.figures().e2e_per_token_s  # the one the users table counts


async def test_a_failing_observer_never_costs_the_agent_its_answer(upstream: Upstream) -> None:
    class Broken:
        def call_started(self, call: ProxiedCall) -> None:
            raise RuntimeError("bug")

        def call_ended(self, call: ProxiedCall) -> None:
            raise RuntimeError("bug")

    body = {"model": "fake", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    async with running(ProxyServer(upstream.url, observer=Broken())) as proxy, aiohttp.ClientSession() as http:
        async with http.post(f"{proxy.url}/v1/chat/completions", json=body) as resp:
            assert b"[DONE]" in await resp.read()
        assert any("watching a call failed" in e for e in proxy.events())


async def test_a_busy_port_is_a_usage_error(upstream: Upstream) -> None:
    async with running(ProxyServer(upstream.url)) as first:
        with pytest.raises(UsageError, match="cannot listen"):
            await ProxyServer(upstream.url, port=first.port).start()


async def test_close_is_safe_twice_and_cuts_open_answers_after_the_grace(upstream: Upstream) -> None:
    upstream.gap_s, upstream.tokens = 1.0, 30
    proxy = ProxyServer(upstream.url, shutdown_grace_s=0.3)
    await proxy.start()
    body = {"model": "fake", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    async with aiohttp.ClientSession() as http, http.post(f"{proxy.url}/v1/chat/completions", json=body) as resp:
        await resp.content.readany()
        started = time.monotonic()
        await proxy.close()
        await proxy.close()
        assert time.monotonic() - started < 3
        with contextlib.suppress(aiohttp.ClientPayloadError):
            await resp.read()
