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
