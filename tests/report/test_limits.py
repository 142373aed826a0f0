"""How close to the limit in the report (docs/metrics.md, "Roofline" and "Energy"): a fake NVML whose
energy counters grow at a known rate gives joules per token, per output token, per task, tokens per joule
and, on a sweep's frontier, agents per megawatt that equal the arithmetic; `--check` and `compare` use them."""

from __future__ import annotations

import pytest

from agentx_tui.report import Report, evaluate_checks, parse_check
from agentx_tui.report._compare import compare_reports
from agentx_tui.report._keys import tier_report_keys
from agentx_tui.snapshot import EndpointTotals, GpuPeak, PointFigures, Snapshot, TaskReading, TierRead
from agentx_tui.snapshot.limits import Roofline, gpus_energy, limits_values, tick_limits
from agentx_tui.sweep import NORTH_STAR, pareto_front, point_xy, read_agents
from agentx_tui.telemetry import NvmlSampler
from tests.report._snaps import built, stream
from tests.telemetry.test_nvml import FakeClock, fake_nvml

H200 = GpuPeak(tflops=989.4, hbm_gb_per_s=4800.0, source="h200: NVIDIA H200 datasheet, 2024")
WATTS = {"h0": 300.0, "h1": 450.0}  # what each fake GPU draws, read by its energy counter


def with_nvml(snaps: list[Snapshot]) -> list[Snapshot]:
    """The stream's ticks (2 s apart, 8 s in all) with two GPUs read from the fake NVML at each tick, and
    the work the servers estimated: 4e14 FLOPs and 3.2e11 bytes a second on each of their 2 engines."""
    clock = FakeClock()
    sampler = NvmlSampler(nvml=fake_nvml(count=2, clock=clock, watts=WATTS.__getitem__), clock=clock)
    out = []
    for s in snaps:
        clock.now = s.time
        gpu = sampler.sample_once()
        elapsed = s.time - snaps[0].time
        work = EndpointTotals(
            estimated_flops=2 * 4e14 * elapsed,
            estimated_read_bytes=2 * 2e11 * elapsed,
            estimated_write_bytes=2 * 1.2e11 * elapsed,
        )
        assert s.aggregate is not None
        agg = s.aggregate.model_copy(update={"estimating_engines": 2, "totals": work})
        limits = tick_limits(
            peak=H200, aggregate=agg, gpu=gpu, energy_j=gpus_energy(gpu.gpus, 2), power_w=None, total_tokens_per_s=None
        )
        cost = s.cost.model_copy(update={"gpus_source": "--gpus"})
        out.append(s.model_copy(update={"aggregate": agg, "gpu": gpu, "limits": limits, "cost": cost}))
    out[-1] = out[-1].model_copy(update={"tasks": TaskReading(tasks_completed=4)})
    return out


def test_the_run_s_energy_figures_equal_the_arithmetic() -> None:
    report = built(with_nvml(stream()))
    # 300 W + 450 W for 8 s; the client's 4 × 1500 prompt and 4 × 150 output tokens in those 8 s.
    assert report.energy_j == pytest.approx(750 * 8)
    assert report.energy_source == "NVML total-energy counter"
    assert report.gpu_power_w_per_gpu_mean == pytest.approx(375.0)
    assert report.joules_per_token == pytest.approx(6000 / 6600)
    assert report.joules_per_output_token == pytest.approx(6000 / 600)
    assert report.tokens_per_joule == pytest.approx(6600 / 6000)
    assert report.joules_per_task == pytest.approx(6000 / 4)


def test_the_run_s_roofline_equals_the_arithmetic() -> None:
    report = built(with_nvml(stream()))
    assert report.achieved_tflops_per_gpu == pytest.approx(400.0)
    assert report.achieved_hbm_gb_per_s_per_gpu == pytest.approx(320.0)
    assert (report.peak_tflops_per_gpu, report.peak_hbm_gb_per_s_per_gpu) == (989.4, 4800.0)
    assert report.mfu == pytest.approx(400 / 989.4) and report.mbu == pytest.approx(320 / 4800)
    assert report.roofline_bound == "compute"
    assert report.achieved_source == "vLLM's estimate of its work (--enable-mfu-metrics)"
    assert report.peak_source == H200.source


def test_check_and_compare_read_them() -> None:
    report = built(with_nvml(stream()))
    (mfu, jpt, missing) = evaluate_checks(
        [parse_check("mfu >= 0.3"), parse_check("joules_per_token <= 1"), parse_check("mbu >= 0.5")], report
    )
    assert mfu.passed and jpt.passed and not missing.passed
    worse = report.model_copy(update={"mfu": report.mfu * 0.8, "joules_per_token": report.joules_per_token * 1.2})
    regressions = {row.key for row in compare_reports(report, worse).regressions}
    assert regressions == {"mfu", "joules_per_token"}
    shown = {row.key: row for row in compare_reports(report, report.model_copy(update={"mbu": 0.01})).headline}
    assert not shown["mbu"].gated and not compare_reports(report, report.model_copy(update={"mbu": 0.01})).regressions


def test_a_report_without_energy_says_so_and_has_no_figures() -> None:
    """Servers read this tick (their gauges are there) without vLLM's estimate, and GPUs without energy."""
    snaps = [
        s.model_copy(
            update={
                "limits": tick_limits(
                    peak=H200,
                    aggregate=s.aggregate.model_copy(update={"running": 3.0}) if s.aggregate else None,
                    gpu=s.gpu.model_copy(update={"gpus": ()}),
                    energy_j=None,
                    power_w=None,
                    total_tokens_per_s=None,
                )
            }
        )
        for s in stream()
    ]
    report = built(snaps)
    assert report.energy_j is None and report.joules_per_token is None and report.tokens_per_joule is None
    assert report.achieved_source is not None and "--enable-mfu-metrics" in report.achieved_source


def point_at(index: int, users: int, north_star: float, watts: float) -> PointFigures:
    """A measured point whose 2 GPUs drew `watts` each for its 60 s window, as the fake NVML counts it."""
    clock = FakeClock()
    sampler = NvmlSampler(nvml=fake_nvml(count=2, clock=clock, watts=lambda h: watts), clock=clock)
    start = gpus_energy(sampler.sample_once().gpus, 2)
    clock.now += 60.0
    end = gpus_energy(sampler.sample_once().gpus, 2)
    assert start is not None and end is not None
    limits = limits_values(
        work=Roofline(),
        peak=H200,
        source=None,
        energy_j=end - start,
        energy_from="NVML total-energy counter",
        seconds=60.0,
        gpus=2,
        total_tokens_per_s=1000.0 * users,
        output_tokens_per_s=None,
        tasks=None,
    )
    return PointFigures(
        index=index,
        users=users,
        warmup_s=20,
        duration_s=60,
        window_start_s=80.0 * index + 20,
        e2e_interactivity_p90_tokens_per_s=north_star,
        total_tokens_per_s_per_gpu=500.0 * users,
        **limits,
    )


def test_agents_per_megawatt_at_a_tier_equal_the_arithmetic() -> None:
    points = [point_at(0, 8, 150.0, 300.0), point_at(1, 16, 120.0, 450.0), point_at(2, 32, 80.0, 600.0)]
    assert [p.gpu_power_w_per_gpu_mean for p in points] == pytest.approx([300.0, 450.0, 600.0])
    assert points[1].joules_per_token == pytest.approx(2 * 450 / 16_000)
    front = pareto_front([point_xy(p, NORTH_STAR) for p in points])
    on_knot, between = read_agents(points, front, [120.0, 100.0], gpus=2, axis=NORTH_STAR)
    # On a point: 16 users on 2 GPUs, each drawing 450 W there.
    assert on_knot.agents_per_gpu == 8 and on_knot.gpu_power_w_per_gpu == pytest.approx(450.0)
    assert on_knot.agents_per_mw == pytest.approx(8 / 450e-6)
    # Between two points: the users and the power read on the frontier alike, then divided.
    assert between.agents_per_gpu is not None and between.gpu_power_w_per_gpu is not None
    assert 450 < between.gpu_power_w_per_gpu < 600
    assert between.agents_per_mw == pytest.approx(between.agents_per_gpu / (between.gpu_power_w_per_gpu / 1e6))
    tiers = [
        TierRead(tier=r.tier, axis=NORTH_STAR).model_copy(
            update={"agents_per_gpu": r.agents_per_gpu, "agents_per_mw": r.agents_per_mw}
        )
        for r in (on_knot, between)
    ]
    keys = tier_report_keys(tiers, agents_axis=NORTH_STAR)
    assert keys["agents_per_mw_at_120"] == pytest.approx(8 / 450e-6) and keys["agents_per_gpu_at_120"] == 8
    report = Report.model_validate({"frontier_axis": NORTH_STAR, **keys})
    (check,) = evaluate_checks([parse_check("agents_per_mw_at_120 >= 17000")], report)
    assert check.passed and check.value == pytest.approx(17_777.8, rel=1e-4)
