"""¹ GPU: how close to the limit (docs/metrics.md, "Roofline", "Energy") beside the GPU rows: MFU and MBU
with the one that binds, the work achieved against the peak, joules per token over the window, and n/a
with the reason where a figure cannot be known; within 80×24, with more words at 200×60.

Update the stored SVGs after an intended change with `pytest tests/ui --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot

from agentx_tui.snapshot import GpuPeak, GpuState, LimitsReading, Snapshot
from agentx_tui.snapshot.limits import MODELLED_ENERGY, NO_ESTIMATE_VLLM
from agentx_tui.ui import AgentXApp
from agentx_tui.ui.panes import GpuPane
from agentx_tui.ui.panes.gpu import limits_lines
from tests.ui._helpers import shown
from tests.ui.fakes import FakeLiveControls, FakeSource, make_snapshot

SnapCompare = Callable[..., bool]
COMPACT, WIDE = 36, 64  # the pane's text width at 80 and at 200 columns
H200 = GpuPeak(tflops=989.4, hbm_gb_per_s=4800.0, dtype="bf16", source="h200: NVIDIA H200 datasheet, 2024")
DECODE = LimitsReading(
    peak=H200,
    achieved_tflops_per_gpu=98.2,
    achieved_hbm_gb_per_s_per_gpu=2620.0,
    mfu=98.2 / 989.4,
    mbu=2620.0 / 4800.0,
    roofline_bound="memory",
    energy_j=6800.0,
    energy_source="NVML total-energy counter",
    joules_per_token=0.0154,
)


def plain(limits: LimitsReading, width: int) -> list[str]:
    lines = [text for line in limits_lines(limits, width) for text in line.plain.split("\n")]
    assert all(len(line) <= width for line in lines), lines
    return lines


def test_compact_lines_give_the_bound_the_work_and_joules_per_token() -> None:
    assert plain(DECODE, COMPACT) == ["MFU 10%  MBU 55%  memory-bound", "98.2 TF/s  2.62K GB/s  0.015 J/tok"]


def test_wide_lines_give_the_peaks_and_say_the_window() -> None:
    assert plain(DECODE, WIDE) == [
        "MFU 10% of 989 TF/s BF16  MBU 55% of 4.8K GB/s  memory-bound",
        "achieved 98.2 TF/s  2.62K GB/s per GPU  0.015 J/tok (window)",
    ]


def test_the_binding_figure_is_in_bold_accent() -> None:
    first = limits_lines(DECODE, COMPACT)[0]
    styles = {first.plain[span.start : span.end]: str(span.style) for span in first.spans}
    assert styles["55%"] == "bold $accent" and styles["10%"] == "bold"


def test_a_server_without_the_flag_names_it() -> None:
    limits = LimitsReading(peak=H200, roofline_note=NO_ESTIMATE_VLLM, joules_per_token=0.4, energy_source="x")
    assert plain(limits, COMPACT) == ["MFU n/a: --enable-mfu-metrics", "0.4 J/tok"]
    assert plain(limits, WIDE)[:2] == [
        "MFU, MBU n/a: start vLLM with --enable-mfu-metrics (its",
        "estimated FLOPs and bytes)",
    ]


def test_a_cpu_server_shows_its_work_without_a_peak() -> None:
    """The tiny engine on CPU: vLLM estimates its work, no GPU gives a ceiling or an energy."""
    limits = LimitsReading(
        peak=GpuPeak(source="no peak: no GPU seen (pass --gpu-peak TFLOPS,TBPS)"),
        achieved_tflops_per_gpu=0.00123,
        achieved_hbm_gb_per_s_per_gpu=0.0456,
        energy_note="n/a: no NVIDIA GPU visible: NVML Shared Library Not Found",
    )
    assert plain(limits, COMPACT) == ["MFU n/a: no peak (--gpu-peak)", "0.00123 TF/s  0.0456 GB/s  J/tok n/a"]
    assert plain(limits, 100) == [
        "MFU, MBU n/a: no peak: no GPU seen (pass --gpu-peak TFLOPS,TBPS)",
        "achieved 0.00123 TF/s  0.0456 GB/s per GPU  J/tok n/a",
        "n/a: no NVIDIA GPU visible: NVML Shared Library Not Found",
    ]


def test_modelled_energy_says_so() -> None:
    sim = DECODE.model_copy(update={"energy_source": MODELLED_ENERGY})
    assert plain(sim, WIDE)[1:] == ["achieved 98.2 TF/s  2.62K GB/s per GPU", "0.015 J/tok (window, modelled)"]


def with_limits(snap: Snapshot, limits: LimitsReading) -> Snapshot:
    return snap.model_copy(update={"limits": limits})


async def test_without_a_gpu_the_pane_still_shows_the_work() -> None:
    limits = LimitsReading(peak=GpuPeak(source="no GPU"), achieved_tflops_per_gpu=0.002, roofline_note=None)
    snap = with_limits(make_snapshot(1, gpus=0, price=False), limits)
    assert snap.gpu == GpuState()
    app = AgentXApp(FakeSource([snap]), FakeLiveControls(), refresh_s=0.25)
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot, 1)
        text = str(app.query_one(GpuPane).figures.render())
    assert text.splitlines()[0].startswith("no NVIDIA GPU visible")
    assert "0.002 TF/s" in text and "MFU n/a: no peak (--gpu-peak)" in text


def gpu_app() -> AgentXApp:
    snaps = [with_limits(make_snapshot(seq), DECODE) for seq in range(1, 4)]
    return AgentXApp(FakeSource(snaps), FakeLiveControls(), refresh_s=0.25)


async def _settle(pilot: Pilot[None]) -> None:
    await shown(pilot, 3)


@pytest.mark.parametrize("size", [(80, 24), (200, 60)], ids=["80x24", "200x60"])
def test_gpu_pane_with_limits(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    assert snap_compare(gpu_app(), terminal_size=size, run_before=_settle)
