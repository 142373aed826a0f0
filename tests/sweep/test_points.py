"""A sweep point's figures (sweep/points.py): the client's figures over the point's own window."""

from __future__ import annotations

import pytest

from agentx_tui.measure import ClientStats, Completed
from agentx_tui.snapshot import EndpointReading, EndpointTotals, PointFigures, RetentionRow, RunInfo, Snapshot
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


def _served(requests: float, drafts: float, at: tuple[float, ...]) -> EndpointTotals:
    """Run totals of a server that finished `requests` (0.1 s queued, 0.3 s prefill, 0.56 s decode each)
    and verified `drafts` drafts of 3 tokens accepting `at` per draft by position."""
    return EndpointTotals(
        request_queue_s_sum=0.1 * requests,
        request_queue_s_count=requests,
        request_prefill_s_sum=0.3 * requests,
        request_prefill_s_count=requests,
        request_decode_s_sum=0.56 * requests,
        request_decode_s_count=requests,
        spec_drafts=drafts,
        spec_draft_tokens=3 * drafts,
        spec_accepted_tokens=drafts * sum(at),
        spec_accepted_tokens_by_position=tuple(drafts * a for a in at),
    )


def test_a_point_carries_the_servers_phases_and_acceptance_over_its_window_only() -> None:
    """Before the window the server accepted little; inside it, at 2.5 tokens a step: the point says 2.5,
    against the golden length the last tick found."""
    stats = ClientStats(window_s=10, started_at=0.0)
    window = stats.open_window(10.0)
    stats.add(_shaped(15.0, 0.45, stall=0.0))  # its TTFT by the client's clock
    stats.end_window(window, 20.0)

    def at(t: float, totals: EndpointTotals) -> Snapshot:
        aggregate = EndpointReading(
            url="aggregate", up=True, totals=totals, spec_golden_acceptance_length=2.49, spec_golden_source="g"
        )
        return Snapshot(seq=1, time=1000.0 + t, elapsed_s=t, run=RunInfo(target="test"), aggregate=aggregate)

    before = _served(50, 500, (0.1, 0.0, 0.0))
    inside = _served(20, 200, (0.8, 0.5, 0.2))
    end = EndpointTotals.model_validate(
        {
            name: (
                tuple(x + y for x, y in zip(value, getattr(inside, name), strict=True))
                if isinstance(value, tuple)
                else value + getattr(inside, name)
            )
            for name, value in before.model_dump().items()
            if value is not None
        }
    )
    point = PointWindow(index=0, users=2, warmup_s=0.0, start=at(10.0, before), client=window)
    point.tick(at(20.0, end))
    figures = point.figures()
    assert (figures.server_queue_s_mean, figures.server_prefill_s_mean) == pytest.approx((0.1, 0.3))
    assert figures.server_decode_s_mean == pytest.approx(0.56)
    assert (figures.spec_acceptance_length, figures.spec_acceptance_rate) == pytest.approx((2.5, 0.5))
    assert figures.spec_acceptance_by_position == pytest.approx([0.8, 0.5, 0.2]) and figures.spec_draft_length == 3
    assert figures.spec_golden_acceptance_length == 2.49 and figures.spec_golden_source == "g"
    assert figures.spec_acceptance_vs_golden == pytest.approx(2.5 / 2.49)
    assert figures.server_step_tokens_mean is None  # not among its counters: unknown, never 0
    assert figures.ttft_outside_server_s_mean == pytest.approx(0.45 - (0.1 + 0.3))


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
