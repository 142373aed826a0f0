"""The telemetry tests' own real engine: `small_kv_vllm`, a tiny vLLM whose KV cache is too small for
the sessions sent to it (docs/vllm.md's KV-pressure recipe) and which records KV residency for every
block. Only tests/telemetry/test_live_cache.py uses it; it costs one more engine start (35–85 s,
overlapping the tests collected before it) and ~100 MB of memory while the session runs."""

from __future__ import annotations

import pytest

from agentx_tui.engine import LaunchedServer
from tests.helpers.vllm import BackgroundVllm

# 48 blocks of 128 tokens (6,144 tokens of KV); --kv-cache-metrics is added by the launcher (docs/vllm.md),
# every block sampled so that a few dozen evictions give the histograms their observations.
SMALL_KV_ARGS = ["--max-num-seqs", "16", "--num-gpu-blocks-override", "48", "--kv-cache-metrics-sample", "1.0"]
_FIXTURE = "small_kv_vllm"
_engine: BackgroundVllm | None = None


def pytest_collection_finish(session: pytest.Session) -> None:
    global _engine
    if _engine is None and any(_FIXTURE in getattr(item, "fixturenames", ()) for item in session.items):
        _engine = BackgroundVllm(SMALL_KV_ARGS, "small-kv-vllm")


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _engine is not None:
        _engine.stop()  # also after an interrupted or failed session: no vLLM outlives the tests


@pytest.fixture(scope="session")
def small_kv_vllm() -> LaunchedServer:
    global _engine
    if _engine is None:  # asked for by a fixture that collection could not see
        _engine = BackgroundVllm(SMALL_KV_ARGS, "small-kv-vllm")
    return _engine.wait()
