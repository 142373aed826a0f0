"""The proxy as a run uses it: the server, the live sessions, the tokenizer and the capture, started and
stopped together, with one `ProxyState` per tick (the Snapshot carries it; the report keys come from it)."""

from __future__ import annotations

import socket
from dataclasses import asdict
from pathlib import Path

from agentx_tui.errors import UsageError
from agentx_tui.measure import StatsSink
from agentx_tui.proxy._capture import Capture
from agentx_tui.proxy._eviction import DEFAULT_SESSION_IDLE_S
from agentx_tui.proxy._reuse import DEFAULT_BLOCK_SIZE
from agentx_tui.proxy._server import DEFAULT_SESSION_HEADER, SHUTDOWN_GRACE_S, ProxyServer
from agentx_tui.proxy._sessions import LiveSessions
from agentx_tui.proxy._tokenize import Tokenizer
from agentx_tui.snapshot import USERS_SHOWN, ProxyState, UserRow

DEFAULT_HOST = "127.0.0.1"


def check_listen_address(host: str, port: int) -> None:
    """Refuse, before anything starts, an address the proxy could not listen on (`UsageError`).
    Port 0 (a free one) is always fine."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        family, _, _, _, address = infos[0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp binds it
            probe.bind(address)
    except OSError as exc:
        raise UsageError(
            f"The proxy cannot listen on {host}:{port}: {exc.strerror or exc}.",
            "Choose another --proxy port (0 picks a free one).",
        ) from exc


def parse_listen_address(text: str) -> tuple[str, int]:
    """`--proxy [HOST:]PORT` → (host, port); the host defaults to loopback. `[::1]:8080` for IPv6."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]") if sep else DEFAULT_HOST
    if not port.isdigit() or not 0 <= int(port) <= 65535 or (sep and not host):
        raise UsageError(f"--proxy takes [HOST:]PORT, e.g. 8080 or 0.0.0.0:8080, not {text!r}.")
    return host, int(port)


class LiveProxy:
    """`--proxy` (and `--capture`) for one run.

    proxy = LiveProxy(target_url, host, port, sink=client_stats, capture_dir=..., model=...)
    await proxy.start()               # listening: agents use proxy.url as their base URL
    each tick: proxy.figures() (the Snapshot's ProxyState), proxy.rows(limit), proxy.states(), proxy.events()
    await proxy.close()               # also from the signal path: fast, safe to call twice
    """

    def __init__(
        self,
        upstream_url: str,
        host: str = DEFAULT_HOST,
        port: int = 0,
        *,
        sink: StatsSink | None = None,
        capture_dir: Path | None = None,
        model: str | None = None,
        session_header: str = DEFAULT_SESSION_HEADER,
        api_key: str | None = None,
        idle_s: float = DEFAULT_SESSION_IDLE_S,  # --session-idle: a tree with no call for this long has ended
        block_size: int | None = None,  # the server's KV block size (`vllm:cache_config_info`), when it says
        tokenizer_url: str | None = None,
        shutdown_grace_s: float = SHUTDOWN_GRACE_S,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.tokenizer = Tokenizer(tokenizer_url or upstream_url, headers=headers)
        self.capture = Capture(capture_dir, tokenizer_name=model) if capture_dir is not None else None
        self.server = ProxyServer(
            upstream_url, host, port, session_header=session_header, shutdown_grace_s=shutdown_grace_s
        )
        self.sessions = LiveSessions(
            sink=sink,
            capture=self.capture,
            tokenizer=self.tokenizer,
            endpoint=self.server.upstream,
            idle_s=idle_s,
            block_size=block_size or DEFAULT_BLOCK_SIZE,
        )
        self.server.observer = self.sessions
        self._said: dict[str, str | None] = {}

    @property
    def url(self) -> str:
        return self.server.url

    async def start(self) -> None:
        await self.sessions.start()
        try:
            await self.server.start()
        except BaseException:
            await self.sessions.close(tokenize_wait_s=0)
            raise

    async def close(self, tokenize_wait_s: float = 3.0) -> None:
        """Stop listening (open answers get the server's grace, then are cut), then write every open
        session tree. Safe to call twice."""
        try:
            await self.server.close()
        finally:
            await self.sessions.close(tokenize_wait_s)

    def rows(self, limit: int = USERS_SHOWN) -> tuple[UserRow, ...]:
        return self.sessions.rows(limit)

    def states(self) -> dict[str, int]:
        return self.sessions.states()

    def events(self) -> list[str]:
        """New one-line messages for the dashboard's log (no header value or key in them)."""
        out = self.server.events()
        tokenizer = self.tokenizer.figures()
        self._say(out, "tokenize", tokenizer.last_error, "proxy: the prompt of a call could not be tokenized")
        if self.capture is not None:
            self._say(out, "capture", self.capture.figures().last_error, "proxy")
        return out

    def _say(self, out: list[str], kind: str, error: str | None, prefix: str) -> None:
        if error is not None and self._said.get(kind) != error:
            out.append(f"{prefix}: {error}")
        self._said[kind] = error

    def figures(self) -> ProxyState:
        health = self.server.health()
        sessions = self.sessions.figures()
        tokenizer = self.tokenizer.figures()
        capture = self.capture.figures() if self.capture is not None else None
        return ProxyState(
            **asdict(health),  # the proxy's and the sessions' own figures carry ProxyState's names
            **asdict(sessions),
            captured_sessions=capture.captured_sessions if capture is not None else None,
            capture_dir=capture.capture_dir if capture is not None else None,
            tokenize_pending=tokenizer.pending,
            tokenize_failed=tokenizer.failed,
            tokenize_dropped=tokenizer.dropped,
        )
