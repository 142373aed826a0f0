from __future__ import annotations

import pytest

from agentx_tui.measure import ClientStats, Completed, Failed, LiveCount, Streamed, Tally, arrivals_of, bucketed


def _done(t: float, prompt: int = 100, cached: int | None = 50, out: int = 10) -> Completed:
    return Completed(
        sent_at=t - 1, first_token_at=t - 0.5, last_token_at=t, ended_at=t, prompt_tokens=prompt,
        cached_tokens=cached, output_tokens=out, ceiling_tokens=80, ttft_s=0.5, decode_tokens_per_s=20.0,
        request_itl_s=0.05, itl=bucketed(((0.05, 9.0),)),
    )  # fmt: skip


def test_window_rates_and_run_totals() -> None:
    stats = ClientStats(window_s=10, started_at=1000.0)
    for i in range(10):
        stats.add(_done(1001.0 + i))
    f = stats.figures(1010.0)  # the window [1000, 1010]: every request whole
    assert f.window.output_tokens_per_s == pytest.approx(100 / 10)
    assert f.window.prompt_tokens_per_s == pytest.approx(1000 / 10)
    assert f.window.prefix_cache_hit_rate_client == pytest.approx(0.5)
    assert f.window.prefix_cache_hit_rate_ceiling == pytest.approx(0.8)
    assert f.window.ttft_p50_s == pytest.approx(0.5, rel=0.02)
    assert f.window.itl_p50_s == pytest.approx(0.05, rel=0.02)
    assert f.window.per_user_output_tokens_per_s_p50 == pytest.approx(20, rel=0.02)
    assert f.totals.requests_completed == 10 and f.totals.cached_tokens_reported
    later = stats.figures(1030.0)
    assert later.window.output_tokens_per_s == 0 and later.window.ttft_p50_s is None
    assert later.run.ttft_p50_s == pytest.approx(0.5, rel=0.02)


def test_hit_rate_is_unknown_when_the_server_omits_cached_tokens() -> None:
    stats = ClientStats(window_s=10, started_at=0.0)
    stats.add(_done(5.0, cached=None))
    f = stats.figures(6.0)
    assert f.window.prefix_cache_hit_rate_client is None and f.window.cached_prompt_tokens_per_s is None
    assert not f.totals.cached_tokens_reported


def test_reset_window_forgets_window_but_not_run_figures() -> None:
    stats = ClientStats(window_s=10, started_at=0.0)
    stats.add(_done(5.0))
    stats.reset_window(6.0)
    f = stats.figures(6.5)
    assert f.window.output_tokens_per_s == 0 and f.run.ttft_p50_s is not None


def test_a_slot_counts_a_prompt_when_its_first_token_came_and_the_request_when_it_ended() -> None:
    """The sliding window's two halves of one request add up to the run's whole of it."""
    stats = ClientStats(window_s=1.0, started_at=0.0)
    done = Completed(
        sent_at=4.2, first_token_at=4.5, last_token_at=6.4, ended_at=6.5, prompt_tokens=100, cached_tokens=40,
        output_tokens=20, ceiling_tokens=60, ttft_s=0.3, decode_tokens_per_s=10.0, request_itl_s=0.1,
    )  # fmt: skip
    stats.add(done)
    at_first = stats.figures(4.99)  # slots 3 and 4: the first token's
    first = at_first.window
    assert first.prompt_tokens_per_s == 100 and first.prefix_cache_hit_rate_client == pytest.approx(0.4)
    assert first.prefix_cache_hit_rate_ceiling == pytest.approx(0.6)
    assert at_first.requests_per_s == 0 and first.ttft_p50_s is None
    at_end = stats.figures(6.99)  # slots 5 and 6: the end's
    end = at_end.window
    assert end.prompt_tokens_per_s == 0 and end.prefix_cache_hit_rate_client is None
    assert at_end.requests_per_s == 1 and end.ttft_p50_s == pytest.approx(0.3, rel=0.02)
    whole = Tally()
    whole.count(done)
    assert (whole.prompt, whole.cached, whole.ceiling, whole.output, whole.requests) == (100, 40, 60, 20, 1)
    run = stats.run
    assert (run.prompt, run.cached, run.ceiling, run.output, run.requests) == (100, 40, 60, 20, 1)


def test_a_window_counts_its_requests_failures_and_mean_prompt_once() -> None:
    stats = ClientStats(window_s=10, started_at=0.0)
    window = stats.open_window(10.0)
    stats.add(_done(10.5, prompt=300))  # sent at 9.5, in the warm-up: its tokens count, not the request
    stats.add(_done(12.0, prompt=100))
    stats.add(_done(13.0, prompt=200))
    stats.error(Failed("timeout", True, 11.0, 12.0))
    stats.error(Failed("timeout", False, 11.0, 12.0))  # retried: not a failure of the window
    stats.error(Failed("timeout", True, 9.0, 12.0))  # sent in the warm-up
    assert window.latency.requests == 2 and window.latency.prompt == 300 and window.failed == 1
    # The prompt side counts every prompt whose first token came inside: the warm-up's one too.
    assert window.prompt_in_window == window.prompts.prompt == 600 and window.first_tokens == 3


def _request(sent: float, first: float, last: float, *, prompt: int, output: int, tree: int, user: int) -> Completed:
    return Completed(
        sent_at=sent, first_token_at=first, last_token_at=last, ended_at=last, prompt_tokens=prompt,
        cached_tokens=None, output_tokens=output, ceiling_tokens=0, ttft_s=first - sent,
        decode_tokens_per_s=None, request_itl_s=(last - first) / max(output - 1, 1), tree=tree, user=user,
    )  # fmt: skip


def test_a_windows_sample_splits_its_tokens_by_tree_user_and_second() -> None:
    """The raw sample behind a point's intervals adds up to the window's own figures, whichever way it
    is cut: per session tree, per user slot (a sub-agent in its parent's), per one-second slot."""
    stats = ClientStats(window_s=10, started_at=0.0)
    window = stats.open_window(10.0)
    stats.add(_request(8.0, 9.0, 11.0, prompt=100, output=21, tree=1, user=0))  # started in the warm-up
    stats.add(_request(11.0, 11.5, 13.5, prompt=200, output=41, tree=1, user=0))
    stats.add(_request(11.2, 11.4, 12.4, prompt=300, output=11, tree=2, user=1))  # a sub-agent of user 1
    stats.add(_request(12.0, 12.5, 14.5, prompt=50, output=5, tree=2, user=1))
    stats.add(_request(13.0, 13.2, 13.3, prompt=10, output=2, tree=-1, user=-1))  # unknown tree and user
    stats.end_window(window, 14.0)
    sample = window.sample
    inside = window.prompt_in_window + window.output_in_window
    assert sum(t.tokens for t in sample.trees.values()) == pytest.approx(inside)
    assert sum(sample.users.values()) == pytest.approx(inside)
    assert sum(s.tokens for s in sample.slots.values()) == pytest.approx(inside)
    assert len(sample.trees) == 3 and len(sample.users) == 3
    # Output tokens are spread over the seconds they were decoded in: half of the first request's 21.
    assert sample.slots[0].tokens == pytest.approx(10.5)
    # Only requests that started after the warm-up and ended inside count for latencies (their ITL).
    assert [t.requests for t in sample.trees.values()] == [1, 2, 1]
    assert sum(s.requests for s in sample.slots.values()) == window.latency.requests == 4


def test_a_request_in_flight_counts_what_it_streamed_and_its_completion_only_the_rest() -> None:
    """A long answer still streaming: the window holds its prompt (the client's estimate) from its first
    token and its output as it came, before it completes; its completion adds the difference from the
    server's counts (a longer prompt; 2 tokens an event, counted 1 while it streamed), so the window
    then holds exactly what the server counted."""
    stats = ClientStats(window_s=10.0, started_at=0.0)
    times: list[float] = []
    events: list[int] = []
    live = LiveCount(prompt_estimate=990)
    live.follow(times, events)
    times += [2.5, 2.9, 3.4]
    events += [1, 2, 2]
    streamed = Streamed()
    live.take(streamed, per_event=1.0)
    stats.count_streamed(streamed)
    now = stats.figures(4.0)
    assert now.totals.requests_completed == 0 and now.window.requests_completed == 0
    assert now.window.prompt_tokens_per_s == pytest.approx(990 / 4)  # the window since 0, still filling
    assert now.window.output_tokens_per_s == pytest.approx(5 / 4)
    times += [4.5, 5.2]
    events += [3, 2]
    stats.add(
        Completed(
            sent_at=2.0, first_token_at=2.5, last_token_at=5.2, ended_at=5.3, prompt_tokens=1000, cached_tokens=None,
            output_tokens=20, ceiling_tokens=None, ttft_s=0.5, decode_tokens_per_s=None,
            arrivals=arrivals_of(times, events), live_prompt=live.prompt, live_output=live.output,
            live_events=live.events,
        )
    )  # fmt: skip
    end = stats.figures(10.0).window  # [0, 10]
    assert end.prompt_tokens_per_s == pytest.approx(1000 / 10) and end.output_tokens_per_s == pytest.approx(20 / 10)
    assert stats.totals().prompt_tokens == 1000 and stats.totals().output_tokens == 20


def test_the_windows_cached_tokens_are_its_prompt_tokens_at_its_hit_rate() -> None:
    """A prompt's cached tokens are known when its request completes: while another's prompt streams,
    the window's cached share is the hit rate of those it knows."""
    stats = ClientStats(window_s=10.0, started_at=0.0)
    stats.add(_done(2.0, prompt=100, cached=50))  # first token at 1.5
    stats.count_streamed(Streamed(prompts=[(2.5, 300)]))
    window = stats.figures(4.0).window
    assert window.prompt_tokens_per_s == pytest.approx(400 / 4)
    assert window.prefix_cache_hit_rate_client == pytest.approx(0.5)
    assert window.cached_prompt_tokens_per_s == pytest.approx(0.5 * 400 / 4)
