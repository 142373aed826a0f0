"""Pre-flight: the command line becomes one immutable plan, loaded once, or one sentence (exit 2)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from agentx_tui.cli import parse_args
from agentx_tui.errors import UsageError, WorkloadError
from agentx_tui.run import RunPlan, build_plan, preflight


def plan(*argv: str) -> RunPlan:
    return build_plan(parse_args(argv))


def test_the_default_plan_is_the_simulator_with_the_coding_agent() -> None:
    p = plan()
    assert p.target.kind == "sim" and p.target.sim_profile == "h200/llama-3.1-8b"
    assert p.load.workload.name == "coding-agent" and p.load.users == 8 and p.load.workers == 1
    assert p.duration_s is None and p.sweep is None and p.output.checks == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.load = p.load  # type: ignore[misc]


def test_the_simulators_cpu_kv_tier_goes_to_the_plan() -> None:
    p = plan("--sim", "h100", "--sim-cpu-kv-gb", "500", "--sim-cpu-kv-gbps", "450")
    assert (p.target.sim_cpu_kv_gb, p.target.sim_cpu_kv_gbps) == (500.0, 450.0)
    assert (plan().target.sim_cpu_kv_gb, plan().target.sim_cpu_kv_gbps) == (None, None)  # off by default


def test_the_simulators_step_options_go_to_the_plan() -> None:
    p = plan("--sim-spec", "3:2.5", "--sim-max-num-batched-tokens", "2048")
    assert p.target.sim_max_num_batched_tokens == 2048
    assert p.target.sim_spec is not None and str(p.target.sim_spec) == "3:2.5"
    assert p.target.sim_spec.rates == (1.0, 0.5, 0.0)
    assert (plan().target.sim_spec, plan().target.sim_max_num_batched_tokens) == (None, None)  # the profile's


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("0:1", "K, the draft tokens per step, must be from 1 to 64"),
        ("3:0.5", "the acceptance length must be at least 1 and at most K \\+ 1 = 4"),
        ("3:4.5", "at most K \\+ 1 = 4"),
        ("3", "is not K:AL"),
        ("three:2", "is not K:AL"),
        ("3:nan", "is not K:AL"),
    ],
)
def test_a_bad_sim_spec_is_one_sentence(value: str, needle: str) -> None:
    with pytest.raises(UsageError, match=f"^--sim-spec: '.*' .*{needle}") as err:
        plan("--sim-spec", value)
    assert err.value.exit_code == 2


def test_checks_are_parsed_once_into_the_plan() -> None:
    p = plan("--check", "ttft_p90_s <= 2", "--check", "error_rate == 0")
    assert [(c.key, c.op, c.threshold) for c in p.output.checks] == [
        ("ttft_p90_s", "<=", 2.0),
        ("error_rate", "==", 0.0),
    ]


def test_the_workload_is_loaded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = preflight.load_workload

    def counting(name: str, *, scale: float | None = None, output_scale: float = 1.0):  # type: ignore[no-untyped-def]
        calls.append(name)
        return real(name, scale=scale, output_scale=output_scale)

    monkeypatch.setattr(preflight, "load_workload", counting)
    p = plan("-w", "chat", "--scale", "0.5")
    assert calls == ["chat"]
    assert p.load.workload.spec.scale == 0.5


def test_a_list_sweep_sets_the_users_and_must_rise() -> None:
    p = plan("--sweep", "users=2,4,8", "--warmup", "5", "--point-duration", "30", "--tiers", "100,50")
    assert p.sweep is not None and p.sweep.users == (2, 4, 8) and not p.sweep.auto
    assert p.load.users == 2 and p.sweep.tiers == (50.0, 100.0)
    assert (p.sweep.warmup_s, p.sweep.point_duration_s) == (5.0, 30.0)
    with pytest.raises(UsageError, match="must rise"):
        plan("--sweep", "users=4,2")
    with pytest.raises(UsageError, match="cannot be used together"):
        plan("--sweep", "users=1,2", "-u", "3")
    with pytest.raises(UsageError, match="--duration and --sweep"):
        plan("--sweep", "auto", "--duration", "10")
    with pytest.raises(UsageError, match="needs load"):
        plan("--sweep", "auto", "-w", "none")


def test_a_tier_sweep_starts_from_users_and_takes_a_probe_duration() -> None:
    p = plan("--sweep", "tiers", "-u", "8", "--probe-duration", "20", "--point-duration", "120")
    assert p.sweep is not None and p.sweep.targeted and not p.sweep.auto and p.sweep.users == ()
    assert (p.sweep.start_users, p.load.users, p.sweep.probe_duration_s) == (8, 8, 20.0)
    assert p.recorded_settings().sweep is not None and p.recorded_settings().sweep.users == "tiers"  # type: ignore[union-attr]
    assert plan("--sweep", "tiers").sweep.probe_duration_s is None  # type: ignore[union-attr]
    with pytest.raises(UsageError, match="--probe-duration needs --sweep tiers"):
        plan("--sweep", "auto", "--probe-duration", "20")
    with pytest.raises(UsageError, match="--probe-duration 90 is longer than --point-duration 60"):
        plan("--sweep", "tiers", "--probe-duration", "90")


def test_users_join_midway_in_a_sweep_of_agent_sessions_or_replays_and_start_otherwise(tmp_path: Path) -> None:
    assert plan("--sweep", "tiers").load.settings.join == "midway"
    assert plan("--sweep", "users=1,2", "--join", "start").load.settings.join == "start"
    assert plan().load.settings.join == "start" and plan("--join", "midway").load.settings.join == "midway"
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}\n')
    assert plan("--sweep", "tiers", "-w", str(trace)).load.settings.join == "start"  # no stages to join at
    with pytest.raises(UsageError, match="--join midway needs agent sessions or session replays; this workload is"):
        plan("-w", str(trace), "--join", "midway")


def test_an_auto_sweep_starts_from_users_or_one() -> None:
    assert plan("--sweep", "auto").load.users == 1
    p = plan("--sweep", "auto", "-u", "16")
    assert p.sweep is not None and p.sweep.auto and p.sweep.start_users == 16 and p.load.users == 16


def test_workers_auto_is_one_for_small_runs_and_bounded_by_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preflight.os, "cpu_count", lambda: 8)
    assert plan("-u", "8").load.workers == 1
    assert plan("-u", "100000").load.workers == 7  # one core stays with the main process
    assert plan("-u", "100000", "--workers", "3").load.workers == 3


def test_prometheus_credentials_stay_out_of_repr_and_recordings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTX_PROMETHEUS_TOKEN", "tok-distinctive-77")
    p = plan(
        "--prometheus", "http://prom:9090", "--selector", '{namespace="llm"}',
        "--prometheus-header", "X-Scope-OrgID: tenant-distinctive-9",
    )  # fmt: skip
    assert p.target.kind == "prometheus" and p.load.workload.spec.is_none  # no --attach: observe only
    assert p.target.prometheus is not None and p.target.prometheus.selector == '{namespace="llm"}'
    for text in (repr(p), str(p.recorded_settings())):
        assert "tok-distinctive-77" not in text and "tenant-distinctive-9" not in text
    assert {"tok-distinctive-77", "tenant-distinctive-9"} <= set(p.secrets)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--prometheus", "http://p:9090", "--sim"], "cannot be used together"),
        (["--selector", '{a="b"}'], "only apply with --prometheus"),
        (["--prometheus", "http://p:9090", "--selector", "namespace=llm"], "--selector is not a label selector"),
        (["--prometheus", "http://p:9090", "--prometheus-header", "novalue"], "must look like 'Name: value'"),
        (["--ray", "ray://head:10001"], "--ray needs a target the cluster's nodes can reach"),
        (["--attach", "ftp://x"], "is not an http\\(s\\) URL"),
        (["--sweep", "users=a"], "is not a whole number"),
        (["--tiers", "50,inf"], "is not a finite number"),
        (["--precision", "0"], "the precision must be more than 0 and at most 1"),
        (["--precision", "5%"], "is not a number"),
        (["--precision", "0.05", "-w", "none"], "--precision needs load"),
        (["--attach", "http://x:8000", "--sim-cpu-kv-gb", "500"], "only apply to the simulated engine"),
        (["--serve", "tiny", "--sim-cpu-kv-gbps", "50"], "only apply to the simulated engine"),
        (["--attach", "http://x:8000", "--sim-spec", "3:2.5"], "only apply to the simulated engine"),
        (["--serve", "tiny", "--sim-max-num-batched-tokens", "2048"], "only apply to the simulated engine"),
        (["--sim-max-num-batched-tokens", "0"], "tokens must be at least 1"),
    ],
)
def test_bad_combinations_are_one_sentence(argv: list[str], needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        plan(*argv)


def test_a_bad_workload_is_refused_in_preflight(tmp_path: Path) -> None:
    bad = tmp_path / "w.yaml"
    bad.write_text("stepz: 3\n")
    with pytest.raises(WorkloadError, match="unknown field 'stepz'"):
        plan("-w", str(bad))


def test_precision_goes_to_the_plan_and_its_recorded_settings() -> None:
    p = plan("--sweep", "auto", "--precision", "0.05")
    assert p.precision == 0.05 and p.recorded_settings().precision == 0.05
    assert plan("--precision", "0.1", "--duration", "600").precision == 0.1  # a plain run, --duration the longest
    assert plan().precision is None


def test_agentx_sets_the_rules_defaults_a_tier_sweep_of_1800_s_points_on_the_north_star() -> None:
    """The harness's default length, 1800 s a point (900 s stays the least the rule allows), and its replay:
    whole-system idle gaps capped at 10 s; the sweep a tier sweep."""
    p = plan("--agentx")
    assert p.agentx.asked and p.sweep is not None and p.sweep.targeted and not p.sweep.auto
    assert (p.sweep.point_duration_s, p.sweep.tiers, p.frontier_axis) == (
        1800.0,
        (30.0, 50.0, 75.0, 100.0),
        "e2e_interactivity",
    )
    assert p.load.settings.idle_cap_s == 10.0 and p.load.settings.max_think_s is None
    assert plan("--sweep", "auto").load.settings.idle_cap_s is None  # a replay as recorded without --agentx
    without = plan("--sweep", "auto")
    assert without.sweep is not None and (without.sweep.point_duration_s, without.sweep.tiers) == (
        60.0,
        (30.0, 50.0, 75.0, 100.0, 150.0, 200.0),
    )
    assert not without.agentx.asked


def test_agentx_never_overrides_a_flag_the_user_gave() -> None:
    p = plan("--agentx", "--sweep", "users=4,8", "--point-duration", "30", "--tiers", "50", "--frontier-axis", "decode")
    assert p.sweep is not None and p.sweep.users == (4, 8)
    assert (p.sweep.point_duration_s, p.sweep.tiers, p.frontier_axis) == (30.0, (50.0,), "decode_interactivity")
    single = plan("--agentx", "--duration", "900", "-u", "32")  # a plain run: one point
    assert single.sweep is None and single.duration_s == 900.0 and single.load.users == 32
    with pytest.raises(UsageError, match="--agentx needs load"):
        plan("--agentx", "-w", "none")


def test_the_test_hook_shortens_agentxs_points_and_nothing_else(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTX_TEST_MIN_POINT_S", "3")
    p = plan("--agentx")
    assert p.agentx.min_point_s == 3.0 and p.sweep is not None and p.sweep.point_duration_s == 3.0
    assert plan("--sweep", "auto").sweep.point_duration_s == 60.0  # type: ignore[union-attr]
    monkeypatch.setenv("AGENTX_TEST_MIN_POINT_S", "soon")
    with pytest.raises(UsageError, match="AGENTX_TEST_MIN_POINT_S"):
        plan()


def test_the_servers_dram_and_gpus_are_taken_as_given() -> None:
    p = plan("--attach", "http://gpu-node:8000", "--server-dram-gb", "1536", "--server-gpus", "8")
    assert (p.agentx.server_dram_bytes, p.agentx.server_gpus) == (1536e9, 8)
    with pytest.raises(UsageError, match="out of range"):
        plan("--server-dram-gb", "0")


def test_warmup_is_a_sweep_point_s_by_default_and_a_plain_run_s_when_given() -> None:
    """A sweep point waits for a steady load at most 120 s unless told (900 s with --agentx); a plain run
    measures from its start unless given --warmup,
    its first seconds inside --duration (docs/usage.md)."""
    sweep = plan("--sweep", "users=2,4")
    assert sweep.sweep is not None and sweep.sweep.warmup_s == 120.0 and sweep.warmup_s == 0.0
    assert plan().warmup_s == 0.0 and plan("--duration", "30").warmup_s == 0.0
    assert plan("--duration", "30", "--warmup", "10").warmup_s == 10.0
    assert plan("--warmup", "10").warmup_s == 10.0  # until quit: the warm-up, then the window
    agentx = plan("--agentx")  # a sweep by the rules: its points' warm-up
    assert agentx.sweep is not None and agentx.sweep.warmup_s == 900.0 and agentx.warmup_s == 0.0


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("--duration", "10", "--warmup", "10"), "--warmup 10 leaves nothing of --duration 10 to measure."),
        (("-w", "none", "--warmup", "5"), "--warmup needs load: it cannot run with `-w none`."),
    ],
)
def test_a_warm_up_that_leaves_nothing_to_measure_is_refused(argv: tuple[str, ...], words: str) -> None:
    with pytest.raises(UsageError, match=re.escape(words)):
        plan(*argv)
