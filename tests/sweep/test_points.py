"""A sweep point's figures (sweep/points.py): the client's figures over the point's own window."""

from __future__ import annotations

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
