"""A sweep point's figures (sweep/points.py): the client's figures over the point's own window."""

from __future__ import annotations

import pytest

from agentx_tui.measure import ClientStats, Completed
from agentx_tui.snapshot import RetentionRow, RunInfo, Snapshot
from agentx_tui.sweep.points import PointWindow


def _done(t: float, *, cached: int, idle: float) -> Completed:
    return Completed(
        sent_at=t - 1, first_token_at=t - 0.5, last_token_at=t, ended_at=t, prompt_tokens=1000,
        cached_tokens=cached, output_tokens=10, ceiling_tokens=800, ttft_s=0.5, decode_tokens_per_s=20.0,
        idle_s=idle,
    )  # fmt: skip


def test_a_point_carries_the_split_of_the_requests_of_its_window() -> None:
    stats = ClientStats(window_s=10, started_at=0.0)
    stats.add(_done(5.0, cached=0, idle=50.0))  # before the point's window: not its figure
    window = stats.open_window(10.0)
    stats.add(_done(15.0, cached=800, idle=0.5))
    stats.add(_done(18.0, cached=200, idle=3.0))
    stats.end_window(window, 20.0)
    start = Snapshot(seq=1, time=1010.0, elapsed_s=10.0, run=RunInfo(target="test"))
    point = PointWindow(index=0, users=2, warmup_s=0.0, start=start, client=window)
    figures = point.figures()
    assert figures.prefix_evicted_share == 600 / 1600 and figures.prefix_reused_tokens == 1600
    curve = [(row.idle_s_low, row.hit_share) for row in figures.retention_curve or () if isinstance(row, RetentionRow)]
    assert curve == [(0.0, 1.0), (2.0, 0.25)]
    assert figures.think_s_p50 is not None and 0.5 < figures.think_s_p50 < 3.0


def _shaped(t: float, ttft: float, *, stall: float) -> Completed:
    """A 20-token answer ending at `t`: `ttft` to its first token, 0.56 s of decode with `stall` s of
    stall excess in it (as measure/timing.py works them out)."""
    e2e = ttft + 0.56
    return Completed(
        sent_at=t - e2e, first_token_at=t - 0.56, last_token_at=t, ended_at=t, prompt_tokens=100,
        cached_tokens=None, output_tokens=20, ceiling_tokens=None, ttft_s=ttft, decode_tokens_per_s=20 / 0.56,
        e2e_per_token_s=e2e / 20, ttft_per_token_s=ttft / 20, stalls=1 if stall else 0, stall_excess_s=stall,
    )  # fmt: skip


def test_a_point_carries_where_the_time_of_its_own_requests_went() -> None:
    """The North Star's split, the stalls, the output tokens and the mean TTFT of the requests of the
    point's window, not of those before it."""
    stats = ClientStats(window_s=10, started_at=0.0)
    stats.add(_shaped(5.0, 3.0, stall=0.0))  # before the point's window
    window = stats.open_window(10.0)
    for t in (13.0, 15.0, 17.0):
        stats.add(_shaped(t, 0.4, stall=0.18))
    stats.end_window(window, 20.0)
    start = Snapshot(seq=1, time=1010.0, elapsed_s=10.0, run=RunInfo(target="test"))
    figures = PointWindow(index=0, users=2, warmup_s=0.0, start=start, client=window).figures()
    assert figures.north_star_ttft_share == pytest.approx(0.4 / 0.96)
    assert figures.median_ttft_share == pytest.approx(0.4 / 0.96)
    assert figures.north_star_stall_share == pytest.approx(0.18 / 0.96)
    assert figures.decode_stall_share == pytest.approx(0.18 / 0.56)
    assert figures.decode_stalls_per_request == 1.0
    assert figures.output_tokens_p50 == 20 and figures.ttft_s_mean == pytest.approx(0.4)
