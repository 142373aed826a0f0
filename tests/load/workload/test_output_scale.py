"""`--output-scale F` (load/workload/base.py, "The output scale"): every answer's length — drawn or
recorded — times F, rounded, at least 1; nothing else changes, in every kind; it composes with `--scale`
and with the fit to the context."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from agentx_tui.errors import WorkloadError
from agentx_tui.load import fit_to_context, load_workload, prepare, prepare_workload
from agentx_tui.load.workload.agent import AgentSpec, PreparedAgent
from agentx_tui.load.workload.base import output_length, scaled_length
from agentx_tui.load.workload.none import PreparedNone
from agentx_tui.load.workload.sessions import PreparedSessions, SessionCall, SessionTree
from agentx_tui.load.workload.trace import PreparedTrace
from tests.load.workload.test_sessions import call, sub, write

OUTS = (400, 7, 5, 1, 0, 333)  # 7 × 0.5 = 3.5 and 5 × 0.5 = 2.5: rounded as `round` does; 0 and 1: at least 1


def test_an_answer_is_the_recorded_length_at_scale_times_output_scale() -> None:
    assert output_length(400, 1.0, 0.7) == 280
    assert output_length(400, 0.5, 0.7) == scaled_length(400, 0.35) == 140
    assert output_length(1, 1.0, 0.1) == output_length(0, 1.0, 0.5) == 1
    assert output_length(3, 1.0, 0.5) == 2  # 1.5, rounded


# -- agent: the drawn answers ------------------------------------------------------------------------


def _draws(spec: AgentSpec, seed: int) -> dict[str, list[float]]:
    """Every distribution drawn in turn from one seeded generator, the way a session draws them."""
    rng = random.Random(seed)
    fields = ("shared_prefix_tokens", "unique_prefix_tokens", "first_message_tokens", "steps", "output_tokens",
              "tool_result_tokens", "tool_latency_s")  # fmt: skip
    out: dict[str, list[float]] = {name: [] for name in fields}
    for _ in range(50):
        for name in fields:
            out[name].append(getattr(spec, name).draw(rng))
    return out


@pytest.mark.parametrize("preset", ["coding-agent", "chat", "swe-subagents"])
def test_agent_answers_are_drawn_shorter_and_every_other_draw_is_unchanged(preset: str) -> None:
    plain, short = load_workload(preset), load_workload(preset, output_scale=0.7)
    assert isinstance(plain, AgentSpec) and isinstance(short, AgentSpec)
    assert short.output_scale == 0.7 and plain.output_scale == 1.0 and short.scale == plain.scale == 1.0
    assert short.output_tokens == plain.output_tokens.scaled(0.7)
    assert short.model_dump(exclude={"output_tokens", "output_scale"}) == plain.model_dump(
        exclude={"output_tokens", "output_scale"}
    )
    a, b = _draws(plain, 11), _draws(short, 11)
    assert b["output_tokens"] == pytest.approx([0.7 * v for v in a["output_tokens"]])
    assert {k: v for k, v in a.items() if k != "output_tokens"} == {k: v for k, v in b.items() if k != "output_tokens"}


def test_agent_output_scale_composes_with_scale_and_the_fit() -> None:
    both = load_workload("coding-agent", scale=0.5, output_scale=0.7)
    plain = load_workload("coding-agent")
    assert isinstance(both, AgentSpec) and isinstance(plain, AgentSpec)
    assert (both.scale, both.output_scale) == (0.5, 0.7)
    assert both.output_tokens.mean_value == pytest.approx(plain.output_tokens.mean_value * 0.35)
    assert both.tool_result_tokens.mean_value == pytest.approx(plain.tool_result_tokens.mean_value * 0.5)
    fitted, note = fit_to_context(prepare(load_workload("coding-agent", output_scale=0.7)), 4096)
    assert note is not None and isinstance(fitted, PreparedAgent)
    assert fitted.spec.output_scale == 0.7  # the fit scales every length, the output scale stays on top
    ratio = fitted.spec.output_tokens.mean_value / fitted.spec.tool_result_tokens.mean_value
    assert ratio == pytest.approx(0.7 * plain.output_tokens.mean_value / plain.tool_result_tokens.mean_value)


def test_agent_context_needed_counts_the_shorter_answers() -> None:
    plain, short = prepare_workload("coding-agent"), prepare_workload("coding-agent", output_scale=0.5)
    assert short.context_needed() < plain.context_needed()
    long = prepare_workload("coding-agent", output_scale=2.0)
    assert long.context_needed() > plain.context_needed()


def test_agent_check_fits_sees_the_scaled_answer(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text("first_message_tokens: 100\noutput_tokens: 1000\nsteps: 2\n")
    prepare_workload(str(path), scale=1.0).check_fits(1200, 1.0)
    with pytest.raises(WorkloadError, match="first request of about 2100 tokens"):
        prepare_workload(str(path), scale=1.0, output_scale=2.0).check_fits(1200, 1.0)


# -- trace: the recorded output_length ---------------------------------------------------------------------


def _trace(folder: Path) -> Path:
    path = folder / "t.jsonl"
    rows = [
        {"timestamp": 100 * i, "input_length": 1000 + 37 * i, "output_length": out, "hash_ids": [i, i + 1]}
        for i, out in enumerate(OUTS)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("scale", [None, 0.5])
def test_trace_answers_are_recorded_times_scale_times_output_scale(tmp_path: Path, scale: float | None) -> None:
    path = str(_trace(tmp_path))
    plain, short = prepare_workload(path, scale=scale), prepare_workload(path, scale=scale, output_scale=0.5)
    assert isinstance(plain, PreparedTrace) and isinstance(short, PreparedTrace)
    at = scale or 1.0
    assert [r.output_tokens for r in short.requests] == [max(1, round(o * at * 0.5)) for o in OUTS]
    assert [r.output_tokens for r in plain.requests] == [max(1, round(o * at)) for o in OUTS]
    # Prompts, block sizes, hash ids and timestamps as without it.
    assert short.block_tokens == plain.block_tokens
    strip = [
        (r.index, r.timestamp_s, r.input_tokens, r.hash_ids, r.recorded_in, r.recorded_out) for r in plain.requests
    ]
    assert [(r.index, r.timestamp_s, r.input_tokens, r.hash_ids, r.recorded_in, r.recorded_out)
            for r in short.requests] == strip  # fmt: skip
    assert short.context_needed() < plain.context_needed()


def test_trace_output_scale_survives_the_fit(tmp_path: Path) -> None:
    short = prepare_workload(str(_trace(tmp_path)), output_scale=0.5)
    fitted = short.scaled(0.25)
    assert isinstance(fitted, PreparedTrace)
    assert fitted.spec.output_scale == 0.5 and fitted.spec.scale == 0.25
    assert [r.output_tokens for r in fitted.requests] == [output_length(o, 0.25, 0.5) for o in OUTS]
    assert [r.input_tokens for r in fitted.requests] == [scaled_length(1000 + 37 * i, 0.25) for i in range(len(OUTS))]


# -- sessions: the recorded `out` --------------------------------------------------------------------------


def _sessions(folder: Path) -> Path:
    inner = [call(0.0, tokens=150, out=OUTS[3]), call(1.0, 0.3, tokens=190, out=OUTS[2])]
    return write(
        folder,
        [
            call(0.0, tokens=300, out=OUTS[0], ids=[1, 2, 3, 4]),
            sub(6.0, inner, 5000),
            call(7.0, 0.2, tokens=340, out=OUTS[1], ids=[1, 2, 3, 4, 5]),
            call(9.0, None, tokens=400, out=OUTS[4], api=None, ids=[1, 2, 3, 4, 5, 6]),
        ],
    )


def _without_outputs(tree: SessionTree) -> list[tuple[Any, ...]]:
    def strip(c: SessionCall) -> tuple[Any, ...]:
        timing = (c.index, c.seq, c.where, c.t, c.think_time, c.api_time)
        return (*timing, c.input_tokens, list(c.hash_ids), c.recorded_in, c.recorded_out)

    return [strip(c) for c in tree.all_calls()]


@pytest.mark.parametrize("scale", [None, 0.5])
def test_session_answers_are_recorded_times_scale_times_output_scale(tmp_path: Path, scale: float | None) -> None:
    path = str(_sessions(tmp_path))
    plain, short = prepare_workload(path, scale=scale), prepare_workload(path, scale=scale, output_scale=0.5)
    assert isinstance(plain, PreparedSessions) and isinstance(short, PreparedSessions)
    (a,), (b,) = plain.sessions.trees, short.sessions.trees
    at = scale or 1.0
    recorded = [c.recorded_out for c in a.all_calls()]
    assert [c.output_tokens for c in b.all_calls()] == [max(1, round(o * at * 0.5)) for o in recorded]
    assert [c.output_tokens for c in a.all_calls()] == [max(1, round(o * at)) for o in recorded]
    # The calls, their prompts, hash ids, think and api times, the sub-agents and their schedule: as without it.
    assert _without_outputs(b) == _without_outputs(a)
    assert (b.call_count, b.subagent_count, b.block_tokens, b.input_tokens) == (
        a.call_count, a.subagent_count, a.block_tokens, a.input_tokens,
    )  # fmt: skip
    assert [(s.spawn_after, s.join_at, s.t, s.start) for s in b.subagents] == [
        (s.spawn_after, s.join_at, s.t, s.start) for s in a.subagents
    ]
    assert b.output_tokens == sum(c.output_tokens for c in b.all_calls()) < a.output_tokens
    assert short.sessions.output_scale == 0.5 and "outputs ×0.5" in short.sessions.describe()
    assert "outputs" not in plain.sessions.describe()
    assert short.context_needed() < plain.context_needed()


def test_session_output_scale_survives_the_fit(tmp_path: Path) -> None:
    short = prepare_workload(str(_sessions(tmp_path)), output_scale=0.5)
    fitted = short.scaled(0.5)
    assert isinstance(fitted, PreparedSessions)
    assert (fitted.spec.scale, fitted.spec.output_scale, fitted.sessions.output_scale) == (0.5, 0.5, 0.5)
    (tree,) = fitted.sessions.trees
    assert [c.output_tokens for c in tree.all_calls()] == [
        output_length(c.recorded_out, 0.5, 0.5) for c in tree.all_calls()
    ]


# -- none, and bad factors -------------------------------------------------------------------------------------


def test_none_has_no_answers_to_scale() -> None:
    prepared = prepare_workload("none", output_scale=0.5)
    assert isinstance(prepared, PreparedNone) and prepared.context_needed() == 0


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_a_bad_output_scale_is_one_sentence(bad: float, tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="--output-scale must be a positive number"):
        load_workload("chat", output_scale=bad)
    with pytest.raises(WorkloadError, match="--output-scale must be a positive number"):
        load_workload(str(_trace(tmp_path)), output_scale=bad)


def test_a_workload_file_cannot_claim_an_output_scale(tmp_path: Path) -> None:
    # The spec's `output_scale` is the factor already applied: a file saying it would be ignored by
    # one kind (whose drawn lengths are in the file) and applied by another.
    path = tmp_path / "w.yaml"
    path.write_text("output_tokens: 100\noutput_scale: 0.5\n")
    with pytest.raises(WorkloadError, match="field 'output_scale' is not for a workload file"):
        load_workload(str(path))
