"""A sweep point's figures (sweep/points.py): the client's figures over the point's own window."""

from __future__ import annotations

import pytest

from agentx_tui.measure import ClientStats, Completed
from agentx_tui.snapshot import EndpointFigures, EndpointTotals, RetentionRow, RunInfo, Snapshot
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
        aggregate = EndpointFigures(
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
