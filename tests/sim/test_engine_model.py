"""The engine model on its own (no HTTP): prefix caching, LRU eviction, preemption, queueing."""

from __future__ import annotations

import pytest

from agentx_tui.sim.kvcache import KVCacheManager, KVSeq
from agentx_tui.sim.scheduler import Scheduler, SimRequest, Status


def make_scheduler(blocks: int, *, max_num_seqs: int = 64, budget: int = 8192) -> Scheduler:
    kv = KVCacheManager(blocks, 16)
    return Scheduler(kv, max_num_seqs=max_num_seqs, max_num_batched_tokens=budget, max_model_len=16 * blocks)


def request(rid: str, prompt: list[int], out: int) -> SimRequest:
    return SimRequest(rid, prompt, max_tokens=out, min_tokens=out, ignore_eos=True)


def run_to_end(s: Scheduler, max_steps: int = 10_000) -> int:
    steps = 0
    while s.has_work():
        result = s.schedule(float(steps))
        s.complete(result, lambda r: 7)
        steps += 1
        assert steps < max_steps, "the scheduler made no progress"
    return steps


def tokens(start: int, n: int) -> list[int]:
    return list(range(start, start + n))


def test_shared_prefix_hits_block_aligned() -> None:
    s = make_scheduler(1000)
    shared = tokens(1000, 100)  # 6 full blocks + 4 tokens
    a = request("a", shared + tokens(1, 20), 4)
    s.add(a)
    run_to_end(s)
    b = request("b", shared + tokens(500, 30), 4)
    s.add(b)
    s.schedule(0.0)
    assert b.num_cached_prompt == 96  # only the 6 full shared blocks can match
    assert s.stats.prefix_queries == a.num_prompt + b.num_prompt
    assert s.stats.prefix_hits == 96


def test_identical_prompt_leaves_last_token_to_compute() -> None:
    s = make_scheduler(1000)
    prompt = tokens(1, 64)  # exactly 4 blocks
    s.add(request("a", prompt, 1))
    run_to_end(s)
    b = request("b", list(prompt), 1)
    s.add(b)
    s.schedule(0.0)
    assert b.num_cached_prompt == 48  # (64 - 1) // 16 blocks


def test_lru_evicts_least_recently_freed_first() -> None:
    kv = KVCacheManager(9, 16)  # 8 usable blocks
    a, b = KVSeq(tokens(100, 64)), KVSeq(tokens(200, 64))
    for seq in (a, b):
        assert kv.allocate(seq, 0, 64)
        kv.cache_full_blocks(seq, 64)
    kv.free(a)
    kv.free(b)
    c = KVSeq(tokens(300, 64))
    assert kv.allocate(c, 0, 64)  # needs 4 blocks: evicts a's, which were freed first
    assert kv.evictions == 4
    assert kv.find_cached_prefix(KVSeq([*tokens(100, 64), 1])) == []
    assert len(kv.find_cached_prefix(KVSeq([*tokens(200, 64), 1]))) == 4


def test_eviction_takes_a_prefix_tail_first() -> None:
    kv = KVCacheManager(9, 16)
    a = KVSeq(tokens(100, 128))  # all 8 blocks
    assert kv.allocate(a, 0, 128)
    kv.cache_full_blocks(a, 128)
    kv.free(a)
    b = KVSeq(tokens(900, 32))
    assert kv.allocate(b, 0, 32)  # takes 2 blocks: a's last two
    assert len(kv.find_cached_prefix(KVSeq([*tokens(100, 128), 1]))) == 6


def test_usage_counts_referenced_blocks_only() -> None:
    kv = KVCacheManager(11, 16)
    seq = KVSeq(tokens(1, 80))
    assert kv.allocate(seq, 0, 80)
    assert kv.usage == pytest.approx(0.5)
    kv.cache_full_blocks(seq, 80)
    kv.free(seq)
    assert kv.usage == 0.0
    assert kv.num_cached_blocks == 5


def test_preemption_when_kv_runs_out_and_everyone_still_finishes() -> None:
    s = make_scheduler(33)  # 32 usable blocks = 512 tokens
    reqs = [request(f"r{i}", tokens(10_000 * (i + 1), 64), 96) for i in range(6)]  # 6 x 160 tokens
    for r in reqs:
        s.add(r)
    preempted = 0
    steps = 0
    while s.has_work():
        result = s.schedule(float(steps))
        preempted += len(result.preempted)
        s.complete(result, lambda r: 7)
        steps += 1
        assert steps < 10_000
    assert preempted > 0
    assert all(r.status is Status.FINISHED and r.num_output == 96 for r in reqs)
    assert any(r.num_preemptions > 0 for r in reqs)
    assert s.kv.usage == 0.0


def test_waiting_queue_grows_past_max_num_seqs() -> None:
    s = make_scheduler(1000, max_num_seqs=4)
    for i in range(10):
        s.add(request(f"r{i}", tokens(100 * i, 20), 8))
    s.schedule(0.0)
    assert len(s.running) == 4
    assert len(s.waiting) == 6
    run_to_end(s)
    assert not s.waiting and not s.running


def test_chunked_prefill_respects_token_budget() -> None:
    s = make_scheduler(1000, budget=256)
    r = request("long", tokens(1, 1000), 2)
    s.add(r)
    result = s.schedule(0.0)
    assert [w.num_new for w in result.work] == [256]
    s.complete(result, lambda q: 7)
    assert r.num_output == 0
    # 3 more prefill chunks (256, 256, 232; the last samples token 1), then one decode step.
    assert run_to_end(s) == 4


def test_exact_output_length_and_stop_reasons() -> None:
    s = make_scheduler(1000)
    capped = request("capped", tokens(1, 10), 5)
    natural = SimRequest("natural", tokens(50, 10), max_tokens=100, min_tokens=3, natural_len=12)
    floor = SimRequest("floor", tokens(90, 10), max_tokens=100, min_tokens=40, natural_len=12)
    for r in (capped, natural, floor):
        s.add(r)
    run_to_end(s)
    assert (capped.num_output, capped.finish_reason) == (5, "length")
    assert (natural.num_output, natural.finish_reason) == (12, "stop")
    assert (floor.num_output, floor.finish_reason) == (40, "stop")
