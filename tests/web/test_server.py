"""The page server's rules, with a stand-in for a page's run (fake_page.py) and aiohttp's websocket
client as the browser: one page at a time (a second page waits and says so), a closed page's run gets
"quit" (or SIGTERM while still starting, or SIGKILL when it ignores both), a run that fails before
drawing says so on its page, a signal to the server stops every page and exits 128 + N, and a page
of another site may not open the dashboard."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from tests.helpers.procs import alive, descendants, kill_left, wait_gone

FAKE_PAGE = Path(__file__).with_name("fake_page.py")
SERVE = """
import sys
from agentx_tui.web.address import WebAddress
from agentx_tui.web.server import DashboardServer
DashboardServer.stop_timeout_s, DashboardServer.kill_after_s = float(sys.argv[3]), float(sys.argv[4])
server = DashboardServer(sys.argv[1], WebAddress("127.0.0.1", int(sys.argv[2])), "fake dashboard")
server.serve()
raise SystemExit(128 + server.stopped_by if server.stopped_by else 0)
"""


@dataclass
class Served:
    proc: subprocess.Popen[str]
    port: int
    notes: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def pages(self, event: str = "started") -> set[int]:
        """PIDs of the fake runs that noted `event`."""
        return {int(p.name.split(".")[0]) for p in self.notes.glob(f"*.{event}")}

    def wait_for(self, event: str, count: int = 1, timeout_s: float = 10.0) -> set[int]:
        deadline = time.monotonic() + timeout_s
        while len(found := self.pages(event)) < count:
            assert time.monotonic() < deadline, f"no {count} page(s) noted {event!r}; server: {self.proc.pid}"
            time.sleep(0.02)
        return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve(tmp_path: Path, mode: str, *, stop_timeout_s: float = 10.0, kill_after_s: float = 5.0) -> Iterator[Served]:
    notes = tmp_path / "notes"
    notes.mkdir(exist_ok=True)
    command = "exec " + shlex.join([sys.executable, str(FAKE_PAGE), mode, str(notes)])
    port = _free_port()
    argv = [sys.executable, "-c", SERVE, command, str(port), str(stop_timeout_s), str(kill_after_s)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tree: set[int] = set()
    try:
        deadline = time.monotonic() + 15
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline, "the page server did not listen"
            time.sleep(0.05)
        yield Served(proc, port, notes)
        tree = descendants(proc.pid)
    finally:
        if proc.poll() is None:
            tree |= descendants(proc.pid)
            proc.kill()
        proc.communicate(timeout=10)
        kill_left(tree)


@contextlib.asynccontextmanager
async def page(served: Served, headers: dict[str, str] | None = None) -> AsyncIterator[aiohttp.ClientWebSocketResponse]:
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(f"{served.url}/ws?width=100&height=30", headers=headers) as ws,
    ):
        yield ws


async def read_until(ws: aiohttp.ClientWebSocketResponse, needle: bytes, timeout_s: float = 10.0) -> bytes:
    """Everything the page's terminal got, up to and including `needle`."""
    seen = b""
    async with asyncio.timeout(timeout_s):
        while needle not in seen:
            message = await ws.receive()
            if message.type == aiohttp.WSMsgType.BINARY:
                seen += message.data
            elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
                raise AssertionError(f"the page closed before showing {needle!r}; it showed {seen!r}")
    return seen


async def test_the_page_shows_what_runs_and_draws_the_run(tmp_path: Path) -> None:
    with serve(tmp_path, "app") as served:
        async with aiohttp.ClientSession() as session, session.get(served.url + "/") as response:
            html = await response.text()
        assert response.status == 200
        assert "<title>fake dashboard</title>" in html
        # The websocket's address comes from the request (a page served on 0.0.0.0 is opened by name).
        assert f'data-session-websocket-url="ws://127.0.0.1:{served.port}/ws"' in html
        assert "fonts.googleapis.com" not in html  # a demo on a closed network looks the same
        async with page(served) as ws:
            shown = await read_until(ws, b"fake page drawn")
            assert b"starting fake dashboard" in shown  # said at once, while the run starts
            await ws.send_json(["stdin", "+"])
            await read_until(ws, b"key:+")


async def test_a_second_page_waits_for_the_first_to_close_then_runs_its_own(tmp_path: Path) -> None:
    with serve(tmp_path, "app") as served:
        async with page(served) as first:
            await read_until(first, b"fake page drawn")
            (one,) = served.wait_for("started")
            async with page(served) as second:
                shown = await read_until(second, b"as soon as the other page is closed")
                assert b"open in another page" in shown
                await second.send_json(["stdin", "x"])  # keys while waiting go nowhere
                await asyncio.sleep(0.5)
                assert served.pages() == {one}  # still one run
                await first.close()
                await read_until(second, b"fake page drawn")
                assert served.pages("quit") == {one}  # the closed page's run got "quit", as `q` does
                assert not alive({one})
                (two,) = served.pages() - {one}
                await second.send_json(["stdin", "y"])
                assert b"key:x" not in await read_until(second, b"key:y")
            assert wait_gone({two}, 10) == set()
            assert served.pages("quit") == {one, two}


async def test_a_waiting_page_says_when_the_other_page_has_gone_and_its_run_is_stopping(tmp_path: Path) -> None:
    # A reloaded page is this case too: its old page goes, and its old run must stop before the new one.
    with serve(tmp_path, "stubborn", stop_timeout_s=1.0, kill_after_s=0.5) as served:
        async with page(served) as first:
            await read_until(first, b"fake page drawn")
            async with page(served) as second:
                await read_until(second, b"open in another page")
                await first.close()
                await read_until(second, b"The previous page's run is stopping")
                await read_until(second, b"fake page drawn")
                assert len(served.pages()) == 2


async def test_a_page_that_leaves_while_waiting_starts_nothing(tmp_path: Path) -> None:
    with serve(tmp_path, "app") as served:
        async with page(served) as first:
            await read_until(first, b"fake page drawn")
            async with page(served) as second:
                await read_until(second, b"open in another page")
            await asyncio.sleep(0.3)
            await first.close()
        served.wait_for("quit")
        await asyncio.sleep(0.5)
        assert len(served.pages()) == 1


async def test_closing_a_page_whose_run_is_still_starting_sends_it_sigterm(tmp_path: Path) -> None:
    with serve(tmp_path, "starting") as served:
        async with page(served) as ws:
            await read_until(ws, b"starting fake dashboard")
            (pid,) = served.wait_for("started")
        assert served.wait_for("sigterm") == {pid}
        assert wait_gone({pid}, 10) == set()


async def test_a_run_that_fails_before_drawing_says_so_and_frees_the_turn(tmp_path: Path) -> None:
    with serve(tmp_path, "fails") as served:
        async with page(served) as first:
            await read_until(first, b"ended before its dashboard started")
            async with page(served) as second:  # the failed page is still open: it holds nothing
                shown = await read_until(second, b"ended before its dashboard started")
                assert b"waiting" not in shown
        assert len(served.pages()) == 2


async def test_a_run_that_ignores_quit_and_sigterm_is_killed(tmp_path: Path) -> None:
    with serve(tmp_path, "stubborn", stop_timeout_s=0.5, kill_after_s=0.5) as served:
        async with page(served) as ws:
            await read_until(ws, b"fake page drawn")
            (pid,) = served.wait_for("started")
        served.wait_for("sigterm")
        assert wait_gone({pid}, 10) == set()
        assert served.pages("quit") == {pid}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
async def test_a_signal_to_the_server_stops_every_page_then_exits_128_plus_n(
    tmp_path: Path, sig: signal.Signals
) -> None:
    with serve(tmp_path, "app") as served:
        async with page(served) as first, page(served) as second:
            await read_until(first, b"fake page drawn")
            await read_until(second, b"open in another page")
            tree = descendants(served.proc.pid)
            assert len(tree) == 1
            served.proc.send_signal(sig)
            assert await first.receive() is not None  # both pages are closed by the server
            await asyncio.sleep(0)
            assert served.proc.wait(timeout=15) == 128 + int(sig)
        assert served.pages("quit") == served.pages()
        assert alive(tree) == set()
        output = served.proc.communicate()[0]
        assert f"{sig.name}: closing the pages" in output


async def test_sighup_with_the_terminal_gone_still_stops_every_page(tmp_path: Path) -> None:
    with serve(tmp_path, "app") as served:
        async with page(served) as ws:
            await read_until(ws, b"fake page drawn")
            tree = descendants(served.proc.pid)
            assert served.proc.stdout is not None
            served.proc.stdout.close()  # the SSH session dropped: every write to it fails
            served.proc.send_signal(signal.SIGHUP)
            assert served.proc.wait(timeout=15) == 128 + int(signal.SIGHUP)
        assert alive(tree) == set()
        assert served.pages("quit") == served.pages()


async def test_a_page_of_another_site_may_not_open_the_dashboard(tmp_path: Path) -> None:
    with serve(tmp_path, "app") as served:
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(f"{served.url}/ws", headers={"Origin": "http://evil.example"})
            assert refused.value.status == 403
            # A loopback page reached under another name: DNS rebinding.
            async with session.get(served.url + "/", headers={"Host": f"evil.example:{served.port}"}) as response:
                assert response.status == 403
        async with page(served, headers={"Origin": served.url}) as ws:  # the page's own origin is fine
            await read_until(ws, b"fake page drawn")
        assert len(served.pages()) == 1
