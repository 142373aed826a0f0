"""The North Star's tail as one bar: the client's split, its first-token part divided by the servers'
phases in the proportions of their means (docs/metrics.md, "Where the time went")."""

from __future__ import annotations

import pytest

from agentx_tui.snapshot import SEGMENTS, tail_bar

# The shaped server's request (docs/metrics.md): the first token after 0.4 s, 0.1 s of it queued and 0.3 s
# in prefill; then 19 gaps of 20 ms and one of 0.2 s: r_i = 0.96 s / 20 tokens, 0.4 / 0.96 before the first
# token, 0.18 / 0.96 stalled.
TTFT_SHARE, STALL_SHARE = 0.4 / 0.96, 0.18 / 0.96


def test_the_first_token_part_is_divided_by_the_servers_means_and_the_rest_is_decode() -> None:
    bar = tail_bar(TTFT_SHARE, STALL_SHARE, queue_s=0.1, prefill_s=0.3, outside_s=0.02)
    assert bar is not None and bar.by_server
    shares = dict(bar.segments)
    assert [name for name, _ in bar.segments] == ["outside", "queue", "prefill", "decode", "stalls"]
    assert shares["outside"] + shares["queue"] + shares["prefill"] == pytest.approx(TTFT_SHARE)
    # 0.02 : 0.1 : 0.3 of the first-token part
    assert shares["queue"] == pytest.approx(TTFT_SHARE * 0.1 / 0.42)
    assert shares["prefill"] == pytest.approx(TTFT_SHARE * 0.3 / 0.42)
    assert shares["stalls"] == pytest.approx(STALL_SHARE)
    assert shares["decode"] == pytest.approx(1 - TTFT_SHARE - STALL_SHARE)
    assert sum(shares.values()) == pytest.approx(1.0)
    assert bar.first_token_share == pytest.approx(0.417, abs=5e-4)


def test_outside_time_unknown_or_negative_leaves_queue_and_prefill() -> None:
    unknown = tail_bar(0.5, 0.0, queue_s=0.1, prefill_s=0.3)
    assert unknown is not None and [name for name, _ in unknown.segments] == ["queue", "prefill", "decode", "stalls"]
    assert dict(unknown.segments)["queue"] == pytest.approx(0.125)
    # The servers' means over all their requests can exceed the client's TTFT mean: none outside, not less.
    negative = tail_bar(0.5, 0.0, queue_s=0.1, prefill_s=0.3, outside_s=-0.05)
    assert negative is not None and dict(negative.segments)["outside"] == 0.0
    assert dict(negative.segments)["prefill"] == pytest.approx(0.375)


def test_without_the_servers_phases_the_first_token_part_is_one_segment() -> None:
    for queue, prefill in ((None, None), (0.1, None), (0.0, 0.0)):
        bar = tail_bar(0.3, 0.1, queue_s=queue, prefill_s=prefill)
        assert bar is not None and not bar.by_server
        assert bar.segments == (("first token", 0.3), ("decode", pytest.approx(0.6)), ("stalls", 0.1))


def test_unknown_shares_give_no_bar_or_no_stall_segment() -> None:
    assert tail_bar(None, 0.2) is None
    bar = tail_bar(0.25, None)
    assert bar is not None and bar.stall_share is None and bar.segments == (("first token", 0.25), ("decode", 0.75))


def test_shares_are_held_to_a_whole() -> None:
    bar = tail_bar(0.7, 0.6)  # bucketed sums can overshoot by a hair: never a negative decode
    assert bar is not None and dict(bar.segments) == {"first token": 0.7, "decode": 0.0, "stalls": pytest.approx(0.3)}
    assert [name for name, _ in bar.segments] == [name for name in SEGMENTS if name in dict(bar.segments)]
