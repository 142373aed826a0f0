"""Every miss explained, for replayed AgentX sessions and synthetic agents (docs/metrics.md §4, "Where the
prefix went"): against a server whose cache forgets a session's prefix once it has been idle longer than
T, the retention curve is 1 below T and 0 above it, and the evicted share is the share of reused tokens
sent after an idle gap longer than T; on a real vLLM whose KV cache is too small for the sessions,
prefixes are evicted and every prompt's split adds up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentx_tui.engine import ServerInfo, probe_server
from agentx_tui.load import Driver, LoadSettings, Workload, prepare_workload
from agentx_tui.load.sending.users import User
from agentx_tui.load.workload.spec import parse_workload
from agentx_tui.snapshot import RetentionRow
from tests.helpers.forgetful import FORGET_S, LONG_S, SERVER_BLOCK, SHORT_S, Recorded, assert_the_cliff, split_of
from tests.helpers.waiting import until
from tests.load.fake_openai import FakeServer

BLOCK = 64  # the session files' blocks; the server's are 16 tokens, so each file block is four of its


def _session(folder: Path, n: int) -> Path:
    """A session whose context grows two blocks a call, after think times short, long, short, long, …"""
    requests = []
    t = 0.0
    for i in range(6):
        think = 0.0 if i == 0 else (SHORT_S if i % 2 else LONG_S)
        blocks = list(range(1, 5 + 2 * i))
        t += think + 0.1
        requests.append(
            {"t": round(t, 3), "type": "n", "in": len(blocks) * BLOCK + 20, "out": 8, "hash_ids": blocks,
             "think_time": think, "api_time": 0.1}
        )  # fmt: skip
    path = folder / f"forgetful_{n}.json"
    path.write_text(
        json.dumps({"id": f"forgetful_{n}", "block_size": BLOCK, "hash_id_scope": "local", "requests": requests})
    )
    return path


def test_idle_time_counts_from_the_agents_previous_call_in_the_same_session_only() -> None:
    user = User(user=0, tree=5)
    assert user.idle_before(10.0) is None  # a session's first call
    user.call_ended(9.0)
    assert user.idle_before(10.5) == 1.5
    user.tree = 6  # its next session, or a trace's next request (each a session of its own)
    assert user.idle_before(11.0) is None


async def test_replayed_sessions_against_a_forgetful_cache_show_its_cliff_exactly(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for n in range(3):
        _session(folder, n)
    server = await FakeServer(block_size=SERVER_BLOCK, forget_after_s=FORGET_S).start()
    try:
        recorded = Recorded()
        info = ServerInfo(server.url, "fake", max_model_len=server.max_model_len, block_size=SERVER_BLOCK)
        driver = Driver(prepare_workload(str(folder)), [info], LoadSettings(users=3, seed=5, sessions=3), sink=recorded)
        await driver.start()
        await until(lambda: driver.finished, timeout=60)
        await driver.stop()
    finally:
        await server.close()
    done = recorded.done
    assert len(done) == 18 and all(d.cached_tokens is not None for d in done)
    for d in done:
        if d.idle_s is None:  # a session's first call: nothing of it was sent before
            assert split_of(d).reused == 0
        elif d.idle_s >= FORGET_S:  # only after the long think times
            assert d.idle_s > LONG_S - 0.05
    run = recorded.run()
    assert run.prefix_reused_tokens == sum(d.ceiling_tokens or 0 for d in done)
    curve = assert_the_cliff(done, run)
    assert (curve[0.0].requests, curve[2.0].requests) == (9, 6)  # three short and two long gaps a session
    assert run.think_s_p50 is not None and SHORT_S <= run.think_s_p50 < LONG_S + 0.3


def _agent(tool_latency_s: float) -> Workload:
    """The synthetic agent loop (`kind: agent`): a shared system prompt, then history that grows."""
    spec = {
        "shared_prefix_tokens": 200,
        "unique_prefix_tokens": 40,
        "first_message_tokens": 60,
        "steps": 3,
        "output_tokens": 8,
        "tool_result_tokens": 80,
        "tool_latency_s": tool_latency_s,
    }
    return parse_workload(spec, source="test", default_name="forgetful-agent")


@pytest.mark.parametrize(("tool_latency_s", "evicted"), [(0.05, 0.0), (1.4, 1.0)])
async def test_synthetic_agents_are_split_the_same_way(tool_latency_s: float, evicted: float) -> None:
    # One session of three calls: back after 0.05 s its history is all there; after 1.4 s of tool time,
    # longer than T, none of it (the first call reuses nothing: it is in no bucket).
    server = await FakeServer(block_size=SERVER_BLOCK, forget_after_s=FORGET_S).start()
    try:
        recorded = Recorded()
        info = ServerInfo(server.url, "fake", max_model_len=server.max_model_len, block_size=SERVER_BLOCK)
        driver = Driver(_agent(tool_latency_s), [info], LoadSettings(users=1, seed=3, sessions=1), sink=recorded)
        await driver.start()
        await until(lambda: driver.finished, timeout=30)
        await driver.stop()
    finally:
        await server.close()
    assert len(recorded.done) == 3 and recorded.done[0].idle_s is None
    assert all(d.idle_s is not None and d.idle_s >= tool_latency_s for d in recorded.done[1:])
    run = recorded.run()
    assert run.prefix_evicted_share == evicted
    (row,) = [row for row in run.retention_curve or () if isinstance(row, RetentionRow)]
    assert row.idle_s_low == (0.0 if tool_latency_s < 1 else 1.0) and row.requests == 2
    assert row.hit_share == 1 - evicted


def _growing(folder: Path, n: int, *, calls: int, first_blocks: int, thinks: tuple[float, ...]) -> None:
    """A session of `calls` calls, each two blocks longer than the one before, after `thinks` in turn."""
    requests = []
    for i in range(calls):
        think = 0.0 if i == 0 else thinks[i % len(thinks)]
        blocks = list(range(1, first_blocks + 1 + 2 * i))
        requests.append(
            {"t": float(i), "type": "n", "in": len(blocks) * BLOCK + 30, "out": 4, "hash_ids": blocks,
             "think_time": think, "api_time": 0.1}
        )  # fmt: skip
    data = {"id": f"grow_{n}", "block_size": BLOCK, "hash_id_scope": "local", "requests": requests}
    (folder / f"grow_{n}.json").write_text(json.dumps(data))


@pytest.mark.vllm
@pytest.mark.slow
async def test_real_vllm_with_too_small_a_kv_cache_evicts_and_every_split_adds_up(
    small_kv_vllm_url: str, tmp_path: Path
) -> None:
    # Four sessions at a time, up to 26 blocks of 64 tokens each (13 of vLLM's 128-token blocks), on a KV
    # cache of 48 such blocks: one that sits idle for 1.5 s loses some of its prefix to the others. (As
    # measured here: 98% of the reused tokens hit after 0.05 s of idle, 56% after 1.5 s; 22% evicted.)
    folder = tmp_path / "sessions"
    folder.mkdir()
    for n in range(10):
        _growing(folder, n, calls=5, first_blocks=18, thinks=(0.05, 1.5))
    info = await probe_server(small_kv_vllm_url)
    assert info.block_size == 128
    recorded = Recorded()
    driver = Driver(prepare_workload(str(folder)), [info], LoadSettings(users=4, seed=9, sessions=10), sink=recorded)
    await driver.start()
    try:
        await until(lambda: driver.finished, timeout=240)
    finally:
        await driver.stop()
    done = recorded.done
    assert len(done) == 50 and all(d.cached_tokens is not None for d in done)
    evicted = 0
    for d in done:
        split = split_of(d)
        assert split.reused % 128 == 0 and (d.cached_tokens or 0) % 128 == 0  # whole vLLM blocks
        evicted += split.evicted
    run = recorded.run()
    assert evicted > 0 and run.prefix_evicted_share is not None and run.prefix_evicted_share > 0
    assert run.prefix_reused_tokens == sum(d.ceiling_tokens or 0 for d in done)
    curve = [row for row in run.retention_curve or () if isinstance(row, RetentionRow)]
    assert sum(row.requests for row in curve) == 40  # every call but the sessions' first
