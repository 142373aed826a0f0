"""The one rule that places a request's tokens in time (docs/metrics.md §4): its output as its content
events arrived, each second's evenly over its part of the decoding (evenly over all of it without
such counts); counted live while it streams, the rest when it completes; and the run's sliding window
and a sweep point's window both following it."""

from __future__ import annotations

import pytest

from agentx_tui.measure import (
    ClientStats,
    Completed,
    LiveCount,
    Streamed,
    TokensPerEvent,
    arrivals_of,
    measure_answer,
    slot_of,
    spread_tokens,
)


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
    answer = measure_answer(first - 0.2, (first, last), (1, out - 1), reported_output=out, counted_events=None)
    return Completed.of_answer(
        answer, sent_at=first - 0.2, ended_at=last, prompt_tokens=0, cached_tokens=None, ceiling_tokens=None,
        tree=1, user=0,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("first", "last", "out", "in_4_5", "in_5_6"),
    [
        (4.2, 4.7, 9, 9.0, 0.0),  # inside one slot
        (4.5, 5.2, 7, 5.0, 2.0),  # across an edge: 5 decoded before it, 2 after
        (4.5, 5.0, 5, 5.0, 0.0),  # ending on an edge: all of it before the edge (it once went after it)
    ],
)
def test_the_sliding_window_follows_the_rule(first: float, last: float, out: int, in_4_5: float, in_5_6: float) -> None:
    """A one-second window read just before 5 s covers slot 4 (and a thousandth of slot 3); just before
    6 s, slot 5 (and a thousandth of slot 4)."""
    stats = ClientStats(window_s=1.0, started_at=0.0)
    stats.add(_done(first, last, out))
    assert stats.figures(4.999).window.output_tokens_per_s == pytest.approx(in_4_5)
    assert stats.figures(5.999).window.output_tokens_per_s == pytest.approx(in_5_6 + in_4_5 / 1000)


def test_the_sliding_windows_oldest_slot_counts_for_its_share_inside() -> None:
    """Read at 5.25 s, a one-second window is [4.25, 5.25]: three quarters of slot 4 and what slot 5 has
    so far; its tokens came evenly over slot 4, as far as the slot knows."""
    stats = ClientStats(window_s=1.0, started_at=0.0)
    stats.add(_done(4.2, 4.7, 9))
    stats.add(_done(5.1, 5.2, 3))
    assert stats.figures(5.25).window.output_tokens_per_s == pytest.approx(9 * 0.75 + 3)


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


def test_arrivals_are_a_streams_content_events_per_second_of_the_clock() -> None:
    times, events = [4.2, 4.9, 5.0, 5.5, 7.1], [1, 2, 1, 3, 1]
    assert arrivals_of(times, events) == ((4.0, 3), (5.0, 4), (7.0, 1))  # 5.0 opens its second
    assert arrivals_of(times, events, 3) == ((5.0, 3), (7.0, 1))  # from the fourth read on
    assert arrivals_of([], []) == ()


def test_with_arrivals_each_event_holds_its_share_of_the_tokens_in_its_second() -> None:
    """12 tokens over 6 events (a server batching two tokens into an event): 2 an event, in its second."""
    arrivals = ((4.0, 2), (5.0, 3), (6.0, 1))
    shares = spread_tokens(4.5, 6.2, 12, arrivals=arrivals)
    assert _by_slot(shares) == pytest.approx({4: 4.0, 5: 6.0, 6: 2.0})
    # A sweep window [5.5, 7) in half-second slots: half of second 5 (its events came evenly over it), all of 6.
    clipped = spread_tokens(4.5, 6.2, 12, arrivals=arrivals, origin=5.5, width=0.5, lo=5.5, hi=7.0)
    assert _by_slot(clipped) == pytest.approx({0: 3.0, 1: 2.0})


def test_what_the_live_window_counted_is_left_out_and_its_error_spread() -> None:
    """The live window counted the first 3 events at 1 token each; the server's count says 2 each: the
    later events get their 2 each in their seconds, the first 3 the 3 tokens they lacked, spread evenly
    over the decoding; all of it adds up to what the window still lacked."""
    arrivals = ((4.0, 2), (5.0, 3), (6.0, 1))
    shares = spread_tokens(4.5, 6.2, 12, arrivals=arrivals, live_events=3, live_tokens=3.0)
    assert sum(share for _, share in shares) == pytest.approx(12 - 3)
    per_s = 3 / 1.7  # the correction's rate over [4.5, 6.2]
    assert _by_slot(shares) == pytest.approx({4: 0.5 * per_s, 5: 2 * 2 + per_s, 6: 2 + 0.2 * per_s})


def test_a_live_count_hands_over_only_what_streamed_since_it_last_did() -> None:
    times: list[float] = []
    events: list[int] = []
    live = LiveCount(prompt_estimate=500)
    live.follow(times, events)
    nothing = Streamed()
    live.take(nothing)
    assert not nothing and live.prompt == 0  # no first token yet: its prompt does not count yet
    times += [10.4, 10.8, 11.2]
    events += [1, 1, 2]
    first = Streamed()
    live.take(first, per_event=1.5)
    assert first.prompts == [(10.4, 500)] and first.output == {10: 3.0, 11: 3.0}
    times.append(11.9)
    events.append(1)
    second = Streamed()
    live.take(second, per_event=2.0)
    assert second.prompts == [] and second.output == {11: 2.0}  # the prompt once, each read once
    assert (live.prompt, live.events, live.output) == (500, 5, 8.0)


def test_tokens_per_event_follows_the_servers_counts() -> None:
    per_event = TokensPerEvent()
    assert per_event.value == 1.0  # until an answer has said
    per_event.observe(300, 100)
    assert per_event.value == 3.0
    per_event.observe(50, 0)  # no content events: says nothing
    assert per_event.value == 3.0
    for _ in range(40):
        per_event.observe(100, 100)
    assert per_event.value == pytest.approx(1.0, abs=0.01)  # a server whose batching changed


def _by_slot(shares: list[tuple[int, float]]) -> dict[int, float]:
    found: dict[int, float] = {}
    for key, share in shares:
        found[key] = found.get(key, 0.0) + share
    return found
