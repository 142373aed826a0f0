"""A sweep point's figures (sweep/points.py): the client's figures over the point's own window."""

from __future__ import annotations

from agentx_tui.measure import ClientStats, Completed
from agentx_tui.snapshot import PointFigures, RetentionRow, RunInfo, Snapshot
from agentx_tui.sweep import measured, point_xy
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


def _request(sent: float, first: float, end: float, *, prompt: int, cached: int, tree: int = 0) -> Completed:
    return Completed(
        sent_at=sent, first_token_at=first, last_token_at=end, ended_at=end, prompt_tokens=prompt,
        cached_tokens=cached, output_tokens=10, ceiling_tokens=None, ttft_s=first - sent,
        decode_tokens_per_s=10.0 / (end - first), request_itl_s=(end - first) / 9, e2e_per_token_s=(end - sent) / 10,
        idle_s=1.0, tree=tree, user=tree,
    )  # fmt: skip


def _point(requests: list[Completed], *, start: float = 10.0, end: float = 20.0) -> PointFigures:
    """The point's figures, its requests handed over as they end (the window ends at `end` meanwhile)."""
    stats = ClientStats(window_s=10, started_at=0.0)
    window = stats.open_window(start)
    for done in sorted(requests, key=lambda done: done.ended_at):
        if window.end is None and done.ended_at > end:
            stats.end_window(window, end)
        stats.add(done)
    if window.end is None:
        stats.end_window(window, end)
    snap = Snapshot(seq=1, time=1000.0 + start, elapsed_s=start, run=RunInfo(target="test"))
    return PointWindow(index=0, users=4, warmup_s=3.0, start=snap, client=window).figures()


def test_a_points_cached_share_and_client_hit_rate_are_one_set_of_prompts() -> None:
    """A cold prompt sent in the warm-up whose first token came inside the window counts in the prompt
    rate, and so its cached tokens (none) count in the cached rate and the hit rate beside it: the three
    agree, as the servers' counters (which count a prompt when its prefill is done) do."""
    point = _point(
        [
            _request(8.0, 11.0, 12.0, prompt=9000, cached=0),  # cold, sent in the warm-up
            _request(12.0, 12.2, 13.0, prompt=1000, cached=900),
            _request(14.0, 14.2, 15.0, prompt=1000, cached=900),
        ]
    )
    assert point.prompt_tokens_per_s == 11000 / 10 and point.cached_prompt_tokens_per_s == 1800 / 10
    assert point.prefix_cache_hit_rate_client == 1800 / 11000
    assert point.cached_prompt_tokens_per_s / point.prompt_tokens_per_s == point.prefix_cache_hit_rate_client
    assert point.mean_prompt_tokens == 11000 / 3
    # Latencies: the requests sent after the warm-up and ended inside, and the point says how many.
    assert point.requests == point.requests_completed == 2


def test_a_point_with_too_few_requests_is_thin_and_says_why_it_has_no_interval() -> None:
    point = _point([_request(11.0 + i, 11.2 + i, 12.0 + i, prompt=100, cached=50, tree=i) for i in range(3)])
    assert point.requests == 3 and point.thin is True
    assert point.intervals == {} and point.ci_method is None
    assert point.ci_note == "3 requests: an interval needs 20"
    assert measured(point)


def test_a_point_that_counted_no_request_is_not_measured() -> None:
    """A window whose requests all ran past its end: tokens, but no request counted; it is placed nowhere."""
    point = _point([_request(12.0, 12.5, 25.0, prompt=5000, cached=0)])
    assert point.requests == 0 and point.thin is True and not measured(point)
    assert point.total_tokens_per_s is not None and point.total_tokens_per_s > 0
    assert point_xy(point) == (None, None)
    assert point.ci_note == "0 requests: an interval needs 20"


def test_enough_requests_on_too_few_user_slots_and_seconds_name_what_each_interval_lacks() -> None:
    """25 requests of one user slot, ending in 4 one-second slots of a 4.4-s window: throughput has no
    clusters and too few sub-windows (a last slot under half a second joins the one before), the p90s too
    few sub-windows with requests. The note names each gap."""
    requests = [_request(10.0 + 0.15 * i, 10.1 + 0.15 * i, 10.15 + 0.15 * i, prompt=100, cached=50) for i in range(25)]
    point = _point(requests, end=14.4)
    assert point.requests == 25 and point.thin is False and point.intervals == {}
    assert point.ci_note == (
        "throughput: 1 user slot (clusters need 8) and 4 sub-windows of 1 s (batch means need 5); "
        "p90 interactivity: the requests ended in 4 sub-windows (it needs 5); "
        "p90 E2E-normalized interactivity: the requests ended in 4 sub-windows (it needs 5)"
    )
