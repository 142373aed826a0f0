"""The meter's formulas, each figure worked out by hand (docs/metrics.md)."""

from __future__ import annotations

import pytest

from agentx_tui.cost import CostMeter, PriceChoice


def _rental(usd: float, gpus: int | None) -> PriceChoice:
    return PriceChoice(mode="rental", usd_per_gpu_hour=usd, gpus=gpus, source="--gpu-price")


def test_no_price_gives_none_and_says_how_to_set_one() -> None:
    figs = CostMeter(None).figures(
        elapsed_s=60,
        total_tokens=1e6,
        output_tokens=1e5,
        window_total_tokens_per_s=1e4,
        window_output_tokens_per_s=1e3,
        gpu_power_w=500,
    )
    assert figs.usd_spent is None and figs.tokens_per_dollar_total is None and figs.mode == "none"
    assert "--gpu-price" in figs.price_source and "--cost-profile" in figs.price_source


def test_rental_run_and_window_figures() -> None:
    meter = CostMeter(_rental(2.0, 4))
    # One hour on 4 GPUs at 2 USD: 8 USD.
    figs = meter.figures(
        elapsed_s=3600,
        total_tokens=8e9,
        output_tokens=4e8,
        window_total_tokens_per_s=830_000,
        window_output_tokens_per_s=50_000,
        gpu_power_w=650,
    )
    assert figs.usd_spent == pytest.approx(8.0)
    assert figs.tokens_per_dollar_total == pytest.approx(1e9)
    assert figs.tokens_per_dollar_output == pytest.approx(5e7)
    assert figs.usd_per_million_output_tokens == pytest.approx(8.0 * 1e6 / 4e8)
    assert figs.tokens_per_dollar_total_window == pytest.approx(830_000 * 3600 / 8.0)
    assert figs.tokens_per_dollar_output_window == pytest.approx(50_000 * 3600 / 8.0)
    assert (figs.usd_per_gpu_hour, figs.gpus, figs.mode) == (2.0, 4, "rental")  # power never added


def test_design_seed_figure() -> None:
    meter = CostMeter(_rental(2.30, 1))
    figs = meter.figures(
        elapsed_s=1,
        total_tokens=None,
        output_tokens=None,
        window_total_tokens_per_s=830_000,
        window_output_tokens_per_s=None,
        gpu_power_w=None,
    )
    assert figs.tokens_per_dollar_total_window == pytest.approx(1.3e9, rel=0.001)
    assert figs.tokens_per_dollar_total is None and figs.usd_per_million_output_tokens is None


def test_unknown_gpu_count_prices_nothing_and_says_so() -> None:
    """The one price rule: a price without a GPU count gives no dollar figure (no GPU is assumed)."""
    figs = CostMeter(_rental(3.6, None)).figures(
        elapsed_s=1800,
        total_tokens=1e6,
        output_tokens=1e5,
        window_total_tokens_per_s=500.0,
        window_output_tokens_per_s=50.0,
        gpu_power_w=None,
    )
    assert figs.gpus is None and figs.usd_per_gpu_hour == 3.6 and figs.mode == "rental"
    dollars = (
        figs.usd_spent,
        figs.tokens_per_dollar_total,
        figs.tokens_per_dollar_output,
        figs.usd_per_million_output_tokens,
        figs.tokens_per_dollar_total_window,
        figs.tokens_per_dollar_output_window,
    )
    assert dollars == (None,) * 6
    assert figs.price_source == "--gpu-price; GPU count unknown: every $ figure is n/a (pass --gpus N)"


def test_a_count_found_later_prices_the_run() -> None:
    meter = CostMeter(_rental(3.6, None))
    meter.count_gpus(2)
    figs = meter.figures(
        elapsed_s=1800,
        total_tokens=0,
        output_tokens=0,
        window_total_tokens_per_s=None,
        window_output_tokens_per_s=None,
        gpu_power_w=None,
    )
    assert figs.gpus == 2 and figs.usd_spent == pytest.approx(3.6) and figs.price_source == "--gpu-price"
    assert figs.tokens_per_dollar_total == 0 and figs.usd_per_million_output_tokens is None


def test_owned_mode_integrates_measured_power() -> None:
    price = PriceChoice(
        mode="owned",
        usd_per_gpu_hour=1.2,
        gpus=2,
        source="preset",
        fixed_usd_per_gpu_hour=1.0,
        board_power_w=700,
        pue=1.25,
        usd_per_kwh=0.1,
    )
    meter = CostMeter(price)
    kw = {
        "total_tokens": None,
        "output_tokens": None,
        "window_total_tokens_per_s": None,
        "window_output_tokens_per_s": None,
    }
    # First hour at 400 W, second hour at 800 W; energy per GPU-hour = kW × 1.25 × 0.1.
    meter.figures(elapsed_s=3600, gpu_power_w=400, **kw)
    figs = meter.figures(elapsed_s=7200, gpu_power_w=800, **kw)
    energy = (0.4 * 0.125 + 0.8 * 0.125) * 2
    assert figs.usd_spent == pytest.approx(1.0 * 2 * 2 + energy)
    assert figs.usd_per_gpu_hour == pytest.approx(1.0 + 0.8 * 0.125) and figs.mode == "owned"
    # Without a measurement, board power.
    figs = meter.figures(elapsed_s=10800, gpu_power_w=None, **kw)
    assert figs.usd_spent == pytest.approx(1.0 * 2 * 3 + energy + 0.7 * 0.125 * 2)


def test_set_price_live_reprices_and_keeps_gpus() -> None:
    meter = CostMeter(_rental(2.0, 4))
    meter.set_price(None, 8)
    meter.set_price(3.0, None)
    figs = meter.figures(
        elapsed_s=3600,
        total_tokens=None,
        output_tokens=None,
        window_total_tokens_per_s=None,
        window_output_tokens_per_s=None,
        gpu_power_w=None,
    )
    assert (figs.usd_per_gpu_hour, figs.gpus, figs.usd_spent) == (3.0, 8, pytest.approx(24.0))
    assert figs.price_source == "set live"
    empty = CostMeter(None)
    empty.set_price(1.5, None)
    assert empty.price is not None and empty.price.usd_per_gpu_hour == 1.5
