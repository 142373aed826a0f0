"""Shared fixtures. `vllm_url`: one real vLLM engine (CPU build, tiny model) for the whole session,
started through the project's own launcher. Tests that use it carry `@pytest.mark.vllm`.

Set AGENTX_TEST_VLLM_URL to reuse a server you already run (it must serve the tiny model).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from agentx_tui.engine import LaunchedServer, start_vllm
from agentx_tui.errors import AgentXError

# Property tests draw the same examples every run, so CI is deterministic. Explore new ones with
# HYPOTHESIS_PROFILE=explore (fresh random draws each run); paste any failure in as an @example.
settings.register_profile("default", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# Small, fixed KV space keeps memory low; prefix caching is on by default in vLLM V1.
TINY_VLLM_ARGS = ["--max-num-seqs", "32"]


@pytest.fixture(scope="session")
def vllm_server() -> Iterator[LaunchedServer | None]:
    if os.environ.get("AGENTX_TEST_VLLM_URL"):
        yield None
        return
    try:
        server = asyncio.run(start_vllm("tiny", TINY_VLLM_ARGS, timeout_s=300))
    except AgentXError as exc:
        pytest.fail(f"could not start the real vLLM engine for tests: {exc}")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def vllm_url(vllm_server: LaunchedServer | None) -> str:
    return os.environ.get("AGENTX_TEST_VLLM_URL") or (vllm_server.url if vllm_server else "")
