"""AgentX session replay through the driver: the timing rules seen by a server, and a real vLLM's
counters agreeing with the driver's (workloads/README.md, "Agent sessions")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from agentx_tui.engine import ServerInfo, probe_server
from agentx_tui.load import Driver, LoadSettings, prepare_workload
from agentx_tui.load.sending.kinds.sessions import UNREADABLE
from agentx_tui.load.workload import session_stream
from agentx_tui.telemetry import EndpointMonitor
from tests.helpers.traces import write_session_corpus
from tests.helpers.waiting import until
from tests.load.fake_openai import FakeServer


def _call(t: float, think: float, out: int, blocks: list[int], tokens: int) -> dict[str, object]:
    return {"t": t, "type": "n", "in": tokens, "out": out, "hash_ids": blocks, "think_time": think, "api_time": 0.1}


def _session(folder: Path) -> Path:
    """A parent with a sub-agent, recorded as the AgentX files record one: the sub-agent's `t` is when
    its result came back (its end), its span ends there, and the parent's next call comes after it.

    P0 (out 11) at t=0 → sub-agent S spawned after P0, back at t=6 after 5 s: S0 (out 21), S1 (out 22)
    P1 (out 12) at t=7: the first parent call after S's end, so it joins S; think 0.2 s after P0
    P2 (out 13) at t=9; think 0.1 s after P1
    """
    parent_blocks = [1, 2, 3, 4]
    data = {
        "id": "hand_made",
        "block_size": 64,
        "hash_id_scope": "local",
        "requests": [
            _call(0.0, 0.0, 11, parent_blocks, 300),
            {
                "type": "subagent",
                "t": 6.0,
                "agent_id": "agent_001",
                "subagent_type": "Explore",
                "duration_ms": 5000,
                "requests": [_call(0.0, 0.0, 21, [9, 10], 140), _call(1.0, 0.3, 22, [9, 10, 11], 200)],
            },
            _call(7.0, 0.2, 12, [*parent_blocks, 5], 340),
            _call(9.0, 0.1, 13, [*parent_blocks, 5, 6], 400),
        ],
    }
    path = folder / "hand_made.json"
    path.write_text(json.dumps(data))
    return path


async def test_a_server_sees_the_replay_rules(fake: FakeServer, tmp_path: Path) -> None:
    # Arrival and end of every call, as a server stamps them. Read as a start (the rule before
    # workloads/README.md's sub-agent rule was corrected), S's `t` would put its end at 11 s, after
    # every parent call: P1 would go 0.2 s after P0, while S still streams; this test fails then.
    fake.token_delay_s = 0.01  # a call of 11–22 tokens takes 0.1–0.2 s
    workload = prepare_workload(str(_session(tmp_path)))
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    driver = Driver(workload, [info], LoadSettings(users=1, seed=3, sessions=1))
    await driver.start()
    await until(lambda: driver.finished, timeout=20)
    await driver.stop()
    by_out = {out: (start, end) for start, end, out in fake.timeline}
    assert sorted(by_out) == [11, 12, 13, 21, 22]
    p0, p1, p2, s0, s1 = (by_out[k] for k in (11, 12, 13, 21, 22))
    assert s0[0] >= p0[1]  # the sub-agent starts after the parent call before it
    assert s1[0] - s0[1] == pytest.approx(0.3, abs=0.08)  # its own think time
    assert p1[0] >= s1[1]  # the parent is blocked while the sub-agent runs: its next call joins it
    assert p1[0] - s1[1] < 0.1  # ... and goes as soon as it has ended (its 0.2 s think had passed)
    assert p2[0] - p1[1] == pytest.approx(0.1, abs=0.08)  # its think time, not the 2 s between `t`s
    records = driver.records()
    assert all(r.prompt_tokens == r.expected_prompt_tokens for r in records)
    assert sorted(r.prompt_tokens for r in records) == [140, 200, 300, 340, 400]


async def test_two_passes_of_one_file_share_nothing(fake: FakeServer, tmp_path: Path) -> None:
    workload = prepare_workload(str(_session(tmp_path)))
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    driver = Driver(workload, [info], LoadSettings(users=2, seed=3, sessions=2, max_think_s=0.0))
    await driver.start()
    await until(lambda: driver.finished, timeout=20)
    await driver.stop()
    first_calls = [r for r in fake.requests if r["max_tokens"] == 11]
    assert len(first_calls) == 2
    a, b = (str(r["messages"][0]["content"]) for r in first_calls)
    assert a[:20] != b[:20]  # a fresh marker at the very start of each pass's text
    totals = driver.stats.totals() if driver.stats else None
    assert totals is not None and totals.sessions_completed == 2


async def test_users_joining_midway_replay_their_first_pass_from_a_drawn_call(fake: FakeServer, tmp_path: Path) -> None:
    workload = prepare_workload(str(write_session_corpus(tmp_path / "corpus", count=8, parent_calls=12)))
    fake.max_model_len = 100_000  # every call fits (a pass joins only at calls a pass from the first reaches)
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    settings = LoadSettings(users=8, seed=3, sessions=16, max_think_s=0.0, join="midway")
    driver = Driver(workload, [info], settings)
    await driver.start()
    await until(lambda: driver.finished, timeout=60)
    await driver.stop()
    records = sorted(driver.records(), key=lambda r: r.sent_at)
    assert records and all(r.error is None for r in records)
    # A user's first pass opens at a drawn call (its step: the call's place in the tree), a later pass at
    # its first; the first passes, not sent whole, are no tasks.
    first = {(r.user, r.session): r.step for r in reversed(records) if r.user < 8}  # not the sub-agents
    joined = [step for (_, session), step in first.items() if session == 1]
    assert len(joined) == 8 and len(set(joined)) >= 3 and max(joined) > 1
    assert {step for (_, session), step in first.items() if session >= 2} == {1}
    # Every pass ran to its end (`sessions` 16); those that joined past their first call are no tasks.
    assert driver.stats is not None
    whole = 16 - sum(step > 1 for step in joined)
    totals = driver.stats.totals()
    assert totals.sessions_completed == whole == driver.stats.tasks.figures(records[-1].ended_at).tasks_completed


@pytest.mark.vllm
@pytest.mark.slow
async def test_real_vllm_replays_sessions_with_subagents(vllm_url: str, tmp_path: Path) -> None:
    # Two session trees of four sub-agents each, contexts up to ~15 K tokens: ~1.5 K at this scale.
    workload = prepare_workload(str(write_session_corpus(tmp_path / "sessions", count=2)), scale=0.1)
    info = await probe_server(vllm_url)
    driver = Driver(workload, [info], LoadSettings(users=2, seed=5, sessions=2, max_think_s=0.2))
    async with httpx.AsyncClient() as client:
        monitor = EndpointMonitor(vllm_url, client=client, window_s=600, timeout_s=5)
        before = await monitor.sample(0.0)
        await driver.start()
        try:
            await until(lambda: driver.finished, timeout=240)
            assert await driver.drain(30)
        finally:
            await driver.stop()
        await asyncio.sleep(1.2)  # vLLM updates its counters on its own clock
        after = await monitor.sample(1.0)
    assert driver.stats is not None
    totals = driver.stats.totals()
    assert totals.requests_failed == 0 and totals.sessions_completed == 2
    assert totals.requests_completed == len(driver.records())
    assert any(r.user >= 1 << 40 for r in driver.records())  # sub-agents sent requests of their own
    assert before.totals.prompt_tokens is not None and after.totals.prompt_tokens is not None
    server = after.totals
    assert server.prompt_tokens == pytest.approx(totals.prompt_tokens)
    assert server.generation_tokens == pytest.approx(totals.output_tokens)
    assert server.cached_prompt_tokens == pytest.approx(totals.cached_prompt_tokens)
    assert totals.cached_prompt_tokens / totals.prompt_tokens > 0.5
    assert totals.cached_prompt_tokens <= totals.ceiling_cacheable_tokens


async def test_a_session_that_cannot_be_read_mid_run_is_skipped_said_once_and_counted(
    fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read ahead: the first file only, so the bad second one is met when its user takes it (docs/sessions.md).
    monkeypatch.setattr(session_stream, "PREFLIGHT_BYTES", 1)
    (tmp_path / "b.json").write_text(
        json.dumps({"block_size": 64, "requests": [{**_call(0.0, 0.0, 12, [1], 200), "in": 0}]})
    )
    (tmp_path / "a.json").write_text(json.dumps({"block_size": 64, "requests": [_call(0.0, 0.0, 11, [1], 200)]}))
    (tmp_path / "c.json").write_text(json.dumps({"block_size": 64, "requests": [_call(0.0, 0.0, 13, [1], 200)]}))
    workload = prepare_workload(str(tmp_path))  # b.json is not read yet: the run starts
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    driver = Driver(workload, [info], LoadSettings(users=1, seed=3, sessions=6, max_think_s=0.0))
    events: list[str] = []
    driver.on_event = events.append
    await driver.start()
    await until(lambda: driver.finished, timeout=20)
    await driver.stop()
    assert sorted(r["max_tokens"] for r in fake.requests) == [11, 11, 13, 13]  # b's turns skipped, twice
    assert driver.stats is not None and driver.stats.errors == {UNREADABLE: 2}
    assert driver.stats.totals().sessions_completed == 4 and driver.stats.totals().requests_failed == 0
    (said,) = [e for e in events if "b.json" in e]  # once, naming the file, the request and the field
    assert said.startswith("skipped a session that cannot be read") and "requests[0]: `in`" in said
