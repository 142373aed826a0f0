"""The simulator's request phases and steps, as vLLM 0.32 exports them (docs/sim.md, "Request phases"):
the same families, types, labels, HELP and buckets as a real vLLM page; sums that agree with the
engine's own timing of each request (TTFT = queued + prefill, inference = prefill + decode); and a
chunked-prefill budget that trades a long prefill's TTFT for the stalls of the streams decoding beside
it. The engine runs in simulated time (a fake clock): deterministic, no HTTP."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from agentx_tui.sim.engine import SimEngine
from agentx_tui.sim.profiles import load_profile
from agentx_tui.sim.scheduler import SimRequest
from tests.telemetry.pages import REAL_BEFORE

PHASES = (
    "vllm:request_queue_time_seconds",
    "vllm:request_prefill_time_seconds",
    "vllm:request_decode_time_seconds",
    "vllm:request_inference_time_seconds",
    "vllm:iteration_tokens_total",
    "vllm:request_prefill_kv_computed_tokens",
    "vllm:request_num_preemptions",
)


def families(text: str) -> dict[str, tuple[str, str, list[Sample]]]:
    """name → (type, HELP, samples)."""
    return {f.name: (f.type, f.documentation, f.samples) for f in text_string_to_metric_families(text)}


def value(samples: Iterable[Sample], suffix: str, **labels: str) -> float:
    return sum(s.value for s in samples if s.name.endswith(suffix) and labels.items() <= s.labels.items())


def bounds(samples: Iterable[Sample]) -> list[float]:
    return sorted({float(s.labels["le"]) for s in samples if "le" in s.labels})


# --- against a real vLLM page -------------------------------------------------------------------------


def test_the_phase_families_are_vllms() -> None:
    real = families(REAL_BEFORE.read_text())
    sim = families(generate_latest(SimEngine(load_profile("h200")).registry).decode())
    for name in PHASES:
        (sim_type, sim_help, sim_samples), (real_type, real_help, real_samples) = sim[name], real[name]
        assert (sim_type, sim_help) == (real_type, real_help), name
        sim_labels = {frozenset(s.labels) - {"le"} for s in sim_samples}
        real_labels = {frozenset(s.labels) - {"le"} for s in real_samples}
        assert sim_labels == real_labels == {frozenset({"model_name", "engine"})}, name
        if name != "vllm:request_prefill_kv_computed_tokens":
            assert bounds(sim_samples) == bounds(real_samples), name
    # Tokens per request: vLLM's 1-2-5 series up to the model's context, as its prompt-length histogram
    # (the real page's model has 4 K tokens, the simulated Llama-3.1-8B 128 K).
    for page in (sim, real):
        kv_computed = bounds(page["vllm:request_prefill_kv_computed_tokens"][2])
        assert kv_computed == bounds(page["vllm:request_prompt_tokens"][2])
    assert bounds(sim["vllm:request_prefill_kv_computed_tokens"][2])[-2:] == [100_000.0, float("inf")]


# --- agreement with the engine's own timing -------------------------------------------------------------


@dataclass
class Served:
    engine: SimEngine
    requests: list[SimRequest]
    page: dict[str, tuple[str, str, list[Sample]]]

    def sum(self, name: str) -> float:
        return value(self.page[name][2], "_sum")

    def count(self, name: str) -> float:
        return value(self.page[name][2], "_count")

    def total(self, name: str, **labels: str) -> float:
        return value(self.page[name][2], "_total", **labels)


def serve_under_pressure() -> Served:
    """48 requests arriving 20 ms apart (a 1 K shared prefix, 0.5–4 K of their own, 16–200 tokens out)
    into a small engine: 8 sequences at most (a queue), 700 KV blocks (preemptions), 1,024 tokens a step
    (chunked prefill)."""
    profile = load_profile("h100").with_overrides(num_gpu_blocks=700, max_num_seqs=8, max_num_batched_tokens=1024)
    now = [0.0]
    engine = SimEngine(profile, clock=lambda: now[0])
    shared = list(range(1, 1025))
    due = [(0.02 * i, i) for i in range(48)]
    requests: list[SimRequest] = []
    while due or engine.scheduler.has_work():
        while due and due[0][0] <= now[0]:
            _, i = due.pop(0)
            own = [100_000 + 10_000 * i + j for j in range(500 + 73 * i)]
            out = 16 + (37 * i) % 185
            requests.append(engine.submit([*shared, *own], max_tokens=out, min_tokens=out, ignore_eos=True).request)
        if not engine.scheduler.has_work():
            now[0] = due[0][0]
            continue
        end, _ = engine.run_window(now[0])
        now[0] = max(end, now[0] + 1e-6)
    return Served(engine, requests, families(generate_latest(engine.registry).decode()))


@pytest.fixture(scope="module")
def served() -> Served:
    return serve_under_pressure()


def test_the_run_queued_chunked_and_preempted(served: Served) -> None:
    assert served.sum("vllm:request_queue_time_seconds") > 1.0
    assert served.total("vllm:num_preemptions") > 0
    assert all(r.finish_reason == "length" for r in served.requests)


def test_the_phases_add_up_as_vllms_do(served: Served) -> None:
    n = len(served.requests)
    for name in (*PHASES[:4], "vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds"):
        assert served.count(name) == n, name
    queue, prefill = served.sum("vllm:request_queue_time_seconds"), served.sum("vllm:request_prefill_time_seconds")
    decode = served.sum("vllm:request_decode_time_seconds")
    inference = served.sum("vllm:request_inference_time_seconds")
    assert queue + prefill == pytest.approx(served.sum("vllm:time_to_first_token_seconds"), rel=1e-9)
    assert prefill + decode == pytest.approx(inference, rel=1e-9)
    assert queue + inference == pytest.approx(served.sum("vllm:e2e_request_latency_seconds"), rel=1e-9)


def test_the_phases_are_the_engines_own_timing_of_each_request(served: Served) -> None:
    queued = prefill = decode = 0.0
    for r in served.requests:
        assert r.first_scheduled is not None and r.first_token is not None and r.last_token is not None
        queued += r.first_scheduled - r.arrival
        prefill += r.first_token - r.first_scheduled
        decode += r.last_token - r.first_token
    expected = {
        "vllm:request_queue_time_seconds": queued,
        "vllm:request_prefill_time_seconds": prefill,
        "vllm:request_decode_time_seconds": decode,
    }
    for name, seconds in expected.items():
        assert served.sum(name) == pytest.approx(seconds, rel=1e-9), name
    # A preempted request's phases run from its first scheduling, its recomputation included (as vLLM's).
    preemptions = [r.num_preemptions for r in served.requests]
    assert any(preemptions) and served.sum("vllm:request_num_preemptions") == sum(preemptions)
    assert served.sum("vllm:request_num_preemptions") == served.total("vllm:num_preemptions")


def test_step_tokens_and_computed_prompts_are_counted_as_vllm_counts_them(served: Served) -> None:
    computed = served.total("vllm:prompt_tokens_by_source", source="local_compute")
    generated = served.total("vllm:generation_tokens")
    assert computed > 0 and generated == sum(r.num_output for r in served.requests)
    # One observation per step with output: its generated tokens, plus each prompt's computed tokens once,
    # in the step of its first token (so a chunked prefill is one observation, not one per chunk).
    assert served.sum("vllm:iteration_tokens_total") == computed + generated
    assert served.count("vllm:iteration_tokens_total") < served.engine.steps
    assert served.sum("vllm:request_prefill_kv_computed_tokens") == computed
    assert served.count("vllm:request_prefill_kv_computed_tokens") == len(served.requests)


# --- chunked prefill: a long prefill stalls the streams decoding beside it ------------------------------


@dataclass(frozen=True)
class Stalls:
    gaps: list[float]  # between one decoding stream's events, seconds
    ttft_s: float  # the long prompt's

    @property
    def median(self) -> float:
        return statistics.median(self.gaps)

    @property
    def stalled(self) -> list[float]:
        return [g for g in self.gaps if g > 3 * self.median]


def long_prefill_beside_a_decode(budget: int, prompt: int = 16_000) -> Stalls:
    """One request decodes 400 tokens; 0.5 s in, a `prompt`-token prompt (an agent's tool result) arrives.
    The decoding stream's events are what the engine hands it at the end of each window."""
    profile = load_profile("h200").with_overrides(max_num_batched_tokens=budget)
    now = [0.0]
    engine = SimEngine(profile, clock=lambda: now[0])
    decoding = engine.submit(list(range(1, 201)), max_tokens=400, min_tokens=400, ignore_eos=True).request
    long: SimRequest | None = None
    events: list[float] = []
    while engine.scheduler.has_work():
        if long is None and now[0] >= 0.5:
            tokens = list(range(1_000_000, 1_000_000 + prompt))
            long = engine.submit(tokens, max_tokens=1, min_tokens=1, ignore_eos=True).request
        end, touched = engine.run_window(now[0])
        now[0] = max(end, now[0] + 1e-6)
        if decoding in touched:
            events.append(end)
    assert long is not None and long.first_token is not None
    return Stalls([b - a for a, b in itertools.pairwise(events)], long.first_token - long.arrival)


def test_a_long_prefill_stalls_a_decoding_stream_once_with_a_large_budget() -> None:
    whole = long_prefill_beside_a_decode(16_384)
    assert len(whole.stalled) == 1  # the whole 16 K prompt in one step, every decode in it waiting
    assert whole.stalled[0] > 30 * whole.median
    assert whole.stalled[0] == pytest.approx(whole.ttft_s, rel=0.05)


def test_a_small_budget_turns_the_stall_into_shorter_ones_and_delays_the_long_prompt() -> None:
    whole, chunked = long_prefill_beside_a_decode(16_384), long_prefill_beside_a_decode(2048)
    assert len(chunked.stalled) == 8  # ⌈16,000 ÷ 2,048⌉ steps carry a chunk, each with the decode in it
    assert max(chunked.stalled) < whole.stalled[0] / 4
    # The same work, so about the same decode time lost, spread out; the long prompt waits a little longer.
    assert sum(chunked.stalled) == pytest.approx(whole.stalled[0], rel=0.25)
    assert chunked.ttft_s > whole.ttft_s
    assert chunked.median == pytest.approx(whole.median, rel=0.05)  # an ordinary decode step is unchanged
