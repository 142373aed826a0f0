"""The shaped test server's /metrics page (tests/helpers/shaped_server.py) is a vLLM 0.32 page: every
family it shares with a page recorded from the real engine has the same type and labels, the
speculative-decoding counters have vLLM's names, and its request-phase histograms, engine-step tokens
and speculative counters tell exactly of the answers it served."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers.shaped_server import AnswerShape, ShapedServer, SpecRates

RECORDED = Path(__file__).parent / "data" / "vllm-0.32.0-cpu-tiny.metrics.txt"
# vLLM 0.32's speculative-decoding counters (v1/spec_decode/metrics.py): not on the recorded pages,
# whose server did not speculate.
SPEC_COUNTERS = {
    "vllm:spec_decode_num_drafts",
    "vllm:spec_decode_num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens",
    "vllm:spec_decode_num_accepted_tokens_per_pos",
}
ANSWERS = 2


@pytest.fixture
async def served() -> AsyncIterator[ShapedServer]:
    """A shaped server with speculation, after `ANSWERS` answers of its default (stalled) shape."""
    server = await ShapedServer(shape=AnswerShape.stalled(), spec=SpecRates()).start()
    body = {
        "model": "fake",
        "stream": True,
        "max_tokens": 20,
        "messages": [{"role": "user", "content": "one two three four five six seven eight nine"}],
    }
    async with aiohttp.ClientSession() as http:
        for _ in range(ANSWERS):
            async with http.post(f"{server.url}/v1/chat/completions", json=body) as resp:
                assert resp.status == 200
                assert (await resp.read()).endswith(b"data: [DONE]\n\n")
    yield server
    await server.close()


async def _page(server: ShapedServer) -> str:
    async with aiohttp.ClientSession() as http, http.get(f"{server.url}/metrics") as resp:
        assert resp.status == 200
        return await resp.text()


def _families(text: str) -> dict[str, tuple[str, frozenset[str]]]:
    """vLLM's families on a page: name → (type, label names but `le`)."""
    out = {}
    for family in text_string_to_metric_families(text):
        if family.name.startswith("vllm:") and family.samples:
            labels = frozenset(k for s in family.samples for k in s.labels if k != "le")
            out[family.name] = (family.type, labels)
    return out


def _values(text: str) -> dict[str, float]:
    """Every sample by name and labels (the engine's and the model's left out): `name{k=v}` → value."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()) if k not in ("engine", "model_name"))
            out[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
    return out


async def test_its_families_are_vllms(served: ShapedServer) -> None:
    shaped, real = _families(await _page(served)), _families(RECORDED.read_text())
    assert shaped.keys() >= SPEC_COUNTERS
    for name, kind in shaped.items():
        if name.removesuffix("_created") in SPEC_COUNTERS and name.endswith("_created"):
            continue  # prometheus_client's creation time of each counter, as vLLM's page has it
        if name in SPEC_COUNTERS:
            labels = {"engine", "model_name"} | ({"position"} if name.endswith("_per_pos") else set())
            assert kind == ("counter", labels), name
        else:
            assert real.get(name) == kind, name
    phases = ("queue", "prefill", "decode", "inference")
    wanted = {f"vllm:request_{p}_time_seconds" for p in phases} | {
        "vllm:iteration_tokens_total",
        "vllm:request_prefill_kv_computed_tokens",
        "vllm:request_num_preemptions",
        "vllm:prompt_tokens",
        "vllm:generation_tokens",
    }
    assert wanted <= shaped.keys()


async def test_it_observes_each_answer_it_served(served: ShapedServer) -> None:
    values = _values(await _page(served))
    shape = served.shape
    n = float(ANSWERS)
    for phase, each in (("queue", 0.1), ("prefill", 0.3), ("decode", 0.56), ("inference", 0.86)):
        assert values[f"vllm:request_{phase}_time_seconds_count"] == n
        assert values[f"vllm:request_{phase}_time_seconds_sum"] == pytest.approx(n * each)
    prompt = values["vllm:prompt_tokens_total"]
    cached = values["vllm:prefix_cache_hits_total"]
    assert values["vllm:generation_tokens_total"] == n * shape.output_tokens == n * 20
    assert values["vllm:request_prefill_kv_computed_tokens_sum"] == prompt - cached
    # One engine step per event; the first carries the prompt's computed tokens too.
    assert values["vllm:iteration_tokens_total_count"] == n * shape.events
    assert values["vllm:iteration_tokens_total_sum"] == prompt - cached + n * shape.output_tokens
    assert values["vllm:request_num_preemptions_count"] == n and values["vllm:request_num_preemptions_sum"] == 0
    assert values["vllm:request_success_total{finished_reason=length}"] == n
    # Speculation at its rates: acceptance length 1 + 30 / 20 = 2.5, rate 30 / 60 = 0.5, per position
    # 0.8, 0.5, 0.2 of the drafts.
    drafts = values["vllm:spec_decode_num_drafts_total"]
    assert drafts == n * 10
    assert values["vllm:spec_decode_num_draft_tokens_total"] == 3 * drafts
    accepted = values["vllm:spec_decode_num_accepted_tokens_total"]
    assert 1 + accepted / drafts == pytest.approx(2.5)
    per_pos = [values[f"vllm:spec_decode_num_accepted_tokens_per_pos_total{{position={i}}}"] / drafts for i in range(3)]
    assert per_pos == pytest.approx([0.8, 0.5, 0.2])


async def test_without_speculation_there_are_no_speculative_counters() -> None:
    server = await ShapedServer().start()
    try:
        assert not SPEC_COUNTERS & _families(await _page(server)).keys()
    finally:
        await server.close()
