"""PassPrompts builds each call's prompt from the agent's previous one: the bytes, points and ceiling must
be exactly those of building it from scratch, in the order a replay sends the calls."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from agentx_tui.load.sending.kinds.sessions import Agent, replay_tree
from agentx_tui.load.workload.conversation import CeilingTracker, Conversation
from agentx_tui.load.workload.session_prompts import PassPrompts
from agentx_tui.load.workload.sessions import SessionCall, SessionTree, load_session_set
from agentx_tui.load.workload.text import TextMaker
from tests.helpers.traces import write_session_tree
from tests.load.sending.kinds.test_sessions import MAKER, VirtualLoop, run_virtual, tree_of
from tests.load.workload.test_sessions import WEKA, call, needs_weka, sub

HEAD, TAIL = b'{"model":"m","messages":[', b"]}"


class _Memo(TextMaker):
    """The same text, remembered: building every call from scratch stays quick enough for a test."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._memo: dict[tuple[int, int], tuple[str, int]] = {}

    def text(self, key: int, tokens: int) -> tuple[str, int]:
        found = self._memo.get((key, tokens))
        if found is None:
            found = self._memo[key, tokens] = super().text(key, tokens)
        return found


def _scratch(prompts: PassPrompts, c: SessionCall) -> Conversation:
    conv = Conversation(prompts.maker.model)
    conv.add("user", prompts.segments(c))
    return conv


def _same(built: Conversation, scratch: Conversation) -> None:
    assert built.body(HEAD, TAIL) == scratch.body(HEAD, TAIL)
    assert built.point_hashes == scratch.point_hashes and built.point_positions == scratch.point_positions
    assert built.tokens == scratch.tokens and built.prompt_tokens == scratch.prompt_tokens
    assert built._hash == scratch._hash


def _replay_both(tree: SessionTree, pass_key: int) -> tuple[int, int]:
    """Replay `tree` on the virtual clock, each call built both ways; (calls, most bytes held)."""
    memo = _Memo(MAKER.model, MAKER.seed)
    prompts, scratch = PassPrompts(tree, pass_key, MAKER), PassPrompts(tree, pass_key, memo)
    fast, slow = CeilingTracker(block_size=16), CeilingTracker(block_size=16)
    calls, held = 0, 0

    async def send(agent: Agent, c: SessionCall) -> bool:
        nonlocal calls, held
        conv, out = prompts.build(c)
        reference = _scratch(scratch, c)
        _same(conv, reference)
        assert out == c.output_tokens
        assert fast.observe("e", conv) == slow.observe("e", reference)
        calls, held = calls + 1, max(held, prompts.held_bytes)
        await asyncio.sleep(c.api_time if c.api_time is not None else 1.0)
        return True

    async def main(loop: VirtualLoop) -> None:
        await replay_tree(tree, send, clock=loop.time, max_think_s=30)

    run_virtual(main)
    assert calls == tree.call_count
    return calls, held


@pytest.mark.parametrize("scale", [1.0, 0.5, 0.03])
def test_built_prompts_are_byte_for_byte_those_built_from_scratch(scale: float, tmp_path: Path) -> None:
    # Sub-agents in parallel, one joined late, one never; blocks shared with the parent and among calls.
    for seed in range(3):
        (tree,) = load_session_set(write_session_tree(tmp_path, seed), scale=scale).trees
        assert tree.subagent_count > 0
        _replay_both(tree, pass_key=hash((seed, scale)))


@needs_weka
@pytest.mark.slow
@pytest.mark.long
@pytest.mark.parametrize("scale", [1.0, 0.1])  # 0.5 adds nothing the synthetic trees miss
def test_every_shipped_session_builds_the_same_prompts_as_from_scratch(scale: float) -> None:
    # At full scale every session; at a tenth (blocks of a few words) those with sub-agents, where the
    # prompts share most.
    for i, tree in enumerate(load_session_set(WEKA, scale=scale).trees):
        if scale == 1.0 or tree.subagent_count:
            _replay_both(tree, pass_key=i)


def test_any_order_of_calls_gives_the_same_prompts(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [
        call(0, tokens=64 * 5 + 30, ids=[1, 2, 3, 4, 5]),
        sub(3, [call(0, tokens=64 * 3 + 7, ids=[1, 2, 8]), call(1, tokens=64 * 4, ids=[1, 2, 8, 9])], 2000),
        call(4, tokens=64 * 7 + 30, ids=[1, 2, 3, 4, 5, 6, 7]),
        call(5, tokens=64 * 4 + 30, ids=[1, 2, 8, 9]),
        call(6, tokens=64 * 3, ids=[1, 2, 3]),
        call(7, tokens=64 * 8 + 1, ids=[1, 2, 3, 4, 5, 6, 7, 10]),
    ], scale=0.75)  # fmt: skip
    calls = list(tree.all_calls())
    for seed in range(20):
        random.Random(seed).shuffle(calls)
        prompts, scratch = PassPrompts(tree, 9, MAKER), PassPrompts(tree, 9, MAKER)
        for c in calls + calls:
            _same(prompts.build(c)[0], _scratch(scratch, c))


def test_memory_is_about_the_latest_prompt_of_each_running_agent(tmp_path: Path) -> None:
    (tree,) = load_session_set(write_session_tree(tmp_path), scale=0.5).trees  # four sub-agents
    prompts = PassPrompts(tree, 1, MAKER)
    largest = 0
    for c in sorted(tree.all_calls(), key=lambda c: c.seq):
        conv, _ = prompts.build(c)
        largest = max(largest, len(conv.body(b"", b"")))
    # After the last parent call only the parent's prompt (and any sub-agent never joined) is kept.
    assert prompts.held_bytes <= 1.3 * largest
