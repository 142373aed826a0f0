"""Honest clocks (docs/metrics.md): where a request's TTFT and E2E start and end, a timed replay's lag,
the rule that says its users fell behind, and how many users would keep its schedule."""

from __future__ import annotations

import pytest

from agentx_tui.measure import ClientStats, Completed, ScheduleBook, Tally, behind_schedule
from agentx_tui.measure.schedule import HEADROOM, MIN_REQUESTS


def _done(
    sent: float, *, due: float | None = None, last: float | None = None, ended: float | None = None, out: int = 10
) -> Completed:
    """A request sent at `sent` (due at `due`), first token 0.1 s later, last at `last`, body over at `ended`."""
    last = sent + 1.0 if last is None and out else last
    ended = (last if last is not None else sent + 1.0) + 0.5 if ended is None else ended
    start = sent if due is None else due
    return Completed(
        sent_at=sent, first_token_at=sent + 0.1 if out else None, last_token_at=last, ended_at=ended,
        prompt_tokens=100, cached_tokens=None, output_tokens=out, ceiling_tokens=None,
        ttft_s=sent + 0.1 - start if out else None, decode_tokens_per_s=None,
        due_at=due, schedule_lag_s=None if due is None else sent - due,
    )  # fmt: skip


def test_e2e_ends_at_the_last_content_token_and_starts_when_due() -> None:
    plain = _done(10.0, last=12.0, ended=15.0)  # the usage chunk and [DONE] came 3 s after the last token
    assert plain.started_at == 10.0 and plain.e2e_s == pytest.approx(2.0)
    late = _done(10.0, due=7.0, last=12.0, ended=15.0)
    assert late.started_at == 7.0 and late.e2e_s == pytest.approx(5.0)
    empty = _done(10.0, out=0, ended=10.4)  # no content: the end of the body
    assert empty.e2e_s == pytest.approx(0.4)


def test_a_tally_counts_the_lag_of_scheduled_requests_only() -> None:
    tally = Tally()
    tally.count(_done(10.0))
    tally.count(_done(10.0, due=8.0, last=11.0))
    assert tally.schedule_lag.total == 1 and tally.schedule_lag.quantile(0.5) == pytest.approx(2.0, rel=0.02)
    assert tally.e2e.quantile(0.99) == pytest.approx(3.0, rel=0.02)  # 8 → 11: due to the last token
    other = Tally()
    other.count(_done(20.0, due=19.0))
    tally.merge(other)
    assert tally.schedule_lag.total == 2


def test_a_burst_needs_as_many_users_as_it_has_requests() -> None:
    book = ScheduleBook()
    for k in range(10):  # ten due at 100 s, one user: each holds it 1 s (sent k s late, ends 1 s later)
        book.count(_done(100.0 + k, due=100.0, ended=101.0 + k))
    assert book.requests == 10
    assert book.users_needed() == round(10 * HEADROOM)


def test_an_even_schedule_needs_its_rate_times_the_hold() -> None:
    book = ScheduleBook()
    for k in range(1000):  # one due every 0.5 s, each holding a user 2 s: 4 busy on average
        book.count(_done(k * 0.5, due=k * 0.5, ended=k * 0.5 + 2.0))
    needed = book.users_needed()
    assert needed is not None and 4 * HEADROOM <= needed <= 4 * HEADROOM + 1


def test_unscheduled_requests_are_not_in_the_book() -> None:
    book = ScheduleBook()
    book.count(_done(1.0))
    assert book.requests == 0 and book.users_needed() is None


@pytest.mark.parametrize(
    ("lag", "e2e", "behind"),
    [
        (1.5, 60.0, True),  # over a second late, whatever the answers' length
        (0.5, 2.0, True),  # a quarter of the E2E
        (0.5, 10.0, False),  # 5% of the E2E
        (0.03, 0.1, False),  # 30% of a tiny E2E, but under the event loop's own jitter
        (0.002, 0.3, False),
    ],
)
def test_the_behind_schedule_rule(lag: float, e2e: float, behind: bool) -> None:
    assert behind_schedule(MIN_REQUESTS, lag, e2e) is behind


def test_too_few_scheduled_requests_get_no_verdict() -> None:
    assert behind_schedule(MIN_REQUESTS - 1, 5.0, 1.0) is None
    assert behind_schedule(100, None, 1.0) is None


def test_client_figures_carry_the_schedule() -> None:
    stats = ClientStats(window_s=10, started_at=0.0)
    stats.add(_done(1.0))
    f = stats.figures(3.0)
    assert f.run.schedule_lag_p50_s is None and f.run.schedule_behind is None and f.run.schedule_users_needed is None
    for k in range(10):
        stats.add(_done(5.0 + k, due=5.0, ended=6.0 + k))
    f = stats.figures(16.0)
    assert f.run.schedule_lag_p90_s == pytest.approx(8.0, rel=0.02)  # lags 0 … 9 s: the 9th of 10
    assert f.run.schedule_lag_p50_s is not None and f.run.schedule_lag_p99_s is not None
    assert f.run.schedule_behind is True and f.run.schedule_users_needed == round(10 * HEADROOM)
    assert f.run.ttft_p90_s is not None and f.run.ttft_p90_s >= 8.0  # TTFT counts from when each was due
