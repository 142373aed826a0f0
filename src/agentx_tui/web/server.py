"""The page server: textual-serve's `Server`, serving one page at a time, each page's run stopped with it.

textual-serve starts one process per browser connection (a page): here, a whole dashboard run. Viewers
do not share a run, and only one page runs at a time (docs/web.md says why): a second page waits, and
says so on its screen, until the first one is closed and its run has stopped; then it starts its own.

How a page's run ends:

- the tab is closed (or reloaded): the websocket closes and the run gets textual-serve's "quit"
  message, which Textual's web driver turns into the same ExitApp as the `q` key; a run still
  starting (e.g. vLLM loading) has no app yet to read it, and gets SIGTERM instead, which its start-up
  handles as Ctrl-C. Either way the run's own machinery writes the report and stops its server.
- `q` in the page: the app exits, the websocket is closed, the run stops as above.
- SIGINT, SIGTERM or SIGHUP to this server: every page is closed as if its tab were, and the server
  exits once their runs have stopped (a second signal stops waiting and kills them).

A run that does not stop within STOP_TIMEOUT_S gets SIGTERM, then SIGKILL; its launched server then
stops on its own parent-death signal (engine/process.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager
from textual_serve.server import Server, to_int

from agentx_tui.net import is_loopback_host
from agentx_tui.procfs import child_pids
from agentx_tui.web.address import WebAddress

TEMPLATES = Path(__file__).parent / "templates"
# How long a page's run may take to stop once asked: its load drains (10 s at most), then a launched
# server stops (SIGTERM, 10 s, SIGKILL), then the report is written. Past that it is signalled.
STOP_TIMEOUT_S = 40.0
KILL_AFTER_S = 10.0  # after SIGTERM, before SIGKILL
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

log = logging.getLogger("agentx_tui.web")


def _terminal_text(*lines: str) -> bytes:
    """Lines for the page's terminal (xterm.js wants CR LF), shown until the dashboard draws."""
    return ("\x1b[2J\x1b[H\r\n" + "".join(f"  {line}\r\n" for line in lines)).encode()


def _say(text: str) -> None:
    # After SIGHUP (an SSH session dropped) the terminal is gone: a line that cannot be written must
    # not stop the server from stopping its pages.
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, flush=True)


async def _send_bytes(ws: web.WebSocketResponse, data: bytes) -> None:
    # A closed page drops what the run still draws: textual-serve must keep reading the run's output
    # (or the run would block writing it, and never exit), even with nobody left to show it to.
    if not ws.closed:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await ws.send_bytes(data)


async def _send_str(ws: web.WebSocketResponse, data: str) -> None:
    if not ws.closed:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await ws.send_str(data)


class PageService(AppService):
    """textual-serve's service for one page's process, telling when the app first drew and when the
    process's output ended (it has exited)."""

    def __init__(self, command: str, ws: web.WebSocketResponse, downloads: DownloadManager, debug: bool) -> None:
        self.drawn = False
        self.ended = asyncio.Event()

        async def to_page(data: bytes) -> None:
            self.drawn = True
            await _send_bytes(ws, data)

        async def to_page_str(data: str) -> None:
            await _send_str(ws, data)

        async def close() -> None:
            await ws.close()

        super().__init__(
            command,
            write_bytes=to_page,
            write_str=to_page_str,
            close=close,
            download_manager=downloads,
            debug=debug,
        )

    async def run(self) -> None:
        try:
            await super().run()
        finally:
            self.ended.set()


@dataclass(eq=False)
class Page:
    """One browser connection."""

    ws: web.WebSocketResponse
    width: int
    height: int
    service: PageService | None = None
    pid: int | None = None  # the page's run, once started
    left: asyncio.Event = field(default_factory=asyncio.Event)  # the browser has gone

    def signal(self, sig: signal.Signals) -> None:
        if self.pid is not None and self.service is not None and not self.service.ended.is_set():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, sig)


async def _wait(event: asyncio.Event, timeout_s: float) -> bool:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), timeout_s)
    return event.is_set()


class DashboardServer(Server):
    stop_timeout_s = STOP_TIMEOUT_S
    kill_after_s = KILL_AFTER_S

    def __init__(self, command: str, address: WebAddress, title: str) -> None:
        super().__init__(command, host=address.host, port=address.port, title=title, templates_path=TEMPLATES)
        self.address = address
        self.stopped_by: signal.Signals | None = None
        self._turn = asyncio.Lock()  # held by the page whose run is running (or stopping)
        self._holder: Page | None = None
        self._pages: set[Page] = set()
        self._all_gone = asyncio.Event()
        self._all_gone.set()

    # --- textual-serve's hooks --------------------------------------------------------------------

    def initialize_logging(self) -> None:
        # textual-serve logs every start at INFO, and aiohttp every request: a demo's console shows
        # only what needs attention (and each page's run's summary, which textual-serve relays).
        logging.basicConfig(level=logging.WARNING, format="agentx-tui web: %(message)s", stream=sys.stderr)

    async def on_startup(self, app: web.Application) -> None:
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:  # replaces textual-serve's own, which would exit at once
            loop.add_signal_handler(sig, self._on_signal, sig)
        _say(
            f"agentx-tui: serving {self.title} at {self.address.url}\n"
            "  one page at a time, each running the dashboard as a run of its own; closing the page stops "
            "its run. Ctrl-C stops the server."
        )

    async def on_shutdown(self, app: web.Application) -> None:
        self._kill_pages()  # the last line of defence: the pages were asked to stop before this

    def _refusal(self, request: web.Request) -> str | None:
        """Why a request may not use the dashboard, or None."""
        host = urlsplit(f"//{request.host}").hostname or ""
        if self.address.loopback and not is_loopback_host(host):
            # A loopback page reached under another name is a DNS-rebinding attack from a web page.
            return f"This dashboard is served on loopback only; open it as {self.address.url}"
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            # Browsers let any site open a websocket anywhere: a page elsewhere must not start runs.
            return "A page of another site may not open this dashboard."
        return None

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        if (refusal := self._refusal(request)) is not None:
            raise web.HTTPForbidden(text=refusal)
        scheme = "wss" if request.secure else "ws"
        context: dict[str, Any] = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            # From the request, not the bind address: a page served on 0.0.0.0 is opened by name.
            "app_websocket_url": f"{scheme}://{request.host}/ws",
            "config": {"static": {"url": "/static/"}},
            "application": {"name": self.title},
        }
        return aiohttp_jinja2.render_template("page.html", request, context)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        if (refusal := self._refusal(request)) is not None:
            raise web.HTTPForbidden(text=refusal)
        ws = web.WebSocketResponse(heartbeat=15)
        await ws.prepare(request)
        page = Page(ws, to_int(request.query.get("width", "80"), 80), to_int(request.query.get("height", "24"), 24))
        self._pages.add(page)
        self._all_gone.clear()
        reader = asyncio.create_task(self._from_browser(page), name="web-page-input")
        try:
            if self.stopped_by is None and await self._take_turn(page, reader):
                try:
                    failed = await self._run(page, reader)
                finally:
                    self._turn.release()
                if failed:
                    await reader  # the page keeps saying why until its viewer leaves
        except Exception:
            log.exception("a page failed")
        finally:
            reader.cancel()
            await asyncio.wait({reader})
            await ws.close()
            self._pages.discard(page)
            if not self._pages:
                self._all_gone.set()
        return ws

    # --- one page ---------------------------------------------------------------------------------

    async def _from_browser(self, page: Page) -> None:
        """Relay what the browser sends (textual-serve's protocol) until the page closes."""
        try:
            await self._relay(page)
        finally:
            page.left.set()

    async def _relay(self, page: Page) -> None:
        async for message in page.ws:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = json.loads(message.data)
                kind, data = envelope[0], (envelope[1] if len(envelope) > 1 else None)
            except (ValueError, TypeError, IndexError, KeyError):
                continue
            service = page.service
            if kind == "ping":
                await _send_str(page.ws, json.dumps(["pong", data]))
            elif kind == "resize" and isinstance(data, dict):
                page.width, page.height = (
                    to_int(str(data.get("width")), page.width),
                    to_int(str(data.get("height")), page.height),
                )
                if service is not None:
                    await service.set_terminal_size(page.width, page.height)
            elif service is None:
                continue  # keys pressed while the page waits for its turn go nowhere
            elif kind == "stdin" and isinstance(data, str):
                await service.send_bytes(data.encode("utf-8"))
            elif kind == "blur":
                await service.blur()
            elif kind == "focus":
                await service.focus()

    async def _take_turn(self, page: Page, reader: asyncio.Task[None]) -> bool:
        """Wait until no other page runs (True), or until this page closes first (False)."""
        acquire = asyncio.create_task(self._turn.acquire())
        await asyncio.sleep(0)  # a turn nobody holds or waits for is taken at once
        shown = ""
        while not acquire.done() and not reader.done():
            holder = self._holder
            if holder is None or holder.left.is_set():  # e.g. this page is that one, reloaded
                why = "The previous page's run is stopping; this page starts its own run when it has."
            else:
                why = (
                    "This dashboard is open in another page, and runs one page at a time: each page is a "
                    "run of its own, and a second one would double the load on the target (or start a "
                    "second server). This page starts its own run as soon as the other page is closed."
                )
            if why != shown:
                shown = why
                lines = textwrap.wrap(why, max(page.width - 4, 20))
                await _send_bytes(page.ws, _terminal_text("agentx-tui: waiting.", "", *lines))
            watching = {acquire, reader}
            if holder is not None and not holder.left.is_set():
                watching.add(asyncio.create_task(holder.left.wait()))  # to say when it has gone
            await asyncio.wait(watching, return_when=asyncio.FIRST_COMPLETED)
            for task in watching - {acquire, reader}:
                task.cancel()
        if not acquire.done():
            acquire.cancel()
            await asyncio.wait({acquire})
        if acquire.cancelled():
            return False
        if reader.done() or self.stopped_by is not None:
            self._turn.release()
            return False
        return True

    async def _run(self, page: Page, reader: asyncio.Task[None]) -> bool:
        """Run the page's dashboard until the page closes or the run ends; then make sure it has
        stopped. True when the run ended before its dashboard drew (the page says so)."""
        self._holder = page
        await _send_bytes(page.ws, _terminal_text(f"starting {self.title} …"))
        service = PageService(self.command, page.ws, self.download_manager, self.debug)
        before = child_pids(os.getpid())
        await service.start(page.width, page.height)
        page.service = service
        started = child_pids(os.getpid()) - before
        page.pid = started.pop() if len(started) == 1 else None
        ended = asyncio.create_task(service.ended.wait())
        try:
            await asyncio.wait({reader, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            await self._stop(page)
            ended.cancel()
            self._holder = None
        if not service.drawn and not page.ws.closed:
            lines = ("The run ended before its dashboard started: the serving terminal says why.", "")
            await _send_bytes(page.ws, _terminal_text(*lines, "Reload the page to try again."))
            return True
        return False

    async def _stop(self, page: Page) -> None:
        service = page.service
        if service is None:
            return
        if not service.ended.is_set():
            if service.drawn:
                await service.send_meta({"type": "quit"})  # what the `q` key does
            else:
                page.signal(signal.SIGTERM)  # still starting: no app yet to read "quit"
            if not await _wait(service.ended, self.stop_timeout_s):
                log.warning("a page's run (pid %s) did not stop in time: sending SIGTERM", page.pid)
                page.signal(signal.SIGTERM)
                if not await _wait(service.ended, self.kill_after_s):
                    log.warning("a page's run (pid %s) ignored SIGTERM: killing it", page.pid)
                    page.signal(signal.SIGKILL)
                    await _wait(service.ended, self.kill_after_s)
        if service.ended.is_set():
            await service.stop()  # textual-serve's own end of a page: downloads cancelled, reader joined

    # --- the server's own end ---------------------------------------------------------------------

    def _on_signal(self, sig: signal.Signals) -> None:
        if self.stopped_by is not None:  # a second signal: stop waiting for the runs to end cleanly
            _say("agentx-tui: stopping now")
            self._kill_pages()
            self.request_exit()  # raises aiohttp's GracefulExit
            return
        self.stopped_by = sig
        _say(f"agentx-tui: {sig.name}: closing the pages and stopping their runs")
        asyncio.get_running_loop().create_task(self._close_pages(), name="web-close-pages")

    async def _close_pages(self) -> None:
        for page in list(self._pages):
            asyncio.get_running_loop().create_task(page.ws.close())
        await _wait(self._all_gone, self.stop_timeout_s + 2 * self.kill_after_s + 5.0)
        self._kill_pages()
        asyncio.get_running_loop().call_soon(self.request_exit)  # aiohttp's GracefulExit: it cleans up

    def _kill_pages(self) -> None:
        for page in list(self._pages):
            page.signal(signal.SIGKILL)
