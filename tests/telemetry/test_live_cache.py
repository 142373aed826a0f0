"""The cache figures on the real vLLM engine (CPU build, tiny model) with --kv-cache-metrics and a KV cache
too small for the sessions sent to it: the client sees reused prefixes evicted (cached_tokens below
what it had sent), the scraper reads the residency histograms, and the prompt tokens by source add up
to 1 and to vLLM's own prompt-token counter. The CPU build cannot run an offloading connector
(docs/vllm.md): the offload tier is tested on the simulator (tests/sim/test_cpu_tier.py) and on pages.

Sessions are prompts of token ids (the completions API takes them), each its own 1,536-token prefix
(12 of the engine's 128-token blocks): six of them need 72 blocks of a 48-block cache, so sending them
in turn evicts the earliest, and sending them again misses what was evicted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx
import pytest

from agentx_tui.engine import LaunchedServer
from agentx_tui.telemetry import MetricsReader

pytestmark = pytest.mark.vllm

SESSIONS = 6
PREFIX = 1536  # tokens of a session's prompt: 12 blocks of 128
VOCAB = range(10, 500)  # ids of the tiny model's 512-token vocabulary, clear of the special ones


@dataclass(frozen=True)
class Sent:
    session: int
    prompt: int
    cached: int  # the server's usage.prompt_tokens_details.cached_tokens
    reused: int  # prompt tokens this session had sent before


def _prompt(session: int) -> list[int]:
    span = len(VOCAB)
    return [VOCAB[(session * 131 + j * 7 + (j * j) % 11) % span] for j in range(PREFIX)]


def _send(client: httpx.Client, model: str, session: int, sent_before: set[int]) -> Sent:
    body = {"model": model, "prompt": _prompt(session), "max_tokens": 2, "min_tokens": 2, "ignore_eos": True}
    usage = client.post("/v1/completions", json=body, timeout=120).json()["usage"]
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    reused = PREFIX if session in sent_before else 0
    sent_before.add(session)
    return Sent(session, usage["prompt_tokens"], cached, reused)


def test_a_too_small_kv_cache_evicts_reused_prefixes_and_the_figures_say_so(small_kv_vllm: LaunchedServer) -> None:
    url = small_kv_vllm.url
    assert small_kv_vllm.kv_cache_metrics_sample == 1.0  # as launched: --kv-cache-metrics-sample 1.0
    reader = MetricsReader(url, window_s=3600, kv_cache_metrics_sample=small_kv_vllm.kv_cache_metrics_sample)
    with httpx.Client(base_url=url) as client:
        model = str(client.get("/v1/models", timeout=30).json()["data"][0]["id"])
        reader.read(client.get("/metrics", timeout=30).text, time.monotonic())
        sent_before: set[int] = set()
        calls = [_send(client, model, s, sent_before) for s in range(SESSIONS)]  # all cold
        # Session 0 three times (two prefix hits: a reuse gap to record), then the others again.
        calls += [_send(client, model, 0, sent_before) for _ in range(3)]
        calls += [_send(client, model, s, sent_before) for s in range(1, SESSIONS)]
        figs = reader.read(client.get("/metrics", timeout=30).text, time.monotonic())

    # The client's view: what it re-sent after other sessions had pushed it out was not all cached.
    reused = sum(c.reused for c in calls)
    evicted = sum(c.reused - min(c.cached, c.reused) for c in calls)
    assert reused > 0 and evicted / reused > 0.2, calls
    assert calls[SESSIONS + 1].cached >= PREFIX - 128  # session 0 right after itself: a hit

    # The server's view: by source, adding up to 1 and to its prompt-token counter.
    shares = (figs.prompt_share_computed, figs.prompt_share_gpu_cache, figs.prompt_share_offload)
    assert None not in shares and sum(s for s in shares if s is not None) == pytest.approx(1.0, abs=0.01)
    t = figs.totals
    assert t.prompt_tokens == sum(c.prompt for c in calls)
    parts = (t.prompt_tokens_computed, t.prompt_tokens_gpu_cache, t.prompt_tokens_offload)
    assert None not in parts and sum(p for p in parts if p is not None) == pytest.approx(t.prompt_tokens, rel=0.01)
    assert t.prompt_tokens_gpu_cache == sum(c.cached for c in calls)  # no connector: every hit is the GPU's
    assert figs.prompt_share_offload == 0 and figs.kv_offload_cpu is False and figs.kv_offload_load_gb_per_s is None

    # KV residency: evicted blocks' idle times and the reuse gap of session 0's blocks.
    evictions = t.kv_block_idle_before_evict
    assert evictions is not None and evictions.total > 0
    assert figs.kv_block_idle_before_evict.p50 is not None and figs.kv_block_lifetime.p50 is not None
    assert t.kv_block_reuse_gap is not None and t.kv_block_reuse_gap.total > 0, t.kv_block_reuse_gap
    assert figs.kv_cache_metrics_sample == 1.0
