"""Against the real vLLM engine (CPU build, tiny model): the name table still matches what it exposes,
and under load the scraper's server-side figures agree with what the client sent and received.

Set AGENTX_RECAPTURE=1 to rewrite the captured page in tests/telemetry/data/ from the live server.
"""

from __future__ import annotations

import asyncio
import json
import os
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from agentx_tui.telemetry import EndpointMonitor
from agentx_tui.telemetry._names import COUNTERS, GAUGES, HISTOGRAMS
from agentx_tui.telemetry._parse import parse_page

from .pages import DATA, REAL_BEFORE

pytestmark = pytest.mark.vllm

# What a vLLM 0.32 page must give in the internal vocabulary (SGLang's fallback gauge aside; an
# offloading connector's counters only with a connector, which the CPU build cannot run: docs/vllm.md).
OFFLOAD_COUNTERS = {name for name in COUNTERS if name.startswith("offload_")}
# Speculative decoding's only on an engine that speculates: the session's does not; the speculating one
# exports one counter per draft position (ngram, k = 3: tests/helpers/vllm.py).
SPEC_COUNTERS = {name for name in COUNTERS if name.startswith("spec_")}
EXPECTED_COUNTERS = set(COUNTERS) - OFFLOAD_COUNTERS - SPEC_COUNTERS
SPEC_POSITIONS = {f"spec_accepted_at:{i}" for i in range(3)}
SPECULATING_COUNTERS = EXPECTED_COUNTERS | (SPEC_COUNTERS - {"spec_accepted_at"}) | SPEC_POSITIONS
EXPECTED_GAUGES = set(GAUGES) - {"hit_rate_gauge"}
EXPECTED_HISTOGRAMS = set(HISTOGRAMS)


def _families_of(text: str) -> set[str]:
    return {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE vllm:")}


async def test_name_table_matches_the_live_server(vllm_url: str) -> None:
    async with httpx.AsyncClient() as client:
        text = (await client.get(vllm_url + "/metrics", timeout=10)).text
        version = (await client.get(vllm_url + "/version", timeout=10)).json().get("version")
    if os.environ.get("AGENTX_RECAPTURE"):
        (DATA / f"vllm-{version}-live.metrics.txt").write_text(text)
    page = parse_page(text, version)
    assert page.flavor == "vllm"
    assert {key[0] for key in page.counters} == EXPECTED_COUNTERS
    assert set(page.gauges) == EXPECTED_GAUGES
    assert {key[0] for key in page.histograms} == EXPECTED_HISTOGRAMS
    assert page.block_counted == set()  # 0.32 says "in terms of number of queried tokens"
    assert page.block_size is not None and page.num_gpu_blocks is not None
    # Every vLLM family of the stored capture is still exposed under the same name.
    assert _families_of(REAL_BEFORE.read_text()) <= _families_of(text)


async def _model(client: httpx.AsyncClient, url: str) -> str:
    models = (await client.get(url + "/v1/models", timeout=10)).json()
    return str(models["data"][0]["id"])


async def _chat(client: httpx.AsyncClient, url: str, model: str, system: str, user: str) -> dict[str, int]:
    body = {
        "model": model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 24,
        "min_tokens": 24,
        "ignore_eos": True,
        "temperature": 0,
    }
    usage: dict[str, int] = {}
    async with client.stream("POST", url + "/v1/chat/completions", json=body, timeout=120) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                chunk = json.loads(line[6:])
                if chunk.get("usage"):
                    raw = chunk["usage"]
                    usage = {
                        "prompt": raw["prompt_tokens"],
                        "output": raw["completion_tokens"],
                        "cached": (raw.get("prompt_tokens_details") or {}).get("cached_tokens", 0),
                    }
    assert usage, "the server sent no usage chunk"
    return usage


async def test_scraped_totals_match_what_the_client_sent(vllm_url: str) -> None:
    tag = f"run {time.time_ns()}"  # a prefix no earlier test has cached
    system = f"{tag}. " + "The agent reads the repository, plans a change and calls a tool. " * 40
    async with httpx.AsyncClient() as client:
        model = await _model(client, vllm_url)
        monitor = EndpointMonitor(vllm_url, client=client, window_s=600, timeout_s=5)
        start = time.monotonic()
        baseline = await monitor.sample(0.0)
        assert baseline.up, baseline.status
        # One request warms the shared prefix, then a concurrent wave reuses it.
        usages = [await _chat(client, vllm_url, model, system, "step 0: list the files")]
        usages += await asyncio.gather(
            *(_chat(client, vllm_url, model, system, f"step {i}: read file {i} and fix it") for i in range(1, 7))
        )
        sent = {key: sum(u[key] for u in usages) for key in ("prompt", "output", "cached")}
        # Counters are published by the engine a moment after the last token: poll briefly.
        deadline = time.monotonic() + 10
        while True:
            figs = await monitor.sample(time.monotonic() - start)
            if figs.totals.generation_tokens == sent["output"] or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
    assert sent["output"] == 7 * 24 and sent["cached"] > 0
    totals = figs.totals
    assert totals.prompt_tokens == sent["prompt"]
    assert totals.generation_tokens == sent["output"]
    assert totals.cached_prompt_tokens == sent["cached"]
    assert totals.requests_finished == 7
    client_rate = sent["cached"] / sent["prompt"]
    assert totals.prefix_cache_hits is not None and totals.prefix_cache_queries is not None
    assert totals.prefix_cache_hits / totals.prefix_cache_queries == pytest.approx(client_rate, abs=0.01)
    assert figs.prefix_hit_rate_window == pytest.approx(client_rate, abs=0.01)
    assert figs.generation_tokens_per_s is not None and figs.generation_tokens_per_s > 0
    assert figs.ttft.p50 is not None and figs.itl.p50 is not None
    # `--serve` starts vLLM with --enable-mfu-metrics, and the CPU build exports the estimate too: at
    # least the matmuls of every output token, 2 × 294 912 weights (the tiny model's two layers) each.
    assert figs.estimating_engines == 1
    assert totals.estimated_flops is not None and totals.estimated_flops >= 2 * 294_912 * sent["output"]
    assert totals.estimated_read_bytes and totals.estimated_write_bytes
    assert figs.estimated_flops_per_s is not None and figs.estimated_flops_per_s > 0


def _increase(before: str, after: str, sample: str) -> float:
    """How much a counter's sample grew between two pages, read by prometheus_client's parser alone."""

    def value(text: str) -> float:
        families = text_string_to_metric_families(text)
        return sum(s.value for family in families for s in family.samples if s.name == sample)

    return value(after) - value(before)


async def _timed_chat(client: httpx.AsyncClient, url: str, model: str, user: str) -> float:
    """One greedy streamed chat of 32 tokens; its TTFT by the client's clock (send → first content)."""
    body = {
        "model": model,
        "messages": [{"role": "user", "content": user}],
        "stream": True,
        "max_tokens": 32,
        "min_tokens": 32,
        "ignore_eos": True,
        "temperature": 0,
    }
    sent = time.monotonic()
    first: float | None = None
    async with client.stream("POST", url + "/v1/chat/completions", json=body, timeout=120) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if first is None and line.startswith("data: {"):
                choices = json.loads(line[6:]).get("choices") or [{}]
                if choices[0].get("delta", {}).get("content"):
                    first = time.monotonic()
    assert first is not None, "no content came"
    return first - sent


async def test_speculative_decoding_and_the_phases_from_the_engine_s_own_counters(spec_vllm_url: str) -> None:
    """An engine that speculates with ngram (k = 3), on greedy requests: the acceptance length the scraper
    gives is 1 + Δaccepted ÷ Δdrafts of its own /metrics over the same window, and more than 1; the
    phases are known, and queue + prefill fit inside the client's own TTFT mean."""
    vllm_url = spec_vllm_url
    async with httpx.AsyncClient() as client:
        model = await _model(client, vllm_url)
        monitor = EndpointMonitor(vllm_url, client=client, window_s=600, timeout_s=5)
        before_text = (await client.get(vllm_url + "/metrics", timeout=10)).text
        assert {key[0] for key in parse_page(before_text).counters} == SPECULATING_COUNTERS
        start = time.monotonic()
        before = await monitor.sample(0.0)
        assert before.up, before.status
        tag = time.time_ns()
        ttfts = await asyncio.gather(
            *(_timed_chat(client, vllm_url, model, f"{tag} story {i}: the cat and the dog") for i in range(6))
        )
        deadline = time.monotonic() + 10
        while True:  # the phases are observed a moment after each request ends
            figs = await monitor.sample(time.monotonic() - start)
            done = (figs.totals.request_queue_s_count or 0) - (before.totals.request_queue_s_count or 0)
            if done >= len(ttfts) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        after_text = (await client.get(vllm_url + "/metrics", timeout=10)).text
    drafts = _increase(before_text, after_text, "vllm:spec_decode_num_drafts_total")
    accepted = _increase(before_text, after_text, "vllm:spec_decode_num_accepted_tokens_total")
    print(f"\nngram k=3: {drafts:.0f} drafts, {accepted:.0f} accepted: AL {1 + accepted / drafts:.2f}")
    assert drafts > 0 and figs.spec_draft_length == 3
    assert figs.spec_acceptance_length == pytest.approx(1 + accepted / drafts)
    assert figs.spec_acceptance_length is not None and figs.spec_acceptance_length > 1
    assert figs.spec_acceptance_rate is not None and 0 < figs.spec_acceptance_rate <= 1
    assert figs.spec_acceptance_by_position is not None and len(figs.spec_acceptance_by_position) == 3
    queue, prefill, decode = figs.server_queue_s_mean, figs.server_prefill_s_mean, figs.server_decode_s_mean
    assert queue is not None and prefill is not None and decode is not None and decode > 0
    assert figs.server_step_tokens_mean is not None and figs.server_preemptions_per_request == 0
    client_ttft = sum(ttfts) / len(ttfts)
    print(f"queue {queue:.4f} s + prefill {prefill:.4f} s against the client's TTFT mean {client_ttft:.4f} s")
    assert queue + prefill <= client_ttft
