"""The simulator's estimated-work counters (vLLM's `--enable-mfu-metrics` names) come out of the steps it
simulates: read as a client reads them, MFU rises with the batch in prefill-heavy load and MBU dominates
in decode-heavy load, and neither is a copy of the profile's efficiency constants (docs/sim.md)."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest

from agentx_tui.sim.engine import SimEngine
from agentx_tui.sim.profiles import load_profile
from agentx_tui.snapshot import GpuPeak
from agentx_tui.snapshot.limits import Roofline, totals_roofline
from agentx_tui.telemetry import MetricsReader

PRESETS = ("h100/llama-3.1-8b", "b200/qwen3-30b-a3b")


def simulate(profile_name: str, batch: int, prompt: int, output: int) -> Roofline:
    """`batch` requests of `prompt` distinct tokens and `output` answer tokens, all at once, run to the end
    in simulated time (a fake clock); the roofline of the run as a client computes it from /metrics."""
    profile = load_profile(profile_name)
    now = [0.0]
    engine = SimEngine(profile, clock=lambda: now[0])
    reader = MetricsReader("http://sim", flavor="sim")
    reader.read(generate_latest(engine.registry).decode(), 0.0)
    for i in range(batch):
        tokens = [(i * prompt + k) % 100_000 + 1 for k in range(prompt)]
        engine.submit(tokens, max_tokens=output, min_tokens=output, ignore_eos=True)
    while engine.scheduler.has_work():
        end, _ = engine.run_window(now[0])
        now[0] = max(end, now[0] + 1e-3)
    figs = reader.read(generate_latest(engine.registry).decode(), now[0])
    peak = GpuPeak(tflops=profile.gpu.bf16_tflops, hbm_gb_per_s=profile.gpu.hbm_tb_s * 1000)
    return totals_roofline(figs.totals, figs.estimating_engines, now[0], peak)


@pytest.mark.parametrize("profile", PRESETS)
def test_mfu_rises_with_the_batch_in_prefill_heavy_load(profile: str) -> None:
    runs = [simulate(profile, batch, prompt=256, output=1) for batch in (1, 4, 32)]
    mfus = [run.mfu for run in runs]
    assert all(m is not None for m in mfus)
    assert mfus[0] < mfus[1] < mfus[2]  # the step's fixed overhead and the weights' read amortised
    # One short prompt is bound by reading the weights (all the experts' of a MoE, at 4 too); 32 are not.
    assert runs[0].bound == "memory" and runs[2].bound == "compute"
    efficiency = load_profile(profile).gpu.efficiency.mfu
    assert mfus[2] < efficiency  # the overheads show through: the constant is a ceiling, not the answer
    assert mfus[2] > 0.5 * efficiency


@pytest.mark.parametrize("profile", PRESETS)
def test_mbu_dominates_in_decode_heavy_load(profile: str) -> None:
    run = simulate(profile, batch=8, prompt=32, output=256)
    assert run.mfu is not None and run.mbu is not None
    assert run.bound == "memory" and run.mbu > 10 * run.mfu
    assert run.mbu < load_profile(profile).gpu.efficiency.mbu
