"""The driver against the fake streaming server: exactness, errors and retries, live controls."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from agentx_tui.engine import ServerInfo
from agentx_tui.load import Driver, LoadSettings, Workload, load_workload
from agentx_tui.load.sending.sender import _BACKOFF_S
from agentx_tui.load.workload.spec import parse_workload
from tests.helpers.traces import write_mooncake_trace
from tests.helpers.waiting import until
from tests.load.fake_openai import FakeServer


def _agent(**fields: object) -> Workload:
    base: dict[str, object] = {
        "shared_prefix_tokens": 200,
        "unique_prefix_tokens": {"dist": "uniform", "min": 10, "max": 40},
        "first_message_tokens": 30,
        "steps": 4,
        "output_tokens": {"dist": "uniform", "min": 5, "max": 15},
        "tool_result_tokens": {"dist": "uniform", "min": 20, "max": 60},
        "tool_latency_s": 0.01,
    }
    base.update(fields)
    return parse_workload(base, source="test", default_name="test")


def _driver(fake: FakeServer, w: Workload, users: int = 4, **kw: object) -> Driver:
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len)  # as the probe reads it
    return Driver(w, [info], LoadSettings(users=users, block_size=4, **kw))  # type: ignore[arg-type]


async def test_prompts_are_token_exact_and_totals_match_the_server(fake: FakeServer) -> None:
    d = _driver(fake, _agent(), api_key="sekret")
    await d.start()
    await until(lambda: d.figures(time.monotonic()).totals.sessions_completed >= 6)
    await d.drain()
    await d.stop()
    records = d.records()
    assert records and all(r.error is None for r in records)
    assert all(r.prompt_tokens == r.expected_prompt_tokens for r in records)
    assert all(r.output_tokens == r.expected_output_tokens for r in records)
    totals = d.figures(time.monotonic()).totals
    assert totals.prompt_tokens == fake.prompt_tokens_total
    assert totals.output_tokens == fake.generation_tokens_total
    assert 0 < totals.cached_prompt_tokens <= totals.ceiling_cacheable_tokens
    assert set(fake.auth) == {"Bearer sekret"}
    body = fake.requests[0]
    assert body["stream"] and body["stream_options"] == {"include_usage": True} and body["ignore_eos"]
    assert body["max_tokens"] == body["min_tokens"]


async def test_same_seed_sends_the_same_text(fake: FakeServer) -> None:
    async def first_prompts(seed: int) -> list[str]:
        fake.requests.clear()
        d = _driver(fake, _agent(steps=1), users=1, seed=seed)
        await d.start()
        await until(lambda: len(fake.requests) >= 2)
        await d.stop()
        return [str(r["messages"]) for r in fake.requests[:2]]

    a, b, c = await first_prompts(1), await first_prompts(1), await first_prompts(2)
    assert a == b and a != c
    assert a[0] != a[1]  # sessions differ after the shared prefix


async def test_retries_rate_limits_and_unavailable_then_succeeds(fake: FakeServer) -> None:
    fake.plan = [429, 503, 429]
    d = _driver(fake, _agent(steps=1), users=1)
    await d.start()
    await until(lambda: d.figures(time.monotonic()).totals.requests_completed >= 1, timeout=10)
    await d.stop()
    totals = d.figures(time.monotonic()).totals
    assert totals.errors_by_kind["rate_limited"] == 2 and totals.errors_by_kind["unavailable"] == 1
    assert totals.requests_failed == 0
    assert d.records()[0].attempts == 4


async def test_dropped_connection_is_counted_and_retried(fake: FakeServer) -> None:
    fake.drop_after = 2
    d = _driver(fake, _agent(steps=1), users=1)
    await d.start()
    await until(lambda: d.figures(time.monotonic()).totals.requests_completed >= 1)
    await d.stop()
    assert d.figures(time.monotonic()).totals.errors_by_kind["connection"] == 1


async def test_context_overflow_ends_the_session_cleanly(fake: FakeServer) -> None:
    events: list[str] = []
    fake.max_model_len = 700  # the driver is told a larger context, so the server must refuse
    d = Driver(
        _agent(steps=50), [ServerInfo(fake.url, "fake", max_model_len=100_000)], LoadSettings(users=2, block_size=4)
    )
    d.on_event = events.append
    await d.start()
    await until(lambda: d.figures(time.monotonic()).totals.sessions_ended_by_context >= 2)
    await d.stop()
    totals = d.figures(time.monotonic()).totals
    assert totals.requests_completed > 0
    assert any("context" in e for e in events)


@pytest.mark.parametrize("join", ["start", "midway"])
async def test_sessions_end_before_the_next_step_would_not_fit(fake: FakeServer, join: str) -> None:
    fake.max_model_len = 700  # the probe would have read it from /v1/models
    settings = LoadSettings(users=4, block_size=4, join=join)  # type: ignore[arg-type]
    d = Driver(_agent(steps=50), [ServerInfo(fake.url, "fake", max_model_len=700)], settings)
    await d.start()
    await until(lambda: d.figures(time.monotonic()).totals.sessions_ended_by_context >= 4)
    await d.stop()
    assert not any(r.error for r in d.records())
    # Joined midway too: a first session joins at a stage a session reaches, its first request fits.
    assert all((r.prompt_tokens or 0) + r.expected_output_tokens <= 700 for r in d.records())
    opened = sorted(min(r.step for r in d.records() if r.user == u and r.session == 1) for u in range(4))
    # … drawn over the stages it could reach (a handful here), not piled up at the limit.
    assert opened == [1, 1, 1, 1] if join == "start" else len(set(opened)) >= 2 and max(opened) > 1


async def test_users_joining_midway_send_their_first_session_from_a_drawn_step(fake: FakeServer) -> None:
    d = _driver(fake, _agent(steps=12), users=8, join="midway", seed=3)
    await d.start()
    await until(
        lambda: (
            {r.user for r in d.records() if r.session == 2} == set(range(8))
            and d.figures(time.monotonic()).totals.sessions_completed >= 2
        ),
        timeout=30,
    )
    await d.stop()
    records = sorted(d.records(), key=lambda r: r.sent_at)
    assert all(r.error is None and r.prompt_tokens == r.expected_prompt_tokens for r in records)
    opened = {(u, s): next(r for r in records if r.user == u and r.session == s) for u in range(8) for s in (1, 2)}
    joined = [opened[u, 1] for u in range(8)]
    # The first sessions join at stages drawn over 1 … 12, their skipped steps built into the prompt:
    # each first request is as long as a session's history at that step, and longer the later it is.
    assert len({r.step for r in joined}) >= 4 and max(r.step for r in joined) > 4
    fresh = [opened[u, 2] for u in range(8)]  # every later session starts at its first step
    assert {r.step for r in fresh} == {1}
    longest_opening = max(r.prompt_tokens or 0 for r in fresh)
    assert all((r.prompt_tokens or 0) > longest_opening for r in joined if r.step >= 4)
    # A session joined midway is not a whole task: only sessions sent from their first step count.
    assert d.stats is not None
    tasks = d.stats.tasks.figures(time.monotonic())
    totals = d.figures(time.monotonic()).totals
    assert tasks.tasks_completed == totals.sessions_completed
    # Those that ended: every session from its first step, the first sessions that joined there too.
    began = {(r.user, r.session): r.step for r in reversed(records)}  # each session's first step
    ended = {(r.user, r.session) for r in records if r.step == 12 and began[r.user, r.session] == 1}
    assert totals.sessions_completed == len(ended) >= 1


async def test_users_follow_set_users_and_pause_stops_sending(fake: FakeServer) -> None:
    fake.token_delay_s = 0.002
    d = _driver(fake, _agent(steps=100, tool_latency_s=0.05), users=4)
    await d.start()
    await until(lambda: len(d.rows()) == 4)
    d.set_users(8)
    await until(lambda: len(d.rows()) == 8 and all(s.requests > 0 for s in d.rows()))
    d.set_users(2)
    assert d.users == 2
    await until(lambda: len({r.user for r in d.records()[-20:]}) <= 2, timeout=10)
    assert {s.user for s in d.rows()} == {0, 1}
    d.pause()
    assert d.paused
    await d.drain()
    n = len(fake.requests)
    await asyncio.sleep(0.3)
    assert len(fake.requests) == n
    d.resume()
    await until(lambda: len(fake.requests) > n)
    await d.stop()
    await d.stop()


async def test_drain_waits_for_requests_of_removed_users(fake: FakeServer) -> None:
    fake.token_delay_s = 0.01
    d = _driver(fake, _agent(steps=100, output_tokens=30, tool_latency_s=0.0), users=4)
    await d.start()
    await until(lambda: len(d.rows()) == 4 and all(s.state in ("prefill", "decoding") for s in d.rows()))
    d.set_users(0)  # every user leaves, each finishing the request it has on the wire
    assert await d.drain(timeout_s=10)
    totals = d.figures(time.monotonic()).totals
    assert totals.prompt_tokens == fake.prompt_tokens_total
    assert totals.output_tokens == fake.generation_tokens_total
    await d.stop()


async def test_a_retry_waits_while_paused(fake: FakeServer) -> None:
    fake.plan = [503]
    d = _driver(fake, _agent(steps=1), users=1)
    await d.start()
    await until(lambda: len(fake.requests) == 1)  # answered 503: the user is in its back-off
    d.pause()
    assert await d.drain(timeout_s=5)
    await asyncio.sleep(_BACKOFF_S * 2)  # longer than the longest first back-off (1.5 x 0.25 s)
    assert len(fake.requests) == 1
    d.resume()
    await until(lambda: d.figures(time.monotonic()).totals.requests_completed >= 1)
    assert d.records()[0].attempts == 2
    await d.stop()


async def test_subagents_run_as_children_sharing_the_prefix(fake: FakeServer) -> None:
    w = _agent(steps=3, subagents={"every_steps": 1, "children": 3, "steps": 2, "task_tokens": 20})
    d = _driver(fake, w, users=1)
    await d.start()
    await until(lambda: any(s.parent == 0 for s in d.rows()))
    await until(lambda: d.figures(time.monotonic()).totals.sessions_completed >= 7, timeout=10)
    await d.stop()
    child_users = {r.user for r in d.records() if r.user != 0}
    assert len(child_users) >= 6
    first_child = next(r for r in d.records() if r.user != 0)
    assert first_child.ceiling_tokens > 0


async def test_stop_rule_and_poisson_arrival(fake: FakeServer) -> None:
    w = _agent(steps=1, arrival={"mode": "poisson", "rate_per_s": 20}, stop={"sessions": 5})
    d = _driver(fake, w, users=3)
    await d.start()
    await until(lambda: d.finished, timeout=10)
    await d.stop()
    assert len(d.records()) == 5


async def test_workload_none_sends_nothing_and_set_workload_switches(fake: FakeServer) -> None:
    d = _driver(fake, load_workload("none"), users=4)
    await d.start()
    await asyncio.sleep(0.2)
    assert not fake.requests and d.rows() == ()
    d.set_workload(_agent())
    await until(lambda: len(fake.requests) > 4)
    await d.stop()


async def test_trace_replay_shares_equal_hash_blocks(fake: FakeServer, tmp_path: Path) -> None:
    spec = tmp_path / "trace.yaml"
    spec.write_text(f"kind: trace\ntrace: {{path: {write_mooncake_trace(tmp_path)}, mode: closed, limit: 40}}\n")
    w = load_workload(str(spec), scale=1 / 16)
    d = _driver(fake, w, users=4)
    await d.start()
    await until(lambda: d.finished, timeout=15)
    await d.stop()
    records = d.records()
    assert d.finished
    skipped = d.figures(time.monotonic()).totals.errors_by_kind.get("trace_skipped_too_long", 0)
    assert len(records) + skipped == 40 and len(records) >= 30
    assert all(r.prompt_tokens == r.expected_prompt_tokens for r in records)
    # The first 40 requests of the trace share hash block 0 (32 tokens at 1/16 scale) and more; one is too long.
    totals = d.figures(time.monotonic()).totals
    assert totals.ceiling_cacheable_tokens > 0 and totals.cached_prompt_tokens > 0
    assert totals.cached_prompt_tokens <= totals.ceiling_cacheable_tokens


async def test_a_users_state_follows_its_stream(fake: FakeServer) -> None:
    # Prefill until the first token, decoding while tokens stream, then the tool's time: what a demo
    # audience must see in the users table (not "prefill" for a request's whole life).
    fake.prefill_delay_s, fake.token_delay_s = 0.2, 0.02
    d = _driver(fake, _agent(steps=2, output_tokens=25, tool_latency_s=0.3), users=1)
    await d.start()
    seen: list[str] = []

    def watch() -> bool:
        rows = d.rows()
        if not rows:  # the user starts on the event loop's next turn
            return False
        state = rows[0].state
        if not seen or seen[-1] != state:
            seen.append(state)
        return "tool" in seen

    await until(watch)
    await d.stop()
    assert seen.index("prefill") < seen.index("decoding") < seen.index("tool"), seen


async def test_e2e_ends_at_the_last_content_token_not_a_late_usage_chunk(fake: FakeServer) -> None:
    # A server that sends its usage chunk and `[DONE]` half a second after the last token (vLLM can):
    # E2E is the answer's time, so the late tail is not in it.
    fake.token_delay_s, fake.usage_delay_s = 0.0, 0.5
    d = _driver(fake, _agent(steps=1, output_tokens=5), users=1, sessions=2)
    await d.start()
    await until(lambda: d.finished, timeout=15)
    await d.stop()
    records = d.records()
    assert len(records) == 2 and all(r.error is None for r in records)
    assert all(r.ended_at - r.sent_at >= 0.5 for r in records)  # the body did end late
    # Each E2E stops well before its body ended (measured against that body, so a busy machine that
    # delays the whole answer does not move the bound).
    assert all(r.e2e_s is not None and r.e2e_s < r.ended_at - r.sent_at - 0.25 for r in records)
    figures = d.figures(time.monotonic())
    longest = max(r.ended_at - r.sent_at for r in records)
    assert figures.run.e2e_p90_s is not None and figures.run.e2e_p90_s < longest - 0.25
