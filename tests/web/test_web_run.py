"""`agentx-tui --web` with a real page run on the simulated engine, aiohttp's websocket client as the
browser (the browser test does the same in Chromium; this one runs where there is none): the page's
run drives load, takes a key, stops with its page (report written, its simulator gone), and a SIGTERM
to the server with a page open stops that page's run too and exits 143."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import aiohttp
import pytest

from tests.helpers.procs import wait_gone
from tests.web._run import cmdline, environ, figure_grows, users, web_run

pytestmark = pytest.mark.slow

KEY = "sk-web-test-0123456789"


async def _open(session: aiohttp.ClientSession, url: str) -> aiohttp.ClientWebSocketResponse:
    ws = await session.ws_connect(url + "ws?width=120&height=36", headers={"Origin": url.rstrip("/")})
    await ws.send_json(["resize", {"width": 120, "height": 36}])
    return ws


async def _drain(ws: aiohttp.ClientWebSocketResponse) -> None:
    """Read the page's terminal (as a browser does) until it closes."""
    while not ws.closed:
        message = await ws.receive()
        if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
            return


async def test_a_page_runs_the_dashboard_and_closing_it_stops_its_run(tmp_path: Path) -> None:
    with web_run(tmp_path, "--api-key", KEY, env={"NO_COLOR": "1"}) as run:
        async with aiohttp.ClientSession() as session:
            ws = await _open(session, run.url)
            drain = asyncio.create_task(_drain(ws))
            await asyncio.to_thread(run.wait_snapshots, figure_grows, "growing generated tokens")
            tree = run.tree()
            (page,) = {pid for pid in tree if "agentx_tui.web.page" in cmdline(pid)}
            assert len(tree) >= 2  # the page's run and its simulated server
            # The serving process shows what its user typed; none of the processes it starts does.
            assert all(KEY not in cmdline(pid) for pid in tree)
            assert "NO_COLOR" not in environ(page)
            await ws.send_json(["stdin", "+"])
            await asyncio.to_thread(run.wait_snapshots, lambda s: users(s) == 3, "users 2 → 3")
            await ws.close()
            await drain
        assert wait_gone(tree, 30) == set()
        assert run.proc.poll() is None  # the server stays up for the next page
        report = json.loads(run.report.read_text())
        assert report["requests_completed"] >= 0
        assert KEY not in run.report.read_text() + run.record.read_text()


async def test_sigterm_to_the_server_with_a_page_open_stops_that_run_and_exits_143(tmp_path: Path) -> None:
    with web_run(tmp_path) as run:
        async with aiohttp.ClientSession() as session:
            ws = await _open(session, run.url)
            drain = asyncio.create_task(_drain(ws))
            await asyncio.to_thread(run.wait_snapshots, lambda s: len(s) >= 2, "ticks")
            tree = run.tree()
            run.proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(drain, 30)  # the server closes the page
            assert await asyncio.to_thread(run.proc.wait, 60) == 143
        assert wait_gone(tree, 10) == set()
        assert run.report.exists()  # the page's run ended as on `q`: its report is written
        output = run.proc.communicate()[0]
        assert "SIGTERM: closing the pages" in output
        assert "Traceback" not in output
