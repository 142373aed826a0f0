"""Where each prompt went (measure/reuse.py; docs/metrics.md §4, "Where the prefix went"): the split of
one request, the idle-time buckets, and the sums over the window, the run, a sweep window, a users-table
row and a task."""

from __future__ import annotations

import pytest

from agentx_tui.measure import CallTally, ClientStats, Completed, ReuseTally, split_prompt
from agentx_tui.snapshot import IDLE_BUCKETS_S, RetentionRow, idle_bucket


def _done(
    t: float,
    *,
    prompt: int = 1000,
    reused: int | None = 800,
    cached: int | None = 800,
    idle: float | None = 0.5,
    tree: int = -1,
) -> Completed:
    return Completed(
        sent_at=t - 1, first_token_at=t - 0.5, last_token_at=t, ended_at=t, prompt_tokens=prompt,
        cached_tokens=cached, output_tokens=10, ceiling_tokens=reused, ttft_s=0.5, decode_tokens_per_s=20.0,
        idle_s=idle, tree=tree,
    )  # fmt: skip


def test_a_prompt_splits_into_cold_hit_and_evicted_that_add_up() -> None:
    split = split_prompt(1000, 800, 600)
    assert split is not None and (split.cold, split.reused, split.hit, split.evicted) == (200, 800, 600, 200)
    # A server may count more than the client saw sent (a block matching by chance): capped at reused.
    over = split_prompt(1000, 800, 960)
    assert over is not None and (over.hit, over.evicted) == (800, 0)
    # No cached tokens from the server: hit and evicted are unknown, never 0.
    unknown = split_prompt(1000, 800, None)
    assert unknown is not None and unknown.hit is None and unknown.evicted is None and unknown.cold == 200
    assert split_prompt(1000, None, 600) is None  # the client does not know what it sent (not tokenized)
    clipped = split_prompt(100, 160, 0)  # the server counted a shorter prompt than the client built
    assert clipped is not None and (clipped.cold, clipped.reused) == (0, 100)


@pytest.mark.parametrize(
    ("idle", "bucket"),
    [
        (0.0, 0),
        (0.999, 0),
        (1.0, 1),
        (4.9, 2),
        (5.0, 3),
        (29.0, 4),
        (59.0, 5),
        (119.9, 6),
        (120.0, 7),
        (1e6, 7),
        (-0.01, 0),
    ],
)
def test_idle_times_fall_in_buckets_low_inclusive(idle: float, bucket: int) -> None:
    assert idle_bucket(idle) == bucket
    assert IDLE_BUCKETS_S == (0.0, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0)


def test_the_tally_gives_the_evicted_share_the_curve_and_the_idle_percentiles() -> None:
    tally = ReuseTally()
    for idle, cached in ((0.2, 800), (0.4, 800), (3.0, 400), (45.0, 0), (200.0, 0)):
        tally.count(_done(10.0, idle=idle, cached=cached))
    tally.count(_done(10.0, idle=None, reused=0, cached=0))  # a session's first call: in no bucket
    figures = tally.figures()
    assert figures["prefix_evicted_share"] == pytest.approx((0 + 0 + 400 + 800 + 800) / (5 * 800))
    rows: list[RetentionRow] = figures["retention_curve"]
    assert [(r.idle_s_low, r.idle_s_high, r.requests, r.reused_tokens, r.hit_share) for r in rows] == [
        (0.0, 1.0, 2, 1600, 1.0),
        (2.0, 5.0, 1, 800, 0.5),
        (30.0, 60.0, 1, 800, 0.0),
        (120.0, None, 1, 800, 0.0),
    ]
    assert figures["think_s_p50"] == pytest.approx(3.0, rel=0.01)  # of 0.2, 0.4, 3, 45, 200
    assert figures["think_s_p90"] == pytest.approx(45.0 + 0.6 * 155.0, rel=0.01)


def test_without_cached_tokens_the_shares_are_unknown_but_the_calls_are_counted() -> None:
    tally = ReuseTally()
    tally.count(_done(10.0, cached=None, idle=0.3))
    figures = tally.figures()
    assert figures["prefix_evicted_share"] is None
    (row,) = figures["retention_curve"]
    assert row.requests == 1 and row.reused_tokens == 800 and row.hit_share is None
    assert ReuseTally().figures() == {
        "prefix_evicted_share": None,
        "retention_curve": None,
        "think_s_p50": None,
        "think_s_p90": None,
    }


def test_tallies_merge_exactly() -> None:
    whole, halves = ReuseTally(), (ReuseTally(), ReuseTally())
    for i, (idle, cached) in enumerate(((0.2, 800), (7.0, 300), (70.0, 0), (1.5, 800))):
        whole.count(_done(10.0, idle=idle, cached=cached))
        halves[i % 2].count(_done(10.0, idle=idle, cached=cached))
    halves[0].merge(halves[1])
    assert halves[0].figures() == whole.figures()


def test_client_stats_window_and_run_and_the_ceiling_is_the_reused_count() -> None:
    stats = ClientStats(window_s=10, started_at=0.0)
    stats.add(_done(5.0, idle=0.5, cached=800))
    stats.add(_done(25.0, idle=40.0, cached=0))
    figures = stats.figures(25.5)
    assert figures.window.prefix_evicted_share == 1.0 and figures.window.prefix_reused_tokens == 800
    assert figures.run.prefix_evicted_share == 0.5 and figures.run.prefix_reused_tokens == 1600
    assert figures.run.prefix_cache_hit_rate_ceiling == pytest.approx(0.8)  # the same 800 of 1000
    (window_row,) = figures.window.retention_curve or ()
    assert isinstance(window_row, RetentionRow) and window_row.idle_s_low == 30.0


def test_a_sweep_window_counts_the_split_of_its_own_requests() -> None:
    stats = ClientStats(window_s=10, started_at=0.0)
    stats.add(_done(5.0, cached=800))
    window = stats.open_window(10.0)
    stats.add(_done(15.0, idle=40.0, cached=0))
    stats.end_window(window, 20.0)
    assert window.latency.reuse.figures()["prefix_evicted_share"] == 1.0


def test_a_users_row_and_a_task_keep_their_own_hit_share() -> None:
    row = CallTally()
    row.count_reuse(split_prompt(1000, 800, 800))
    row.count_reuse(split_prompt(1000, 800, 200))
    row.count_reuse(split_prompt(1000, 800, None))  # not known: left out
    assert row.prefix_hit_share == pytest.approx(1000 / 1600)
    assert CallTally().prefix_hit_share is None
    stats = ClientStats(window_s=10, started_at=0.0)
    for tree, cached in ((1, 800), (1, 800), (2, 800), (2, 0), (3, 0)):
        stats.add(_done(5.0, cached=cached, tree=tree))
    for tree in (1, 2, 3):
        stats.session_ended("done", tree)
    tasks = stats.tasks.figures(6.0)
    assert tasks.task_prefix_hit_share_mean == pytest.approx((1.0 + 0.5 + 0.0) / 3)
    assert tasks.task_prefix_hit_share_p10 == pytest.approx(0.1)  # linear between 0 and 0.5
    assert tasks.task_prefix_hit_share_p90 == pytest.approx(0.9)
