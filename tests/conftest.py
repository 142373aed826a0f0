"""Shared fixtures. `vllm_url`: one real vLLM engine (CPU build, tiny model) for the whole session,
started through the project's own launcher in the background as soon as the tests are collected.
Tests that use it carry `@pytest.mark.vllm`.

`small_kv_vllm` (`small_kv_vllm_url`): a second one, started the same way only when a selected test
needs it, whose KV cache holds 48 blocks of 128 tokens (`--num-gpu-blocks-override 48`) and which records
KV residency for every block: sessions evict each other's prefixes there. The session's engine holds
about two million tokens, more than any test could fill.

`spec_vllm_url`: one more, likewise only when a selected test needs it, that speculates with ngram drafts
(`--speculative-config`, tests/helpers/vllm.py).

All run in threads of their own (tests/helpers/vllm.py). Set AGENTX_TEST_VLLM_URL to reuse a server you
already run as the session's (it must serve the tiny model, with the same flags).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

import pytest
import uvloop
from hypothesis import settings

from agentx_tui.engine import LaunchedServer
from tests.helpers.vllm import SMALL_KV_VLLM_ARGS, SPEC_VLLM_ARGS, TINY_VLLM_ARGS, BackgroundVllm

# Property tests draw the same examples every run, so CI is deterministic. Explore new ones with
# HYPOTHESIS_PROFILE=explore (fresh random draws each run); paste any failure in as an @example.
settings.register_profile("default", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    """Tests marked `both_loops` run on asyncio's own loop and on uvloop (which the app runs)."""
    if item.get_closest_marker("both_loops") is not None:
        return {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}
    return {"asyncio": asyncio.new_event_loop}


_session_vllm: BackgroundVllm | None = None
_small_kv_vllm: BackgroundVllm | None = None
_spec_vllm: BackgroundVllm | None = None
_USES_SMALL_KV = {"small_kv_vllm", "small_kv_vllm_url"}
_USES_SPEC = {"spec_vllm_url"}
_USES_VLLM = {"vllm_server", "vllm_url", *_USES_SMALL_KV, *_USES_SPEC}
_USES_PROMETHEUS = {"prometheus_server"}  # tests/telemetry/prometheus_server.py


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that uses the real engine or a real Prometheus, even through another fixture, carries
    its marker: `-m "not vllm and not prometheus"` (scripts/test.sh --quick) never starts either."""
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & _USES_VLLM:
            item.add_marker(pytest.mark.vllm)
        if used & _USES_PROMETHEUS:
            item.add_marker(pytest.mark.prometheus)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start each engine a selected test needs as soon as collection shows it, so that its start-up
    (35–85 s) overlaps the tests that run before the first one using it."""
    global _session_vllm, _small_kv_vllm, _spec_vllm
    used = [set(getattr(item, "fixturenames", ())) for item in session.items]
    wanted = any((_USES_VLLM - _USES_SMALL_KV - _USES_SPEC) & names for names in used)
    if wanted and not os.environ.get("AGENTX_TEST_VLLM_URL") and _session_vllm is None:
        _session_vllm = BackgroundVllm(TINY_VLLM_ARGS, "session-vllm")
    small = any(_USES_SMALL_KV & names for names in used)
    if small and _small_kv_vllm is None:
        _small_kv_vllm = BackgroundVllm(SMALL_KV_VLLM_ARGS, "small-kv-vllm")
    if any(_USES_SPEC & names for names in used) and _spec_vllm is None:
        _spec_vllm = BackgroundVllm(SPEC_VLLM_ARGS, "spec-vllm")


def pytest_sessionfinish(session: pytest.Session) -> None:
    for engine in (_session_vllm, _small_kv_vllm, _spec_vllm):
        if engine is not None:
            engine.stop()  # also after an interrupted or failed session: no vLLM outlives the tests


@pytest.fixture(scope="session")
def vllm_server() -> LaunchedServer | None:
    global _session_vllm
    if os.environ.get("AGENTX_TEST_VLLM_URL"):
        return None
    if _session_vllm is None:  # asked for by a fixture that collection could not see
        _session_vllm = BackgroundVllm(TINY_VLLM_ARGS, "session-vllm")
    return _session_vllm.wait()


@pytest.fixture(scope="session")
def vllm_url(vllm_server: LaunchedServer | None) -> str:
    return os.environ.get("AGENTX_TEST_VLLM_URL") or (vllm_server.url if vllm_server else "")


@pytest.fixture(scope="session")
def small_kv_vllm() -> LaunchedServer:
    """A real tiny vLLM whose KV cache is too small for a few sessions at once (module docstring)."""
    global _small_kv_vllm
    if _small_kv_vllm is None:
        _small_kv_vllm = BackgroundVllm(SMALL_KV_VLLM_ARGS, "small-kv-vllm")
    return _small_kv_vllm.wait()


@pytest.fixture(scope="session")
def small_kv_vllm_url(small_kv_vllm: LaunchedServer) -> str:
    return small_kv_vllm.url


@pytest.fixture(scope="session")
def spec_vllm_url() -> str:
    """A real tiny vLLM that speculates with ngram drafts of up to 3 tokens (module docstring)."""
    global _spec_vllm
    if _spec_vllm is None:
        _spec_vllm = BackgroundVllm(SPEC_VLLM_ARGS, "spec-vllm")
    return _spec_vllm.wait().url
