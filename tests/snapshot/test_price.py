"""The one price rule (snapshot/price.py): its arithmetic, and the meter, a sweep point, a tier read and
the task figures reading one operating point the same; no GPU count, no dollar figure anywhere."""

from __future__ import annotations

import pytest

from agentx_tui.cost import CostMeter, PriceChoice
from agentx_tui.measure import ClientStats, Completed, WindowBook
from agentx_tui.snapshot import NO_GPUS, NO_PRICE, CostReading, PointFigures, RunInfo, Snapshot, pricing
from agentx_tui.sweep import NORTH_STAR, PointWindow, read_tiers


def test_the_rule_by_hand() -> None:
    # 4 GPUs at 2 USD: 8 USD an hour; 1000 tokens/s is 3.6 M tokens an hour: 450 K tokens per dollar.
    price = pricing(2.0, 4)
    assert price.usd_per_hour == 8.0 and price.missing is None
    assert price.tokens_per_dollar(1000.0) == pytest.approx(450_000)
    assert price.usd_per_million_tokens(1000.0) == pytest.approx(8.0 / 3.6)
    assert price.usd_per_task(90_000, 1000.0) == pytest.approx(0.2)  # 90 K tokens at 450 K per dollar
    assert price.tokens_per_dollar(0.0) == 0.0 and price.usd_per_million_tokens(0.0) is None  # no tokens


@pytest.mark.parametrize(
    ("usd", "gpus", "missing"),
    [(None, 4, NO_PRICE), (0.0, 4, NO_PRICE), (float("nan"), 4, NO_PRICE), (2.0, None, NO_GPUS), (2.0, 0, NO_GPUS)],
)
def test_without_a_price_or_a_gpu_count_every_dollar_figure_is_unknown(
    usd: float | None, gpus: int | None, missing: str
) -> None:
    price = pricing(usd, gpus)
    assert price.usd_per_hour is None and price.missing == missing
    assert (price.tokens_per_dollar(1000.0), price.usd_per_million_tokens(1000.0), price.usd_per_task(1e4, 1e3)) == (
        None,
        None,
        None,
    )


# -- one operating point, read three ways ------------------------------------------------------------------

USD_PER_GPU_HOUR, GPUS, SPAN_S = 2.0, 4, 100.0


def _steady_stats() -> tuple[ClientStats, WindowBook]:
    """Ten tasks of four 1-s calls (1000 prompt + 100 output tokens each), every one inside a window of
    100 s that is also the whole run: 44 000 tokens, 440 tokens/s."""
    stats = ClientStats(window_s=10, started_at=0.0)
    window = stats.open_window(0.0)
    for tree in range(10):
        for step in range(4):
            sent = tree * 10.0 + step * 2.5
            stats.add(
                Completed(
                    sent_at=sent, first_token_at=sent + 0.1, last_token_at=sent + 1.0, ended_at=sent + 1.0,
                    prompt_tokens=1000, cached_tokens=None, output_tokens=100, ceiling_tokens=0, ttft_s=0.1,
                    decode_tokens_per_s=110.0, e2e_per_token_s=0.01, tree=tree, user=0, step=step + 1,
                )
            )  # fmt: skip
        stats.session_ended("done", tree)
    stats.end_window(window, SPAN_S)
    return stats, window


def _tick(t: float, cost: CostReading) -> Snapshot:
    return Snapshot(seq=int(t) + 1, time=1e9 + t, elapsed_s=t, run=RunInfo(target="test"), cost=cost)


def _three_reads(gpus: int | None) -> tuple[CostReading, float | None, PointFigures, tuple[float | None, ...]]:
    stats, window = _steady_stats()
    meter = CostMeter(PriceChoice(mode="rental", usd_per_gpu_hour=USD_PER_GPU_HOUR, gpus=gpus, source="--gpu-price"))
    run = meter.figures(
        elapsed_s=SPAN_S,
        total_tokens=44_000,
        output_tokens=4_000,
        window_total_tokens_per_s=440.0,
        window_output_tokens_per_s=40.0,
        gpu_power_w=None,
    )
    run_task = stats.tasks.figures(SPAN_S, gpus=gpus, tokens_per_dollar=run.tokens_per_dollar_total).usd_per_task
    cost = CostReading(usd_per_gpu_hour=USD_PER_GPU_HOUR, gpus=gpus, price_source="--gpu-price", mode="rental")
    point_window = PointWindow(index=0, users=1, warmup_s=0.0, start=_tick(0.0, cost), client=window)
    point_window.tick(_tick(SPAN_S, cost))
    point = point_window.figures()
    x = point.e2e_interactivity_p90_tokens_per_s
    assert x is not None
    (tier,) = read_tiers([point], (0,), [x], usd_per_gpu_hour=USD_PER_GPU_HOUR, gpus=gpus, axis=NORTH_STAR)
    return run, run_task, point, (tier.tokens_per_dollar_total, tier.usd_per_million_total_tokens, tier.note)


def test_the_meter_a_point_and_a_tier_read_one_operating_point_the_same() -> None:
    run, run_task, point, (tier_per_dollar, tier_per_million, note) = _three_reads(GPUS)
    # 440 tokens/s × 3600 ÷ (2 USD × 4 GPUs) = 198 000 tokens per dollar; a task's 4400 tokens: 2.2 cents.
    per_dollar = 440 * 3600 / (USD_PER_GPU_HOUR * GPUS)
    assert run.tokens_per_dollar_total == pytest.approx(per_dollar)
    assert point.tokens_per_dollar_total == pytest.approx(per_dollar)
    assert tier_per_dollar == pytest.approx(per_dollar) and note is None
    assert point.usd_per_million_total_tokens == pytest.approx(tier_per_million) == pytest.approx(1e6 / per_dollar)
    assert run_task == pytest.approx(4400 / per_dollar)
    assert point.usd_per_task == pytest.approx(run_task)


def test_without_the_gpu_count_no_reader_prices_anything() -> None:
    """The meter says why (its price's source, on the cost pane and in the report's `price_source`); a point
    has no throughput per GPU then, so the frontier has nothing to read a tier on."""
    run, run_task, point, (tier_per_dollar, tier_per_million, note) = _three_reads(None)
    assert (run.usd_spent, run.tokens_per_dollar_total, run.tokens_per_dollar_total_window, run_task) == (None,) * 4
    assert run.price_source == f"--gpu-price; {NO_GPUS}"
    assert (point.tokens_per_dollar_total, point.usd_per_million_total_tokens, point.usd_per_task) == (None,) * 3
    assert (tier_per_dollar, tier_per_million) == (None, None) and note is not None
