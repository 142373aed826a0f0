"""The one rule that places a request's output tokens in time (docs/metrics.md §4): evenly from its
first content token to its last, each slot taking its share of that span; and the run's sliding
window and a sweep point's window both following it."""

from __future__ import annotations

import pytest

from agentx_tui.measure import ClientStats, Completed, answer_figures, slot_of, spread_tokens


def test_a_moment_on_an_edge_is_in_the_slot_that_edge_opens() -> None:
    assert slot_of(4.0) == 4 and slot_of(4.999) == 4
    assert slot_of(12.5, origin=10.0) == 2 and slot_of(12.0, origin=10.0) == 2
    assert slot_of(10.0, origin=10.0, width=0.5) == 0 and slot_of(11.25, origin=10.0, width=0.5) == 2


def test_a_request_inside_one_slot_puts_all_its_tokens_there() -> None:
    assert spread_tokens(4.2, 4.7, 9) == [(4, 9)]


def test_a_request_across_an_edge_splits_its_tokens_by_time() -> None:
    shares = spread_tokens(4.5, 5.2, 7)
    assert [key for key, _ in shares] == [4, 5]
    assert [share for _, share in shares] == pytest.approx([5.0, 2.0])
    long = spread_tokens(3.5, 6.5, 30)  # half a second, two whole seconds, half a second
    assert long == pytest.approx([(3, 5.0), (4, 10.0), (5, 10.0), (6, 5.0)])
    assert sum(share for _, share in long) == pytest.approx(30)


def test_a_request_ending_exactly_on_an_edge_puts_nothing_in_the_slot_it_opens() -> None:
    assert spread_tokens(4.5, 5.0, 5) == [(4, 5)]
    assert spread_tokens(4.0, 6.0, 8) == pytest.approx([(4, 4.0), (5, 4.0)])


def test_a_request_with_no_decoding_time_puts_its_tokens_at_its_end() -> None:
    assert spread_tokens(4.5, 4.5, 3) == [(4, 3)]  # one token, or not streamed
    assert spread_tokens(5.0, 5.0, 3) == [(5, 3)]  # on an edge: the slot holding that moment
    assert spread_tokens(4.5, 4.5, 0) == [] and spread_tokens(4.0, 5.0, 0) == []


def test_only_the_part_inside_the_bounds_is_given() -> None:
    # A sweep window [10, 12) in half-second slots from its start; the request decoded 9 → 11, 20 tokens.
    assert spread_tokens(9.0, 11.0, 20, origin=10.0, width=0.5, lo=10.0, hi=12.0) == pytest.approx([(0, 5.0), (1, 5.0)])
    assert spread_tokens(9.0, 9.5, 20, lo=10.0, hi=12.0) == []  # all before the window
    assert spread_tokens(11.0, 11.0, 4, origin=10.0, lo=10.0, hi=11.0) == [(1, 4)]  # at its end, inside
    assert spread_tokens(12.5, 12.5, 4, lo=10.0, hi=12.0) == []


def _done(first: float, last: float, out: int) -> Completed:
    answer = answer_figures(first - 0.2, (first, last), (1, out - 1), reported_output=out, counted_events=None)
    return Completed.of_answer(
        answer, sent_at=first - 0.2, ended_at=last, prompt_tokens=0, cached_tokens=None, ceiling_tokens=None,
        tree=1, user=0,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("first", "last", "out", "by_4_999", "by_5_999"),
    [
        (4.2, 4.7, 9, 9.0, 9.0),  # inside one slot
        (4.5, 5.2, 7, 5.0, 7.0),  # across an edge: 5 decoded before it, the 2 after count only later
        (4.5, 5.0, 5, 5.0, 5.0),  # ending on an edge: all of it before the edge (it once went after it)
    ],
)
def test_the_sliding_window_follows_the_rule(
    first: float, last: float, out: int, by_4_999: float, by_5_999: float
) -> None:
    """A one-second window read just before 5 s covers slots 3 and 4; just before 6 s, slots 4 and 5."""
    stats = ClientStats(window_s=1.0, started_at=0.0)
    stats.add(_done(first, last, out))
    assert stats.figures(4.999).window.output_tokens_per_s == pytest.approx(by_4_999)
    assert stats.figures(5.999).window.output_tokens_per_s == pytest.approx(by_5_999)


def test_a_sweep_window_follows_the_same_rule_clipped_to_itself() -> None:
    stats = ClientStats(window_s=10.0, started_at=0.0)
    window = stats.open_window(4.0)  # its slots: 0 is [4, 5), 1 is [5, 6)
    stats.add(_done(3.5, 5.5, 20))  # half a second before the window: those 5 tokens are not its
    stats.add(_done(4.5, 5.2, 7))
    stats.add(_done(5.0, 5.0, 3))  # no decoding time, on an edge
    stats.end_window(window, 5.25)
    stats.add(_done(5.0, 5.5, 10))  # in flight at the window's end: what came before it counts
    slots = {key: slot.tokens for key, slot in window.sample.slots.items()}
    assert slots == pytest.approx({0: 10.0 + 5.0, 1: 5.0 + 2.0 + 3.0 + 5.0})
    assert window.output_in_window == pytest.approx(30.0)
