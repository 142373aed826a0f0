from __future__ import annotations

import asyncio
import json
import random
import selectors
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from agentx_tui.load.sending.kinds.sessions import Agent, TreeOutcome, _joined_at, replay_tree
from agentx_tui.load.workload.conversation import CeilingTracker, Conversation
from agentx_tui.load.workload.session_prompts import PassPrompts
from agentx_tui.load.workload.sessions import SessionCall, SessionSubAgent, SessionTree, load_session_set
from agentx_tui.load.workload.text import WORD_POOL, TextMaker, TokenModel
from tests.helpers.traces import write_session_corpus, write_session_tree
from tests.load.fake_openai import GEN, HEADER, TRAILER, chat_ids, word_ids
from tests.load.workload.test_sessions import WEKA, call, needs_weka, sub, write

T = TypeVar("T")

# -- a virtual clock: the event loop's own time, advanced instead of waited --------------------------------


class _Selector(selectors.DefaultSelector):
    def __init__(self, loop: VirtualLoop) -> None:
        super().__init__()
        self.loop = loop

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:  # nothing ready and nothing scheduled: the code under test is stuck
            raise RuntimeError("deadlock: every task waits and no timer is set")
        self.loop.now += timeout
        return super().select(0)


class VirtualLoop(asyncio.SelectorEventLoop):
    """asyncio.sleep and loop.time() run on virtual seconds: a 10,000 s replay takes milliseconds."""

    def __init__(self) -> None:
        self.now = 0.0
        super().__init__(_Selector(self))

    def time(self) -> float:
        return self.now


def run_virtual(make: Callable[[VirtualLoop], Awaitable[T]]) -> T:
    loop = VirtualLoop()
    try:
        return loop.run_until_complete(make(loop))
    finally:
        loop.close()


@dataclass
class FakeSender:
    """Each call takes its recorded api_time (1 s when none); records (agent, call index, start, end)."""

    loop: VirtualLoop
    fail: set[tuple[str, int]] = field(default_factory=set)  # (agent label, call index) that fail
    log: list[tuple[str, int, float, float]] = field(default_factory=list)
    cancelled: list[tuple[str, int, float]] = field(default_factory=list)

    async def __call__(self, agent: Agent, c: SessionCall) -> bool:
        start = self.loop.time()
        try:
            await asyncio.sleep(c.api_time if c.api_time is not None else 1.0)
        except asyncio.CancelledError:
            self.cancelled.append((agent.label, c.index, self.loop.time()))
            raise
        self.log.append((agent.label, c.index, start, self.loop.time()))
        return (agent.label, c.index) not in self.fail

    def starts(self, label: str) -> list[float]:
        return [s for a, _, s, _ in self.log if a == label]


def tree_of(tmp_path: Path, requests: list[Any], scale: float = 1.0, name: str = "s.json") -> SessionTree:
    return load_session_set(write(tmp_path, requests, name=name), scale=scale).trees[0]


def replay(
    tree: SessionTree, sender_fail: set[tuple[str, int]] | None = None, **kw: Any
) -> tuple[TreeOutcome, FakeSender]:
    async def main(loop: VirtualLoop) -> tuple[TreeOutcome, FakeSender]:
        sender = FakeSender(loop, fail=sender_fail or set())
        outcome = await replay_tree(tree, sender, clock=loop.time, **kw)
        assert asyncio.all_tasks() == {asyncio.current_task()}  # nothing leaked
        return outcome, sender

    return run_virtual(main)


# -- timing rules -------------------------------------------------------------------------------------------


def test_the_wait_is_think_time_from_the_previous_end_not_the_recorded_gap(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [call(0, api=2), call(100, think=3, api=1), call(500, think=0, api=1)])
    outcome, sender = replay(tree)
    assert sender.starts("s") == [0, 5, 6]
    assert outcome == TreeOutcome("done", 3, 0, 0, 0, 7.0)


@pytest.mark.parametrize(("cap", "starts"), [(None, [0, 32, 53]), (5.0, [0, 7, 13]), (0.0, [0, 2, 3])])
def test_max_think_caps_every_think_time(tmp_path: Path, cap: float | None, starts: list[float]) -> None:
    tree = tree_of(tmp_path, [call(0, api=2), call(50, think=30, api=1), call(90, think=20, api=1)])
    assert replay(tree, max_think_s=cap)[1].starts("s") == starts


def test_think_times_go_through_the_injected_sleep(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [call(0, api=2), call(50, think=30, api=1), call(90, think=0, api=1)])
    asked: list[float] = []

    async def sleep(seconds: float) -> None:
        asked.append(seconds)
        await asyncio.sleep(seconds)

    replay(tree, max_think_s=12, sleep=sleep)
    assert asked == [12.0]  # a think time of 0 (or one already over) sleeps not at all


def test_sub_agents_spawn_after_the_call_before_them_and_the_parent_waits_for_them(tmp_path: Path) -> None:
    # As the recorded files are: a sub-agent's `t` is when its result came back (its end), so the
    # parent's next call, recorded after it, is its join.
    tree = tree_of(tmp_path, [
        call(0, api=2),
        sub(7.6, [call(0, api=6)], 5000, agent_id="B"),  # spawned after the parent's first call; back at 7.6
        sub(12.9, [call(0, api=4), call(5, think=1, api=4)], 10_000, agent_id="A"),  # spawned with B; back at 12.9
        call(13, think=1, api=1),  # the first parent call at or after both ends: waits for both
        call(15, think=0.5, api=1),
    ])  # fmt: skip
    outcome, sender = replay(tree)
    assert sender.starts("A Explore") == [2, 7]  # after the parent's first call; 1 s think between
    assert sender.starts("B Explore") == [2]  # alongside A
    # Parent: 0-2, blocked while A (2-11) and B (2-8) run, then 11-12 and 12.5-13.5.
    assert sender.starts("s") == [0, 11, 12.5]
    assert outcome == TreeOutcome("done", 6, 0, 2, 2, 13.5)


def test_a_pass_joined_midway_sends_from_its_call_and_skips_the_sub_agents_spawned_before(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [
        call(0, api=2),
        sub(7.6, [call(0, api=6)], 5000, agent_id="B"),  # spawned after call 0, joined at call 1: skipped
        call(13, think=1, api=1),
        sub(20, [call(0, api=3)], 3000, agent_id="C"),  # spawned after call 1: replayed, joined at call 3
        call(15, think=0.5, api=1),
        call(21, think=0.5, api=1),
    ])  # fmt: skip
    outcome, sender = replay(tree, start_at=1)
    assert [(a, i) for a, i, _, _ in sender.log if a == "s"] == [("s", 1), ("s", 2), ("s", 3)]
    assert sender.starts("B Explore") == [] and sender.starts("C Explore") == [2.0]  # after call 1 (1-2)
    assert sender.starts("s") == [1, 2.5, 5]  # call 1 after its think time; call 3 waits for C (2-5)
    assert outcome == TreeOutcome("done", 4, 0, 1, 1, 6.0)


def test_a_pass_joins_midway_only_at_calls_a_pass_from_the_first_would_reach(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [call(i, tokens=100 * (i + 1), out=10, ids=[1]) for i in range(8)])
    # In a 410-token context calls 0-3 fit (4 × 100 + 10): a pass from the first ends at call 4.
    drawn = {_joined_at(tree, 410, random.Random(seed)) for seed in range(200)}
    assert drawn == {0, 1, 2, 3}
    assert {_joined_at(tree, None, random.Random(seed)) for seed in range(200)} == set(range(8))
    assert _joined_at(tree, 50, random.Random(0)) == 0  # not even the first fits: it starts (and ends) there


def test_a_parent_call_recorded_before_a_sub_agents_end_goes_ahead(tmp_path: Path) -> None:
    # A file whose clocks disagree (one pair in the shipped files): a parent call recorded before the
    # sub-agent's end is not its join, so it does not wait; the join is the first call after its end.
    tree = tree_of(tmp_path, [
        call(0, api=2),
        sub(12.5, [call(0, api=4), call(5, think=1, api=4)], 10_000, agent_id="A"),
        call(5, think=1, api=1),  # recorded during A's span: goes ahead
        call(13, think=0.5, api=1),  # the first at or after A's end: waits for A
    ])  # fmt: skip
    _, sender = replay(tree)
    assert sender.starts("s") == [0, 3, 11]


def test_a_join_call_also_waits_its_own_think_time(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [call(0, api=1), sub(2.1, [call(0, api=1)], 1000), call(3, think=8, api=1)])
    assert replay(tree)[1].starts("s") == [0, 9]  # the sub-agent ended at 2; the think ends at 1 + 8


def test_a_sub_agent_with_no_parent_call_after_it_ends_the_tree_when_it_finishes(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [call(0, api=1), sub(41, [call(0, api=20), call(30, think=5, api=2)], 40_000)])
    outcome, sender = replay(tree)
    assert sender.starts("agent_001 Explore") == [1, 26]
    assert outcome.ended == "done" and outcome.elapsed_s == 28.0


def test_a_sub_agent_before_any_parent_call_starts_with_the_tree(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [sub(3, [call(0, api=3)], 3000), call(4, think=1, api=1), call(6, think=0, api=1)])
    _, sender = replay(tree)
    assert sender.starts("agent_001 Explore") == [0]
    assert sender.starts("s") == [3, 4]  # the first parent call joins the sub-agent (ended at 3)


def test_nested_sub_agents_follow_the_same_rules_one_level_down(tmp_path: Path) -> None:
    inner = sub(8, [call(0, api=5)], 5000, agent_id="inner")  # its end, on the outer sub-agent's clock
    outer = sub(
        20, [call(0, api=1), inner, call(9, think=0, api=1), call(11, think=0, api=1)], 20_000, agent_id="outer"
    )
    tree = tree_of(tmp_path, [call(0, api=1), outer, call(21, think=0, api=1)])
    outcome, sender = replay(tree)
    assert sender.starts("inner Explore") == [2]  # after outer's first call (1-2)
    assert sender.starts("outer Explore") == [1, 7, 8]  # its second call joins inner (ends at 7)
    assert sender.starts("s") == [0, 9]  # the parent's second call joins outer (ends at 9)
    assert outcome.subagents_started == outcome.subagents_done == 2


def test_on_subagent_marks_each_start_and_end(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [call(0), sub(1, [call(0)], 1000), sub(1, [call(0)], 1000, agent_id="b"), call(9)])
    marks: list[tuple[str, bool]] = []
    replay(tree, on_subagent=lambda s, started: marks.append((s.agent_id, started)))
    assert sorted(marks) == [("agent_001", False), ("agent_001", True), ("b", False), ("b", True)]


# -- failures, stop and cancellation ------------------------------------------------------------------------------


def test_a_failed_parent_call_ends_the_tree_and_cancels_its_sub_agents(tmp_path: Path) -> None:
    # The failing call is recorded before the sub-agent's end (clocks that disagree), so both run at once.
    tree = tree_of(tmp_path, [call(0, api=1), sub(11, [call(0, api=10)], 10_000), call(2, api=2), call(30, api=1)])
    outcome, sender = replay(tree, sender_fail={("s", 1)})
    assert sender.starts("s") == [0, 1]  # the third call is never sent
    assert sender.cancelled == [("agent_001 Explore", 0, 3.0)]  # the sub-agent's call, cut at once
    assert outcome == TreeOutcome("error", 1, 1, 1, 0, 3.0)


def test_a_failed_sub_agent_call_ends_that_sub_agent_only(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [
        call(0, api=1),
        sub(21, [call(0, api=2), call(3, api=2)], 20_000),  # would run to 6; fails at 3
        sub(21, [call(0, api=4)], 20_000, agent_id="b"),
        call(30, think=0, api=1),  # joins both
    ])  # fmt: skip
    outcome, sender = replay(tree, sender_fail={("agent_001 Explore", 0)})
    assert sender.starts("agent_001 Explore") == [1]
    assert sender.starts("s") == [0, 5]  # waits for b (ends at 5), not for the failed one
    assert outcome == TreeOutcome("done", 3, 1, 2, 1, 6.0)


def test_stop_lets_calls_on_the_wire_finish_and_ends_every_wait(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [
        call(0, api=1),
        sub(601, [call(0, api=1), call(100, think=500, api=1)], 600_000),  # thinking when stopped
        call(2, think=1, api=10),  # recorded before its end (clocks that disagree): on the wire when stopped
        call(700, think=50, api=1),
    ])  # fmt: skip

    async def main(loop: VirtualLoop) -> tuple[TreeOutcome, FakeSender]:
        sender, stop = FakeSender(loop), asyncio.Event()
        loop.call_later(5, stop.set)
        outcome = await replay_tree(tree, sender, stop=stop, clock=loop.time)
        assert asyncio.all_tasks() == {asyncio.current_task()}
        return outcome, sender

    outcome, sender = run_virtual(main)
    assert sender.starts("s") == [0, 2] and sender.starts("agent_001 Explore") == [1]
    assert sender.cancelled == [] and outcome == TreeOutcome("stopped", 3, 0, 1, 0, 12.0)


def test_cancelling_the_replay_cancels_every_call_and_leaves_no_task(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [call(0, api=1), sub(51, [call(0, api=50)], 50_000), call(2, think=1, api=50)])

    async def main(loop: VirtualLoop) -> FakeSender:
        sender = FakeSender(loop)
        task = asyncio.create_task(replay_tree(tree, sender, clock=loop.time))
        await asyncio.sleep(10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert asyncio.all_tasks() == {asyncio.current_task()}
        return sender

    sender = run_virtual(main)
    assert sorted(sender.cancelled) == [("agent_001 Explore", 0, 10.0), ("s", 1, 10.0)]


def test_an_exception_in_send_cancels_the_tree_and_propagates_as_itself(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [call(0, api=1), sub(11, [call(0, api=1)], 10_000), call(2, api=30)])

    async def main(loop: VirtualLoop) -> FakeSender:
        sender = FakeSender(loop)

        async def send(agent: Agent, c: SessionCall) -> bool:
            if isinstance(agent, SessionSubAgent):
                raise ValueError("bug in send")
            return await sender(agent, c)

        with pytest.raises(ValueError, match="bug in send"):
            await replay_tree(tree, send, clock=loop.time)
        assert asyncio.all_tasks() == {asyncio.current_task()}
        return sender

    assert run_virtual(main).cancelled == [("s", 1, 1.0)]


def _replays_to_the_end(trees: list[SessionTree]) -> None:
    for tree in trees:
        if not tree.subagents:
            continue
        outcome, sender = replay(tree, max_think_s=30)
        assert outcome.ended == "done" and outcome.calls_ok == tree.call_count == len(sender.log)
        assert outcome.subagents_done == tree.subagent_count


def test_every_tree_with_sub_agents_replays_on_the_virtual_clock(tmp_path: Path) -> None:
    _replays_to_the_end(load_session_set(write_session_corpus(tmp_path)).trees)


@needs_weka
def test_every_real_tree_replays_on_the_virtual_clock() -> None:
    _replays_to_the_end(load_session_set(WEKA).trees)


# -- prompt text --------------------------------------------------------------------------------------------


def _token_model() -> TokenModel:
    """The real word pool, priced by the fake server's tokenizer (so text can be checked by counting)."""
    words = tuple(" " + w for w in WORD_POOL)
    table = {"user": HEADER + TRAILER, "system": HEADER + TRAILER, "assistant": HEADER + TRAILER}
    header = {"user": HEADER}
    return TokenModel(
        words, tuple(len(word_ids(w)) for w in words), table, dict(table), header, dict(header), GEN, True
    )


MAKER = TextMaker(_token_model(), seed=4)


def _content(conv: Conversation) -> str:
    (message,) = json.loads(conv.body(b"[", b"]"))
    assert message["role"] == "user"
    return str(message["content"])


def _real_tokens(conv: Conversation) -> int:
    return len(chat_ids(json.loads(conv.body(b"[", b"]")), True))


def _shared_words(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split(), b.split(), strict=False):
        if x != y:
            break
        n += 1
    return n


@pytest.mark.parametrize("scale", [1.0, 0.5, 0.03])
def test_prompts_are_exactly_in_tokens_at_any_scale(tmp_path: Path, scale: float) -> None:
    sizes = [(150, 37), (190, 2), (200, 0), (120, 63)]  # (whole blocks, tokens past them)
    tree = tree_of(tmp_path, [call(i, tokens=64 * n + r, ids=list(range(1, n + 1))) for i, (n, r) in enumerate(sizes)],
                   scale=scale)  # fmt: skip
    prompts = PassPrompts(tree, 1, MAKER)
    for c in tree.calls:
        conv, out = prompts.build(c)
        assert conv.prompt_tokens == c.input_tokens == _real_tokens(conv) == round(c.recorded_in * scale)
        assert out == c.output_tokens == max(1, round(10 * scale))


def test_small_prompts_are_exact_too(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [call(0, tokens=128, ids=[1, 2]), call(1, tokens=70, ids=[1]), call(2, tokens=20, ids=[])])
    prompts = PassPrompts(tree, 1, MAKER)
    for c in tree.calls:
        conv, _ = prompts.build(c)
        assert conv.prompt_tokens == c.input_tokens == _real_tokens(conv)


def test_equal_hash_ids_give_identical_blocks_within_a_pass_and_nothing_shared_across_passes(tmp_path: Path) -> None:
    requests = [call(0, tokens=300, ids=[1, 2, 3, 4]), call(1, tokens=400, ids=[1, 2, 3, 9, 10, 11])]
    tree = tree_of(tmp_path, requests)
    first = tree.calls[0]
    a, b = (_content(conv) for conv, _ in map(PassPrompts(tree, 1, MAKER).build, tree.calls))
    shared = sum(len(word_ids(w)) for w in a.split()[: _shared_words(a, b)])
    assert 3 * 64 - HEADER <= shared < 4 * 64 - HEADER  # blocks 1, 2, 3 (the header is not content)
    assert _content(PassPrompts(tree, 1, MAKER).build(first)[0]) == a  # the same pass key, the same text
    other_file = tree_of(tmp_path, requests, name="t.json")
    for other in (PassPrompts(tree, 2, MAKER), PassPrompts(other_file, 1, MAKER)):
        # A new marker at the very start, then other text: not even the first block is shared.
        assert _shared_words(a, _content(other.build(first)[0])) < 8


def test_the_tail_is_unique_to_the_call(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [call(0, tokens=200, ids=[1, 2]), call(1, tokens=200, ids=[1, 2])])
    prompts = PassPrompts(tree, 7, MAKER)
    a, b = (_content(prompts.build(c)[0]) for c in tree.calls)
    assert a != b
    assert sum(len(word_ids(w)) for w in a.split()[: _shared_words(a, b)]) >= 2 * 64 - HEADER


def test_the_ceiling_is_the_leading_run_of_blocks_sent_before_in_this_pass(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [
        call(0, tokens=64 * 5 + 30, ids=[1, 2, 3, 4, 5]),
        call(1, tokens=64 * 7 + 30, ids=[1, 2, 3, 4, 5, 6, 7]),  # shares 5 blocks
        call(2, tokens=64 * 4 + 30, ids=[1, 2, 8, 9]),  # shares 2
        call(3, tokens=64 * 3, ids=[1, 2, 3]),  # no room for the template's end: block 3 becomes tail text
        call(4, tokens=64 * 4 + 30, ids=[1, 2, 3, 10]),  # shares 3 (block 3 was sent whole before, by call 0)
    ])  # fmt: skip
    tracker = CeilingTracker(block_size=16)
    prompts = PassPrompts(tree, 3, MAKER)
    assert [tracker.observe("e", prompts.build(c)[0]) for c in tree.calls] == [0, 5 * 64, 2 * 64, 2 * 64, 3 * 64]
    other = PassPrompts(tree, 4, MAKER)  # another pass of the same file: a cold cache
    assert tracker.observe("e", other.build(tree.calls[1])[0]) == 0


def test_a_prompt_shorter_than_the_template_and_marker_comes_out_longer_and_says_so(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, [call(0, tokens=5, ids=[])])
    conv, _ = PassPrompts(tree, 1, MAKER).build(tree.calls[0])
    assert conv.prompt_tokens > 5 and conv.prompt_tokens == _real_tokens(conv)


def test_prompts_are_exact_and_reach_the_recorded_ceiling(tmp_path: Path) -> None:
    (tree,) = load_session_set(write_session_tree(tmp_path, parent_calls=20)).trees  # with four sub-agents
    tracker, prompts = CeilingTracker(block_size=16), PassPrompts(tree, 11, MAKER)
    chains: set[int] = set()  # every prefix of hash ids sent so far in this tree
    recorded = measured = total = 0
    for c in tree.all_calls():
        prefixes, h = [], 0
        for hid in c.hash_ids:
            h = hash((h, hid))
            prefixes.append(h)
        run = 0
        while run < len(prefixes) and prefixes[run] in chains:
            run += 1
        chains.update(prefixes)
        recorded += run * 64  # workloads/README.md: the leading run of blocks already sent, × block size
        conv, _ = prompts.build(c)
        assert conv.prompt_tokens == c.input_tokens
        measured += tracker.observe("e", conv)
        total += c.input_tokens
    assert recorded / total > 0.8
    assert abs(measured - recorded) / total < 0.01
