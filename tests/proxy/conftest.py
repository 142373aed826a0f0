"""Fixtures for the proxy's tests: a scriptable upstream in the test's loop, the built-in simulator in a
subprocess (real HTTP on loopback), and `fresh_vllm_url`: a second real tiny vLLM that only the
capture round trip uses (a replay must meet a server whose cache and counters no other test touched).

Like the session's vLLM (tests/conftest.py), the fresh one starts in a thread as soon as collection
shows a selected test needs it, so that its start-up overlaps the tests before that one; the thread
lives until the session ends (the server's parent-death signal is tied to the thread that started it).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator

import pytest

from agentx_tui.engine import LaunchedServer, start_vllm
from tests.helpers.sim import sim_server
from tests.proxy.upstream import Upstream

TINY_VLLM_ARGS = ["--max-num-seqs", "32"]  # as the session's vLLM (tests/conftest.py)


class _FreshVllm:
    def __init__(self) -> None:
        self.server: LaunchedServer | None = None
        self.error: Exception | None = None
        self._ready = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fresh-vllm", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.server = asyncio.run(start_vllm("tiny", TINY_VLLM_ARGS, timeout_s=300))
        except Exception as exc:  # reported by the test that needs the server
            self.error = exc
        finally:
            self._ready.set()
        self._done.wait()
        if self.server is not None:
            self.server.stop()

    def wait(self) -> LaunchedServer:
        self._ready.wait()
        if self.server is None:
            pytest.fail(f"could not start a fresh real vLLM engine for the replay: {self.error}")
        return self.server

    def stop(self) -> None:
        self._done.set()
        self._thread.join(timeout=120)


_fresh: _FreshVllm | None = None


def pytest_collection_finish(session: pytest.Session) -> None:
    global _fresh
    wanted = any("fresh_vllm_url" in getattr(item, "fixturenames", ()) for item in session.items)
    if wanted and _fresh is None:
        _fresh = _FreshVllm()


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _fresh is not None:
        _fresh.stop()  # also after an interrupted or failed session: no vLLM outlives the tests


@pytest.fixture(scope="session")
def fresh_vllm_url() -> str:
    global _fresh
    if _fresh is None:
        _fresh = _FreshVllm()
    return _fresh.wait().url


@pytest.fixture
async def upstream() -> AsyncIterator[Upstream]:
    server = await Upstream().start()
    yield server
    await server.close()


@pytest.fixture(scope="session")
def sim_url() -> Iterator[str]:
    """`python -m agentx_tui.sim` on a free loopback port, for the whole session."""
    with sim_server() as url:
        yield url
