"""vLLM's estimated work (`--enable-mfu-metrics`: FLOPs, bytes read and written, per GPU of each engine)
read from /metrics into rates and run totals, and from those the roofline: every figure equals the
arithmetic of docs/metrics.md ("Roofline") on known counter values."""

from __future__ import annotations

import pytest

from agentx_tui.snapshot import GpuPeak
from agentx_tui.snapshot.limits import NO_ESTIMATE_VLLM, roofline_note, totals_roofline, window_roofline
from agentx_tui.telemetry import MetricsReader, aggregate_endpoints

from .pages import estimated_work, two_engines

H100 = GpuPeak(tflops=989.4, hbm_gb_per_s=3350.0, dtype="bf16", source="test")


def _two_pages(reader: MetricsReader) -> None:
    """Two engines, 5 s apart: engine 0 did 2e15 FLOPs, read 4e12 and wrote 1e12 bytes per GPU; engine 1
    did 3e15, 6e12 and 2e12."""
    reader.read(estimated_work({"0": (1e15, 1e12, 1e11), "1": (5e14, 2e12, 0.0)}), 100.0)
    reader.read(estimated_work({"0": (3e15, 5e12, 1.1e12), "1": (3.5e15, 8e12, 2e12)}), 105.0)


def test_rates_totals_and_the_roofline_equal_the_arithmetic() -> None:
    reader = MetricsReader("http://x")
    _two_pages(reader)
    figs = reader.read(estimated_work({"0": (3e15, 5e12, 1.1e12), "1": (3.5e15, 8e12, 2e12)}), 110.0)
    # The window holds the three pages (10 s): rates are the increases over 10 s, summed over engines.
    assert figs.estimating_engines == 2
    assert figs.estimated_flops_per_s == pytest.approx((2e15 + 3e15) / 10)
    assert figs.estimated_read_bytes_per_s == pytest.approx((4e12 + 6e12) / 10)
    assert figs.estimated_write_bytes_per_s == pytest.approx((1e12 + 2e12) / 10)
    assert (figs.totals.estimated_flops, figs.totals.estimated_read_bytes) == (pytest.approx(5e15), pytest.approx(1e13))
    assert figs.totals.estimated_write_bytes == pytest.approx(3e12)
    # One GPU: the sum over engines ÷ the engines (each engine's counter is already per GPU).
    tflops = 5e15 / 10 / 2 / 1e12  # 250 TFLOP/s
    gb_per_s = (1e13 + 3e12) / 10 / 2 / 1e9  # 650 GB/s
    window = window_roofline(figs, H100)
    assert window.achieved_tflops_per_gpu == pytest.approx(tflops)
    assert window.achieved_hbm_gb_per_s_per_gpu == pytest.approx(gb_per_s)
    assert window.mfu == pytest.approx(tflops / 989.4)
    assert window.mbu == pytest.approx(gb_per_s / 3350.0)
    assert window.bound == "compute"  # 0.253 > 0.194
    run = totals_roofline(figs.totals, figs.estimating_engines, 10.0, H100)
    assert run == window  # the run so far is the window here
    assert roofline_note(figs) is None


def test_without_a_peak_the_achieved_figures_stay_and_mfu_is_unknown() -> None:
    reader = MetricsReader("http://x")
    _two_pages(reader)
    figs = reader.read(estimated_work({"0": (3e15, 5e12, 1.1e12), "1": (3.5e15, 8e12, 2e12)}), 105.0)
    cpu = window_roofline(figs, GpuPeak(source="no GPU: no peak"))
    assert cpu.achieved_tflops_per_gpu == pytest.approx(5e15 / 5 / 2 / 1e12)
    assert (cpu.mfu, cpu.mbu, cpu.bound) == (None, None, None)


def test_a_server_without_the_flag_says_which_flag() -> None:
    reader = MetricsReader("http://x")
    page = two_engines(gen0=1, gen1=2, hits0=0, hits1=0, queries0=1, queries1=1)
    reader.read(page, 0.0)
    figs = reader.read(page, 1.0)
    assert figs.estimating_engines is None and figs.estimated_flops_per_s is None
    assert figs.totals.estimated_flops is None
    assert window_roofline(figs, H100).mfu is None
    assert roofline_note(figs) == NO_ESTIMATE_VLLM and "--enable-mfu-metrics" in NO_ESTIMATE_VLLM
    # A tick without a page (the server slow or down) says nothing of its flags.
    assert roofline_note(reader.slow("/metrics took over 0.8 s")) is None
    assert roofline_note(reader.down("connection refused")) is None


def test_replicas_add_up_and_keep_one_gpu_s_share() -> None:
    a, b = MetricsReader("http://a"), MetricsReader("http://b")
    _two_pages(a)
    b.read(estimated_work({"0": (0.0, 0.0, 0.0)}), 100.0)
    fb = b.read(estimated_work({"0": (1e15, 2e12, 0.0)}), 105.0)
    fa = a.read(estimated_work({"0": (3e15, 5e12, 1.1e12), "1": (3.5e15, 8e12, 2e12)}), 105.0)
    agg = aggregate_endpoints([fa, fb])
    assert agg is not None and agg.estimating_engines == 3
    assert agg.estimated_flops_per_s == pytest.approx((5e15 + 1e15) / 5)
    assert agg.totals.estimated_flops == pytest.approx(6e15)
    # Three engines' GPUs: the mean of their per-GPU rates.
    assert window_roofline(agg, H100).achieved_tflops_per_gpu == pytest.approx(6e15 / 5 / 3 / 1e12)
