"""Fixtures for the proxy's tests: a scriptable upstream in the test's loop, the built-in simulator in a
subprocess (real HTTP on loopback), and `fresh_vllm_url`: a second real tiny vLLM that only the
capture round trip uses (a replay must meet a server whose cache and counters no other test touched).

Like the session's vLLM (tests/conftest.py), the fresh one starts in a thread of its own
(tests/helpers/vllm.py) as soon as collection shows a selected test needs it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.helpers.sim import sim_server
from tests.helpers.vllm import TINY_VLLM_ARGS, BackgroundVllm
from tests.proxy.upstream import Upstream

_fresh: BackgroundVllm | None = None


def pytest_collection_finish(session: pytest.Session) -> None:
    global _fresh
    wanted = any("fresh_vllm_url" in getattr(item, "fixturenames", ()) for item in session.items)
    if wanted and _fresh is None:
        _fresh = BackgroundVllm(TINY_VLLM_ARGS, "fresh-vllm")


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _fresh is not None:
        _fresh.stop()  # also after an interrupted or failed session: no vLLM outlives the tests


@pytest.fixture(scope="session")
def fresh_vllm_url() -> str:
    global _fresh
    if _fresh is None:
        _fresh = BackgroundVllm(TINY_VLLM_ARGS, "fresh-vllm")
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
