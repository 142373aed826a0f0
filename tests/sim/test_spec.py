"""Speculative decoding in the simulated engine (docs/sim.md, "Speculative decoding"): vLLM's synthetic
per-position rates for an acceptance length, one seeded draw per step, the counters vLLM exports (and
none without it), several tokens per step and per streamed event, and a step cost that grows with the
tokens verified: speculation helps a memory-bound decode and costs a compute-bound one. The engine runs
in simulated time (a fake clock): deterministic, no HTTP."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from agentx_tui.sim.engine import SimEngine
from agentx_tui.sim.profiles import load_profile
from agentx_tui.sim.scheduler import SimRequest
from agentx_tui.sim.spec import SpecDecoding, synthetic_rates

SPEC_FAMILIES = {
    # name → HELP, as vLLM 0.32 writes them (vllm/v1/spec_decode/metrics.py)
    "vllm:spec_decode_num_drafts": "Number of spec decoding drafts.",
    "vllm:spec_decode_num_draft_tokens": "Number of draft tokens.",
    "vllm:spec_decode_num_accepted_tokens": "Number of accepted tokens.",
    "vllm:spec_decode_num_accepted_tokens_per_pos": "Accepted tokens per draft position.",
}


@pytest.mark.parametrize(
    ("k", "length", "rates"),
    [
        (3, 2.5, (1.0, 0.5, 0.0)),
        (3, 1.0, (0.0, 0.0, 0.0)),
        (3, 4.0, (1.0, 1.0, 1.0)),
        (1, 1.79, (0.79,)),  # DeepSeek-V4 MTP, thinking on, k = 1: AgentX's golden length
        (4, 2.54, (1.0, 0.54, 0.0, 0.0)),
        (8, 3.11, (1.0, 1.0, 0.11, 0.0, 0.0, 0.0, 0.0, 0.0)),
    ],
)
def test_an_acceptance_length_maps_to_vllms_synthetic_rates(k: int, length: float, rates: tuple[float, ...]) -> None:
    got = synthetic_rates(length, k)
    assert got == pytest.approx(rates)
    assert sum(got) == pytest.approx(length - 1)  # the expected accepted drafts per step
    assert list(got) == sorted(got, reverse=True)
    assert SpecDecoding(k, length).rates == got


def test_one_draw_accepts_a_run_of_leading_positions_with_the_mean_asked() -> None:
    spec = SpecDecoding(4, 2.7)  # rates 1, 0.7, 0, 0
    n = 10_000
    draws = [spec.accepted((i + 0.5) / n, 4) for i in range(n)]  # u spread evenly over [0, 1)
    assert set(draws) == {1, 2}
    assert statistics.fmean(draws) == pytest.approx(1.7)
    assert spec.accepted(0.0, 1) == 1 and spec.accepted(0.0, 0) == 0  # never more than the drafts verified


@pytest.mark.parametrize(("k", "length"), [(0, 1.0), (65, 2.0), (3, 0.99), (3, 4.01)])
def test_a_spec_outside_vllms_range_is_refused(k: int, length: float) -> None:
    with pytest.raises(ValueError, match="must be from"):
        SpecDecoding(k, length)


# --- the engine -------------------------------------------------------------------------------------


@dataclass
class Run:
    engine: SimEngine
    requests: list[SimRequest]
    events: dict[SimRequest, list[int]]  # tokens each streamed event of a request carried

    def families(self) -> dict[str, list[tuple[str, dict[str, str], float]]]:
        page = generate_latest(self.engine.registry).decode()
        return {f.name: [(s.name, s.labels, s.value) for s in f.samples] for f in text_string_to_metric_families(page)}

    def total(self, family: str) -> float:
        return sum(value for name, _, value in self.families()[family] if name.endswith("_total"))

    def time_per_output_token(self) -> float:
        """Mean over the requests of (last − first token) ÷ (tokens − 1): the decode's pace."""
        paces = []
        for r in self.requests:
            assert r.first_token is not None and r.last_token is not None
            paces.append((r.last_token - r.first_token) / (r.num_output - 1))
        return statistics.fmean(paces)


def run(
    spec: str | None,
    *,
    profile: str = "h200",
    batch: int = 8,
    prompt: int = 512,
    output: int = 300,
    stream_interval_s: float = 0.01,
    budget: int | None = None,
) -> Run:
    """`batch` requests of distinct prompts, all at once, run to the end in simulated time."""
    k, _, length = (spec or "").partition(":")
    prof = load_profile(profile).with_overrides(
        spec=SpecDecoding(int(k), float(length)) if spec else None, max_num_batched_tokens=budget
    )
    now = [0.0]
    engine = SimEngine(prof, clock=lambda: now[0], stream_interval_s=stream_interval_s)
    prompts = [[(i * prompt + j) % 100_000 + 1 for j in range(prompt)] for i in range(batch)]
    handles = [engine.submit(p, max_tokens=output, min_tokens=output, ignore_eos=True) for p in prompts]
    requests = [h.request for h in handles]
    events: dict[SimRequest, list[int]] = {r: [] for r in requests}
    seen = dict.fromkeys(requests, 0)
    while engine.scheduler.has_work():
        end, touched = engine.run_window(now[0])
        now[0] = max(end, now[0] + 1e-6)
        for r in touched:  # what the engine hands each stream at the window's end: one SSE event
            events[r].append(r.num_output - seen[r])
            seen[r] = r.num_output
    return Run(engine, requests, events)


def test_the_counters_give_the_acceptance_length_asked() -> None:
    spec = run("3:2.5")
    drafts = spec.total("vllm:spec_decode_num_drafts")
    accepted = spec.total("vllm:spec_decode_num_accepted_tokens")
    assert drafts > 500
    assert 1 + accepted / drafts == pytest.approx(2.5, abs=0.05)
    # Every decode step of a request is a draft of K tokens (the budget never trims them here).
    assert spec.total("vllm:spec_decode_num_draft_tokens") == 3 * drafts
    per_pos = {s[1]["position"]: s[2] for s in spec.families()["vllm:spec_decode_num_accepted_tokens_per_pos"]}
    assert sorted(per_pos) == ["0", "1", "2"]
    assert per_pos["0"] == drafts and per_pos["2"] == 0  # rates 1 and 0: always, never
    assert per_pos["1"] / drafts == pytest.approx(0.5, abs=0.05)
    assert sum(per_pos.values()) == accepted
    # Each request still gets exactly the tokens it asked for; the counter counts tokens, not steps.
    assert all(r.num_output == 300 for r in spec.requests)
    assert spec.total("vllm:generation_tokens") == 8 * 300


def stops(spec: SpecDecoding | None) -> tuple[list[int], SimRequest, SimRequest]:
    """Six requests that stop by themselves (no ignore_eos), one at max_tokens 37 and one at the end of a
    640-token context, run to the end: (the six's lengths, the capped one, the one at the edge)."""
    profile = load_profile("h200").with_overrides(max_model_len=640, spec=spec)
    now = [0.0]
    engine = SimEngine(profile, clock=lambda: now[0])
    free = [engine.submit(list(range(1, 100 + i)), max_tokens=1000) for i in range(6)]
    capped = engine.submit(list(range(5000, 5100)), max_tokens=37, min_tokens=37, ignore_eos=True)
    edge = engine.submit(list(range(9000, 9600)), max_tokens=100, min_tokens=100, ignore_eos=True)
    while engine.scheduler.has_work():
        end, _ = engine.run_window(now[0])
        now[0] = max(end, now[0] + 1e-6)
    return [h.request.num_output for h in free], capped.request, edge.request


def test_a_speculating_request_stops_where_it_would_without() -> None:
    # Drafts accepted past a stop are dropped, and drafts are trimmed where the context ends.
    natural, _, _ = stops(None)
    lengths, capped, edge = stops(SpecDecoding(3, 4.0))  # every draft accepted: 4 tokens a step
    assert lengths == natural  # each at its own pseudo-random length, 32-512 tokens
    assert any(n % 4 != 1 for n in natural)  # (so some stopped inside a step's 4 tokens)
    assert (capped.num_output, capped.finish_reason) == (37, "length")
    assert edge.num_tokens == 640 and edge.finish_reason == "length"


def test_the_draws_are_seeded_per_request() -> None:
    first, again = run("3:2.5", batch=2), run("3:2.5", batch=2)
    assert [first.events[r] for r in first.requests] == [again.events[r] for r in again.requests]
    assert first.total("vllm:spec_decode_num_accepted_tokens") == again.total("vllm:spec_decode_num_accepted_tokens")


def test_without_spec_there_is_no_spec_series() -> None:
    page = generate_latest(run(None, batch=1, output=8).engine.registry).decode()
    assert "spec_decode" not in page


def test_the_spec_series_carry_vllms_names_types_labels_and_help() -> None:
    page = generate_latest(run("3:2.5", batch=1, output=8).engine.registry).decode()
    families = {f.name: f for f in text_string_to_metric_families(page)}
    for name, doc in SPEC_FAMILIES.items():
        family = families[name]
        assert (family.type, family.documentation) == ("counter", doc)
        labels = {frozenset(s.labels) for s in family.samples if s.name.endswith("_total")}
        extra = {"position"} if name.endswith("_per_pos") else set()
        assert labels == {frozenset({"model_name", "engine", *extra})}


def test_a_step_emits_the_accepted_drafts_and_one_more_in_one_event() -> None:
    # A stream interval shorter than a step: every window is one step, every event one step's tokens.
    spec = run("3:2.5", batch=4, stream_interval_s=1e-9)
    for r in spec.requests:
        decode_events = spec.events[r][1:]  # after the first token (the prefill's)
        assert set(decode_events[:-1]) <= {2, 3}  # rates 1, 0.5, 0: one or two drafts accepted, + 1
        assert statistics.fmean(decode_events[:-1]) == pytest.approx(2.5, abs=0.15)
    plain = run(None, batch=4, stream_interval_s=1e-9)
    assert all(set(plain.events[r]) == {1} for r in plain.requests)


def test_speculation_helps_a_memory_bound_decode() -> None:
    # One user: the step reads all the weights for 1 token or for 4 (1 + K verified) alike.
    plain, spec = run(None, batch=1, output=128), run("3:2.5", batch=1, output=128)
    speedup = plain.time_per_output_token() / spec.time_per_output_token()
    assert 2.2 < speedup <= 2.5  # AL, less what the three more tokens' compute costs


def test_speculation_costs_a_compute_bound_decode() -> None:
    # 256 users of 1 K contexts on an H100: verifying 4 tokens each makes the step compute-bound and
    # ~1.5× longer, more than an acceptance length of 1.2 gives back; at 2.5 it still pays. (Every prompt
    # in one step, so that no prefill chunk shares a decode step.)
    kwargs = {"profile": "h100", "batch": 256, "prompt": 1024, "output": 24, "budget": 1 << 20}
    plain = run(None, **kwargs).time_per_output_token()  # type: ignore[arg-type]
    poor = run("3:1.2", **kwargs).time_per_output_token()  # type: ignore[arg-type]
    good = run("3:2.5", **kwargs).time_per_output_token()  # type: ignore[arg-type]
    assert poor > 1.1 * plain
    assert good < plain
