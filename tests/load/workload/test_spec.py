from __future__ import annotations

import random
from pathlib import Path

import pytest

from agentx_tui.errors import WorkloadError
from agentx_tui.load import fit_to_context, list_presets, load_workload
from agentx_tui.load.workload.distributions import Constant, LogNormal, Normal, Uniform
from agentx_tui.load.workload.spec import presets_dir
from tests.helpers.paths import REPO

REPO_WORKLOADS = REPO / "workloads"
PRESETS = {"coding-agent", "chat", "deep-research", "swe-subagents", "prefill-heavy", "none"}


def test_every_preset_loads_and_is_listed_with_a_description() -> None:
    listed = dict(list_presets())
    assert set(listed) == PRESETS
    for name in PRESETS:
        w = load_workload(name)
        assert w.name == name
        assert listed[name] and "\n" not in listed[name]
        assert w.is_none == (name == "none")


def test_swe_subagents_preset_has_fan_out() -> None:
    w = load_workload("swe-subagents")
    assert w.subagents is not None and w.subagents.every_steps == 8


def test_bare_numbers_are_constants_and_draws_respect_bounds(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "description: mine\nshared_prefix_tokens: 100\n"
        "output_tokens: {dist: normal, mean: 50, std: 40, min: 10, max: 60}\n"
        "tool_result_tokens: {dist: lognormal, mean: 100, std: 50, max: 150}\n"
    )
    w = load_workload(str(path))
    assert w.name == "mine"
    assert isinstance(w.shared_prefix_tokens, Constant) and w.shared_prefix_tokens.value == 100
    rng = random.Random(1)
    draws = [w.output_tokens.draw_int(rng) for _ in range(500)]
    assert min(draws) == 10 and max(draws) == 60
    assert max(w.tool_result_tokens.draw(rng) for _ in range(500)) <= 150


def test_lognormal_mean_is_the_values_mean() -> None:
    d = LogNormal(dist="lognormal", mean=400, std=300)
    rng = random.Random(3)
    mean = sum(d.draw(rng) for _ in range(20000)) / 20000
    assert mean == pytest.approx(400, rel=0.05)


@pytest.mark.parametrize(
    ("text", "must_contain"),
    [
        ("steps: 3\nbogus: 1\n", ["bogus", "allowed fields", "shared_prefix_tokens"]),
        ("output_tokens: {dist: gamma, mean: 3}\n", ["output_tokens", "uniform", "lognormal"]),
        ("arrival: {mode: burst}\n", ["arrival.mode", "'closed'", "'poisson'"]),
        ("arrival: {mode: poisson}\n", ["arrival", "rate_per_s"]),
        ("output_tokens: {dist: uniform, min: 9, max: 3}\n", ["output_tokens", "min"]),
        ("stop: {minutes: 3}\n", ["stop.minutes", "duration_s", "sessions"]),
        ("- a\n- b\n", ["mapping"]),
        ("kind: trace\ntrace: {path: t.jsonl, bogus: 1}\n", ["trace.bogus", "allowed fields", "block_tokens"]),
        ("kind: sessions\nsessions: {path: s, bogus: 1}\n", ["sessions.bogus", "allowed fields here are: path"]),
        ("trace: {path: t.jsonl}\n", ["'trace' does not apply to a workload of kind agent", "for kind trace"]),
        ("kind: none\nsteps: 3\n", ["kind none", "for kind agent"]),
        ("kind: nope\n", ["'nope'", "'agent', 'trace', 'sessions', 'none'"]),
        ("kind: [a, b]\n", ["field 'kind'", "must be one of"]),
    ],
)
def test_validation_errors_name_file_field_and_allowed_values(
    tmp_path: Path, text: str, must_contain: list[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(WorkloadError) as info:
        load_workload(str(path))
    message = str(info.value)
    assert str(path) in message
    for part in must_contain:
        assert part in message
    assert info.value.exit_code == 2


def test_unknown_name_lists_the_presets() -> None:
    with pytest.raises(WorkloadError, match="coding-agent"):
        load_workload("no-such-preset")


def test_scale_multiplies_every_token_length_not_steps_or_latency() -> None:
    base = load_workload("swe-subagents")
    w = load_workload("swe-subagents", scale=0.5)
    assert w.scale == 0.5
    assert isinstance(w.tool_result_tokens, Uniform) and isinstance(base.tool_result_tokens, Uniform)
    assert w.tool_result_tokens.max == base.tool_result_tokens.max / 2
    assert isinstance(w.output_tokens, Normal) and isinstance(base.output_tokens, Normal)
    assert w.output_tokens.mean == base.output_tokens.mean / 2
    assert w.steps == base.steps and w.tool_latency_s == base.tool_latency_s
    assert w.subagents is not None and base.subagents is not None
    assert w.subagents.task_tokens.upper == base.subagents.task_tokens.upper / 2
    with pytest.raises(WorkloadError):
        base.scaled(0)


def test_fit_to_context_scales_down_only_when_needed_and_says_so() -> None:
    w = load_workload("coding-agent")
    fitted, note = fit_to_context(w, 4096)
    assert note is not None and "4096" in note and "coding-agent" in note
    assert fitted.context_needed() <= 4096
    assert fitted.scale < 1
    same, none_note = fit_to_context(w, 1_000_000)
    assert same is w and none_note is None
    assert fit_to_context(w, None) == (w, None)
    assert fit_to_context(load_workload("none"), 10) == (load_workload("none"), None)


def test_the_presets_are_the_repositorys_workloads_folder() -> None:
    # workloads/ is where users look for the presets and copy one to start their own; it is also what
    # the tool ships (setup.py), so there is no second copy to drift apart.
    assert presets_dir().resolve() == REPO_WORKLOADS.resolve()
    names = sorted(path.stem for path in REPO_WORKLOADS.glob("*.yaml"))
    assert [name for name, _ in list_presets()] == names
    for name in names:  # each one also loads by path, as a user's own file would
        assert load_workload(str(REPO_WORKLOADS / f"{name}.yaml")).name == name
