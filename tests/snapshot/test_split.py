"""Where the North Star's time went, as one bar (snapshot/split.py; docs/metrics.md, "Where the time went")."""

from __future__ import annotations

import pytest

from agentx_tui.snapshot import TailSplit, tail_split


def test_the_docs_example_splits_into_first_token_decode_and_stalls() -> None:
    # docs/metrics.md: first token after 0.4 s, 19 gaps of 20 ms and one of 0.2 s over 20 tokens: r_i = 0.96 s
    # / 20, of which 0.4 / 0.96 came before the first token and 0.18 / 0.96 were stalls.
    split = tail_split(0.4 / 0.96, 0.18 / 0.96)
    assert split is not None
    assert split.first_token == pytest.approx(0.4167, abs=1e-4)
    assert split.stalls == pytest.approx(0.1875)
    assert split.decode == pytest.approx(0.38 / 0.96)
    assert split.first_token + split.decode + split.stalls == pytest.approx(1.0)
    assert not split.phased and split.queue is None


def test_the_servers_phases_cut_the_first_token_in_their_proportions() -> None:
    # The same request on a server that queued it 0.1 s and prefilled it 0.3 s: nothing outside the server.
    split = tail_split(0.4 / 0.96, 0.18 / 0.96, queue_s=0.1, prefill_s=0.3, outside_s=0.0)
    assert split is not None and split.phased
    assert (split.queue, split.prefill, split.outside) == pytest.approx((0.1 / 0.96, 0.3 / 0.96, 0.0))
    # A quarter outside the server: the network, the frontend, the client.
    split = tail_split(0.5, 0.1, queue_s=0.2, prefill_s=0.4, outside_s=0.2)
    assert split is not None
    assert (split.queue, split.prefill, split.outside) == pytest.approx((0.125, 0.25, 0.125))
    assert split.queue + split.prefill + split.outside == pytest.approx(split.first_token)


def test_servers_means_above_the_clients_leave_nothing_outside() -> None:
    # The servers also served requests that were not the client's: their means exceed its TTFT mean.
    split = tail_split(0.6, 0.0, queue_s=0.3, prefill_s=0.3, outside_s=-0.1)
    assert split is not None
    assert (split.queue, split.prefill, split.outside) == pytest.approx((0.3, 0.3, 0.0))


@pytest.mark.parametrize(
    "phases",
    [
        {"queue_s": None, "prefill_s": 0.3, "outside_s": 0.1},  # a server that exports only some phases
        {"queue_s": 0.0, "prefill_s": 0.0, "outside_s": 0.0},  # nothing to cut by
        {},
    ],
)
def test_without_all_three_phases_the_first_token_stays_whole(phases: dict[str, float | None]) -> None:
    split = tail_split(0.3, 0.05, **phases)
    assert split == TailSplit(first_token=0.3, decode=pytest.approx(0.65), stalls=0.05)


def test_an_unknown_split_is_none_and_unknown_stalls_stay_in_decode() -> None:
    assert tail_split(None, None) is None
    assert tail_split(None, 0.1, queue_s=0.1, prefill_s=0.1, outside_s=0.1) is None
    assert tail_split(0.25, None) == TailSplit(first_token=0.25, decode=0.75, stalls=None)


def test_shares_stay_within_0_and_1_whatever_the_rounding() -> None:
    split = tail_split(0.7, 0.3 + 1e-12)
    assert split is not None
    assert split.decode == 0.0 and split.first_token + split.stalls == pytest.approx(1.0)  # type: ignore[operator]
