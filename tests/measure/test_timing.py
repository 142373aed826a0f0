"""A finished answer's figures (measure/timing.py): the one rule the load client and the proxy share."""

from __future__ import annotations

import pytest

from agentx_tui.measure import measure_answer


def test_decode_and_request_itl_come_from_the_first_and_last_content() -> None:
    # Sent at 10.0; content in three reads: 1 event, then 2, then 2 (5 events, the server says 10 tokens).
    answer = measure_answer(10.0, [10.5, 10.7, 11.5], [1, 2, 2], reported_output=10, counted_events=5)
    assert answer.output_tokens == 10
    assert answer.ttft_s == pytest.approx(0.5)
    assert answer.decode_tokens_per_s == pytest.approx(10 / 1.0)
    assert answer.request_itl_s == pytest.approx(1.0 / 9)
    # Each event weighs two tokens: the reads after the first carry 4 + 4 tokens.
    assert [g for g, _ in answer.gaps] == pytest.approx([0.2 / 4, 0.8 / 4])
    assert [w for _, w in answer.gaps] == [4.0, 4.0]
    assert answer.itl_mean_s == pytest.approx((0.2 + 0.8) / 8)
    assert sum(answer.itl_buckets().values()) == pytest.approx(8.0)


def test_without_the_servers_count_the_counted_events_are_the_output() -> None:
    answer = measure_answer(0.0, [1.0, 2.0], [1, 3], reported_output=None, counted_events=4)
    assert answer.output_tokens == 4 and answer.request_itl_s == pytest.approx(1.0 / 3)
    untrusted = measure_answer(0.0, [1.0, 2.0], [1, 3], reported_output=None, counted_events=None)
    assert untrusted.output_tokens is None and untrusted.decode_tokens_per_s is None
    assert len(untrusted.gaps) == 1 and untrusted.gaps[0][1] == 3.0  # one token per event


def test_one_token_or_no_streamed_content_has_no_decode_figures() -> None:
    single = measure_answer(0.0, [0.3], [1], reported_output=1, counted_events=1)
    assert single.ttft_s == pytest.approx(0.3) and single.decode_tokens_per_s is None
    assert single.request_itl_s is None and single.gaps == () and single.itl_mean_s is None
    whole = measure_answer(0.0, (), (), reported_output=7, counted_events=None)  # a non-streamed answer
    assert whole.output_tokens == 7 and whole.ttft_s is None and whole.request_itl_s is None
