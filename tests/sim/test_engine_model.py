"""The engine model on its own (no HTTP): prefix caching, LRU eviction, preemption, queueing."""

from __future__ import annotations

import pytest

from agentx_tui.sim.engine import MAX_LAG_S, LagMeter, SimEngine
from agentx_tui.sim.kvcache import KVCacheManager, KVSeq, chain_hashes
from agentx_tui.sim.profiles import load_profile
from agentx_tui.sim.prompts import ChatPrompts
from agentx_tui.sim.scheduler import Scheduler, SimRequest, Status
from agentx_tui.sim.tokenizer import SimTokenizer


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


# --- chat prompts carried over from turn to turn ------------------------------------------------------


def _reference(tok: SimTokenizer, messages: list[dict[str, str]], **kw: bool) -> tuple[int, list[int], list[int]]:
    ids = tok.encode_chat(messages, **kw)
    hashes: list[int] = []
    chain_hashes(0, ids, 16, hashes)
    return len(ids), hashes, ids[len(hashes) * 16 :]


def test_chat_prompts_equal_tokenising_and_hashing_the_whole_history() -> None:
    tok = SimTokenizer(128256)
    prompts = ChatPrompts(tok, 16)
    system = {"role": "system", "content": "You are an agent. " * 300}
    for session in range(3):
        messages = [system, {"role": "user", "content": f"task {session}: fix the parser"}]
        for step in range(6):
            for kw in ({}, {"add_generation_prompt": False}):
                got = prompts.encode(messages, **kw)
                assert (got.num_tokens, got.hashes, got.tail) == _reference(tok, messages, **kw)
            messages += [
                {"role": "assistant", "content": f"calling tool {step} " * (step + 3)},
                {"role": "tool", "content": "result line\n" * (7 * step + 1)},
            ]
    # Every turn after a session's first starts from the previous turn's state; new sessions from the
    # shared system prompt's: only the new messages were tokenised.
    assert prompts.hits > prompts.misses


def test_chat_prompts_stay_exact_when_kept_states_are_dropped() -> None:
    tok = SimTokenizer(128256)
    prompts = ChatPrompts(tok, 16, max_kept_blocks=40)  # room for about one 600-token history
    histories = [[{"role": "user", "content": f"session {i} " + "word " * 600}] for i in range(4)]
    for _ in range(3):
        for messages in histories:
            messages.append({"role": "assistant", "content": "done " * 17})
            got = prompts.encode(messages)
            assert (got.num_tokens, got.hashes, got.tail) == _reference(tok, messages)
    assert prompts._kept_blocks <= 40 or len(prompts._states) == 1  # (the newest state is always kept)


def test_a_prompt_given_as_blocks_schedules_like_its_token_ids() -> None:
    tok = SimTokenizer(128256)
    messages = [{"role": "system", "content": "shared prefix " * 200}, {"role": "user", "content": "go"}]
    blocks = ChatPrompts(tok, 16).encode(messages)
    ids = tok.encode_chat(messages)
    s = make_scheduler(1000)
    first = SimRequest("a", ids, max_tokens=20, min_tokens=20, ignore_eos=True)
    s.add(first)
    run_to_end(s)
    again = SimRequest("b", [], max_tokens=20, min_tokens=20, ignore_eos=True, prompt_blocks=blocks)
    assert again.num_prompt == len(ids) and again.num_tokens == len(ids)
    s.add(again)
    run_to_end(s)
    assert again.num_cached_prompt == (len(ids) - 1) // 16 * 16  # the same prompt hits all its full blocks
    assert again.num_output == 20 and s.kv.usage == 0.0


# --- the engine's own lag ------------------------------------------------------------------------------


def test_lag_meter_reports_the_worst_recent_lag_and_the_time_lost() -> None:
    meter = LagMeter(0.0)
    meter.note(0.1, 0.02)
    meter.note(0.5, 0.3)
    assert meter.value(0.6) == 0.3
    meter.note(1.2, 0.01)
    assert meter.value(1.3) == 0.3  # still within the last 1-2 s
    assert meter.value(2.4) == 0.01
    assert meter.value(5.0) == 0.0  # idle: nothing noted
    meter.note(5.1, 0.8)
    assert meter.lost_s == pytest.approx(0.8 - MAX_LAG_S)


def test_engine_that_falls_behind_reports_lag_and_lost_time() -> None:
    now = [0.0]
    engine = SimEngine(load_profile("h200"), clock=lambda: now[0])
    engine.submit(list(range(1, 200)), max_tokens=50, min_tokens=50, ignore_eos=True)
    end, _ = engine.run_window(now[0])
    assert engine.lag.value(now[0]) == 0.0
    now[0] = end + 0.2  # the loop woke 200 ms late
    engine.run_window(now[0])
    assert engine.lag.value(now[0]) == pytest.approx(0.2)
    assert engine.lag.lost_s == 0.0
    now[0] = engine._t + 1.5  # then 1.5 s late: 1 s of simulated GPU time is let go
    engine.run_window(now[0])
    assert engine.lag.lost_s == pytest.approx(1.5 - MAX_LAG_S)


def test_every_token_after_the_first_is_one_inter_token_latency_observation() -> None:
    now = [0.0]
    engine = SimEngine(load_profile("h200"), clock=lambda: now[0])
    outs = [5, 40, 77, 128]
    for i, n in enumerate(outs):
        engine.submit(list(range(1000 * i + 1, 1000 * i + 300)), max_tokens=n, min_tokens=n, ignore_eos=True)
        now[0], _ = engine.run_window(now[0])  # requests join at different steps
    while engine.scheduler.has_work():
        now[0], _ = engine.run_window(now[0])
    itl = engine.metrics.itl
    assert sum(itl.counts) == sum(n - 1 for n in outs)
    assert 0 < itl.sum / sum(itl.counts) < 0.05  # a decode step of the H200 model is a few ms
