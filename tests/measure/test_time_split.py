"""Where the North Star's time went (docs/metrics.md, "Where the time went"): a request's r_i split
into its first-token part and the rest, its decode stalls by the one stall rule (measure/timing.py
`decode_stalls`), and the mergeable sums a set of requests reads them from (measure/time_split.py,
`Tally`, `tally_figures`)."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from itertools import accumulate

import pytest

from agentx_tui.measure import (
    ClientStats,
    Completed,
    IntegerCounts,
    MeasuredAnswer,
    Tally,
    bucket_of,
    decode_stalls,
    measure_answer,
    tally_figures,
)
from agentx_tui.snapshot import Figures

# The shape of the figures' own example: the first token 0.4 s after the request, then 19 gaps of
# 20 ms but one of 0.2 s: 20 tokens, a decode span of 0.56 s, an E2E of 0.96 s.
TTFT, GAP, LONG = 0.4, 0.02, 0.2
SHAPE_GAPS = (GAP,) * 9 + (LONG,) + (GAP,) * 9


def _reads(start: float, ttft: float, gaps: Sequence[float]) -> list[float]:
    """The read times of an answer whose first content came `ttft` after `start`, then one read per gap."""
    return list(accumulate(gaps, initial=start + ttft))


def _answer(
    gaps: Sequence[float] = SHAPE_GAPS,
    *,
    ttft: float = TTFT,
    events: Sequence[int] | None = None,
    start: float = 0.0,
    output: int | None = None,
) -> MeasuredAnswer:
    """The figures of an answer whose reads came `ttft` after `start`, then one per gap: one content
    event each unless `events` says how many each read held; its output tokens the events' sum (one
    token an event) unless the server's count `output` says otherwise (speculation: several an event)."""
    reads = _reads(start, ttft, gaps)
    counts = list(events) if events is not None else [1] * len(reads)
    return measure_answer(start, reads, counts, reported_output=output, counted_events=sum(counts), ended_at=None)


def _done(
    gaps: Sequence[float] = SHAPE_GAPS,
    *,
    ttft: float = TTFT,
    events: Sequence[int] | None = None,
    start: float = 0.0,
    output: int | None = None,
) -> Completed:
    """A request built as the sender builds one, from its answer's figures (`_answer`)."""
    answer = _answer(gaps, ttft=ttft, events=events, start=start, output=output)
    assert answer.last_token_at is not None
    return Completed.of_answer(
        answer, sent_at=start, ended_at=answer.last_token_at + 0.01, prompt_tokens=100, cached_tokens=None,
        ceiling_tokens=None,
    )  # fmt: skip


def _figures(*done: Completed) -> Figures:
    tally = Tally()
    for d in done:
        tally.count(d)
    return tally_figures(tally, span=None, cached_reported=False)


# --- one request: the stall rule -------------------------------------------------------------------


def test_a_gap_over_three_medians_is_a_stall_and_its_excess_is_gap_minus_the_median() -> None:
    stalls, excess = decode_stalls(_reads(0.0, TTFT, SHAPE_GAPS), [1] * 20)
    assert stalls == 1 and excess == pytest.approx(LONG - GAP)
    assert decode_stalls(_reads(0.0, TTFT, (GAP,) * 19), [1] * 20) == (0, pytest.approx(0.0))
    # Exactly three medians is not over them; a hair more is.
    assert decode_stalls(_reads(0.0, TTFT, (GAP,) * 9 + (3 * GAP,) + (GAP,) * 9), [1] * 20)[0] == 0
    assert decode_stalls(_reads(0.0, TTFT, (GAP,) * 9 + (3.01 * GAP,) + (GAP,) * 9), [1] * 20)[0] == 1


def test_the_median_is_the_linear_rules() -> None:
    """An even count's median is the mean of the middle two (percentile.py), not one of them."""
    # Gaps 10, 30, 100 and 130 ms: the median 65 ms, so neither long gap (over 195 ms) is a stall.
    assert decode_stalls(_reads(0.0, 0.1, (0.01, 0.03, 0.1, 0.13)), [1] * 5)[0] == 0
    # Gaps 10, 10, 30, 200 ms: median 20 ms, 200 ms is a stall with 180 ms of excess.
    stalls, excess = decode_stalls(_reads(0.0, 0.1, (0.01, 0.01, 0.03, 0.2)), [1] * 5)
    assert stalls == 1 and excess == pytest.approx(0.18)


def test_no_gap_no_stall() -> None:
    assert decode_stalls([], []) == (0, 0.0)
    assert decode_stalls([1.0], [3]) == (0, 0.0)  # the first read's events came with the first token
    assert decode_stalls([1.0, 1.5], [1, 1]) == (0, 0.0)  # one gap is its own median


def test_a_speculative_event_counts_its_gap_once_whatever_tokens_it_holds() -> None:
    """Steady 20 ms engine steps, one event each, whose events carry 4, 4, 4 and 1 tokens (drafts
    accepted, then one rejected): no stall. Spread over tokens, the steps of 4 would be 5 ms a token,
    and every one-token step (20 ms) a stall: the rule works on events for that reason."""
    tokens = [1] + [4, 4, 4, 1] * 6
    steady = _done((GAP,) * 24, output=sum(tokens))
    assert steady.output_tokens == 79 and (steady.stalls, steady.stall_excess_s) == (0, 0.0)
    # A step that waited 0.2 s among them is one stall, however many tokens it brought.
    stalled = _done((GAP,) * 12 + (LONG,) + (GAP,) * 11, output=sum(tokens))
    assert stalled.stalls == 1 and stalled.stall_excess_s == pytest.approx(LONG - GAP)


def test_a_read_of_several_events_spreads_its_gap_over_them() -> None:
    """Steady 20 ms steps, four of which reached the client in one read 80 ms after the one before:
    four gaps of 20 ms, not a stall (read as one 80 ms gap it would be one) and not three gaps of zero
    (which would make the median small and every 20 ms gap a stall)."""
    gaps = (GAP,) * 10 + (4 * GAP,) + (GAP,) * 10
    events = [1] * 11 + [4] + [1] * 10
    assert decode_stalls(_reads(0.0, TTFT, gaps), events) == (0, pytest.approx(0.0))
    # Four events held back 0.3 s in all: four gaps of 75 ms, four stalls whose excess adds up to the
    # wait less the four steps it would have taken (0.3 − 4 × 20 ms).
    gaps = (GAP,) * 10 + (0.3,) + (GAP,) * 10
    stalls, excess = decode_stalls(_reads(0.0, TTFT, gaps), events)
    assert stalls == 4 and excess == pytest.approx(0.3 - 4 * GAP)


def test_the_rule_as_written_on_random_streams() -> None:
    """Seeded random streams, one event a read and several, against the rule written plainly: every
    event's gap listed (a read's spread over its events), the median of the list, the gaps over three
    medians."""
    rng = random.Random(7)
    for case in range(200):
        reads = rng.randint(2, 60)
        times = list(accumulate((rng.expovariate(50) for _ in range(reads)), initial=rng.random()))[1:]
        events = [1] * reads if case % 2 else [rng.choice((1, 1, 1, 2, 5)) for _ in range(reads)]
        listed = [(b - a) / n for a, b, n in zip(times, times[1:], events[1:], strict=False) for _ in range(n)]
        median = statistics.median(listed)
        stalled = [gap for gap in listed if gap > 3 * median]
        stalls, excess = decode_stalls(times, events)
        assert stalls == len(stalled)
        assert excess == pytest.approx(sum(gap - median for gap in stalled), abs=1e-12)


def test_an_answer_carries_its_first_token_part_and_its_stalls() -> None:
    done = _done()
    assert done.output_tokens == 20
    assert done.e2e_per_token_s == pytest.approx(0.96 / 20)
    assert done.ttft_per_token_s == pytest.approx(0.4 / 20)  # r_i's first-token part; the rest is decode
    assert done.stalls == 1 and done.stall_excess_s == pytest.approx(0.18)
    assert done.decode_span_s == pytest.approx(0.56)
    # Not streamed: r_i from the end of the body, no first-token part, no decode span, no stalls.
    whole = measure_answer(0.0, (), (), reported_output=4, counted_events=None, ended_at=2.0)
    assert whole.e2e_per_token_s == pytest.approx(0.5) and whole.ttft_per_token_s is None
    assert (whole.stalls, whole.stall_excess_s) == (0, 0.0)
    # No output token: no r_i, so no part of it.
    assert measure_answer(0.0, [0.5], [1], reported_output=0, counted_events=1).ttft_per_token_s is None


# --- a set of requests ------------------------------------------------------------------------------


def test_the_shapes_figures() -> None:
    """The example of docs/metrics.md: first-token share 0.4 / 0.96, stall share 0.18 / 0.56."""
    figures = _figures(*(_done(start=10.0 * i) for i in range(10)))
    assert figures.north_star_ttft_share == pytest.approx(0.4 / 0.96)  # 0.417
    assert figures.median_ttft_share == pytest.approx(0.4 / 0.96)
    assert figures.north_star_stall_share == pytest.approx(0.18 / 0.96)
    assert figures.decode_stall_share == pytest.approx(0.18 / 0.56)  # 0.321
    assert figures.decode_stalls_per_request == 1.0
    assert figures.output_tokens_p50 == 20
    assert figures.ttft_s_mean == pytest.approx(0.4)
    steady = _figures(*(_done((GAP,) * 19, start=10.0 * i) for i in range(10)))
    assert steady.decode_stall_share == 0.0 and steady.decode_stalls_per_request == 0.0
    assert steady.north_star_stall_share == 0.0


def test_the_tail_is_the_buckets_at_and_above_the_one_holding_the_percentile() -> None:
    """Eight quick requests (0.1 s to the first token, 100 tokens) and two slow ones whose r_i fall in
    one 2% bucket: the p90 of r_i lies between those two, so an exact "r_i ≥ p90" would hold the slower
    only; the bucket rule holds both, and none of the quick ones."""
    quick = [_done((0.01,) * 99, ttft=0.1, start=10.0 * i) for i in range(8)]  # r = 1.09 / 100
    slow_a = _done((0.01,) * 9, ttft=2.01, start=100.0)  # r = 2.1 / 10
    slow_b = _done((0.01,) * 9, ttft=2.04, start=110.0)  # r = 2.13 / 10: the same 2% bucket
    assert slow_a.e2e_per_token_s is not None and slow_b.e2e_per_token_s is not None
    assert bucket_of(slow_a.e2e_per_token_s) == bucket_of(slow_b.e2e_per_token_s)
    figures = _figures(*quick, slow_a, slow_b)
    assert figures.north_star_ttft_share == pytest.approx((0.201 + 0.204) / (0.21 + 0.213))
    # The median's tail: the p50 is a quick one's, so every request is at or above it.
    assert figures.median_ttft_share == pytest.approx((8 * 0.001 + 0.405) / (8 * 0.0109 + 0.423))
    assert figures.output_tokens_p50 == 100


def test_the_median_tail_holds_the_upper_half() -> None:
    """Four requests of four different r_i: the p50 lies between the second and the third, whose
    buckets are far apart, so the median's tail is the upper two; the North Star's, the slowest alone."""
    done = [_done((GAP,) * 9, ttft=t, start=10.0 * i) for i, t in enumerate((0.1, 0.2, 0.4, 0.8))]
    figures = _figures(*done)
    r = [0.1 + 0.18, 0.2 + 0.18, 0.4 + 0.18, 0.8 + 0.18]  # E2E of 10 tokens; r_i = that / 10
    assert figures.median_ttft_share == pytest.approx((0.4 + 0.8) / (r[2] + r[3]))
    assert figures.north_star_ttft_share == pytest.approx(0.8 / r[3])


def test_merged_tallies_read_as_one_tally_of_all() -> None:
    done = [
        _done(start=0.0),
        _done((GAP,) * 19, ttft=0.1, start=5.0),
        _done((GAP,) * 9, ttft=1.5, start=9.0),
        _done((GAP,) * 5 + (0.5,) + (GAP,) * 5, ttft=0.3, start=12.0),
        _done((GAP,) * 24, output=79, start=20.0),  # speculative: 1 to 4 tokens an event
        _done((GAP,) * 10 + (0.3,) + (GAP,) * 10, events=[1] * 11 + [4] + [1] * 10, start=30.0),
    ]
    left, right = Tally(), Tally()
    for i, d in enumerate(done):
        (left if i % 2 else right).count(d)
    left.merge(right)
    merged = tally_figures(left, span=None, cached_reported=False)
    whole = _figures(*done)
    keys = (
        "north_star_ttft_share",
        "north_star_stall_share",
        "median_ttft_share",
        "output_tokens_p50",
        "decode_stall_share",
        "decode_stalls_per_request",
        "ttft_s_mean",
    )
    assert all(getattr(whole, k) is not None for k in keys)
    assert {k: pytest.approx(getattr(whole, k)) for k in keys} == {k: getattr(merged, k) for k in keys}


def test_unknown_is_none_never_zero() -> None:
    empty = _figures()
    for key in (
        "north_star_ttft_share",
        "north_star_stall_share",
        "median_ttft_share",
        "output_tokens_p50",
        "decode_stall_share",
        "decode_stalls_per_request",
        "ttft_s_mean",
    ):
        assert getattr(empty, key) is None, key
    # One-token answers: no decode span, so no stall share (stalls per request: none, known).
    one = _figures(_done((), start=0.0), _done((), start=1.0))
    assert one.decode_stall_share is None and one.decode_stalls_per_request == 0.0
    assert one.north_star_ttft_share == pytest.approx(1.0)  # all of r_i came before the first token


def test_output_tokens_are_counted_exactly() -> None:
    counts = IntegerCounts()
    for n in (400, 400, 401, 12):
        counts.add(n)
    median = counts.quantile(0.5)
    assert median == 400 and isinstance(median, int)  # not a 2% bucket's middle, nor 400.0
    other = IntegerCounts()
    other.add(10)
    other.add(20)
    assert other.quantile(0.5) == 15.0  # the linear rule: the middle two's mean
    counts.merge(other)
    assert counts.total == 6 and counts.quantile(0.5) == 210.0  # 10 12 (20 400) 400 401
    assert IntegerCounts().quantile(0.5) is None


def test_the_live_window_and_the_run_carry_them() -> None:
    stats = ClientStats(window_s=60, started_at=0.0)
    for i in range(5):
        stats.add(_done(start=2.0 * i))
    figures = stats.figures(12.0)
    for part in (figures.window, figures.run):
        assert part.north_star_ttft_share == pytest.approx(0.4 / 0.96)
        assert part.decode_stall_share == pytest.approx(0.18 / 0.56)
        assert part.output_tokens_p50 == 20 and part.ttft_s_mean == pytest.approx(0.4)
