"""Replaying one agent-session tree (workloads/README.md, a contract): when each call goes, and its prompt text.

Timing (`replay_tree`): the parent's calls go in order, each once its recorded `think_time` (capped
by `max_think_s`) has passed since the end of the parent's previous call: never the gap between
recorded `t`s, which holds the recorded server's latency. A sub-agent starts when the parent call
before it has finished and runs its own calls the same way, in parallel with the parent and its
siblings. Its join call (the first parent call recorded at or after its end) waits until it has
finished *and* its own think time has passed; parent calls recorded during its span do not wait. A
sub-agent with no join call runs in the background and the tree ends when it does. An agent counts
as finished when its calls and all its own sub-agents are.

Failures (`send` returned False): a failed parent call ends the tree, cancelling the sub-agents still
running; a failed sub-agent call ends that sub-agent (and its own sub-agents) only, and the parent's
join call stops waiting for it. `stop` (a retired user) lets the calls on the wire finish, then sends
nothing more and ends every wait at once. Cancelling the task cancels everything, calls on the wire
included; no task outlives `replay_tree` (one TaskGroup holds them all). `send` should not raise; if it
does, the tree is cancelled and that exception propagates.

Prompts (`PassPrompts`): one user message per call, laid out in prompt-token positions, header
included (the recorded blocks covered the whole prompt, template and all):
    [chat header][marker of this pass][block 0][block 1]...[block k-1][tail of this call][trailer+gen]
Block i covers positions ⌊i·b⌋ to ⌊(i+1)·b⌋ (b = the scaled block size), so at scale 1 the blocks
sit exactly where the recorded ones did and a server's 16-token blocks line up with them; the header
and marker take the front of the first block. Equal hash ids give byte-identical text within a pass;
a fresh pass (a recycled file, or the same file replayed by two users) gets a new marker and new
block text, so it shares no cache with any other pass. The prompt is exactly `in` tokens: when the
template's trailer and generation prompt do not fit after the last whole block, the last blocks are
left out (their tokens become tail text) rather than shortened, so a block is always either whole and
shared or not there. Only an `in` smaller than the template and marker themselves comes out longer
(`Conversation.prompt_tokens` says by how much).
"""

from __future__ import annotations

import asyncio
import bisect
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from agentx_tui.load.conversation import Conversation, Segment
from agentx_tui.load.sessions import SessionCall, SessionTree, SubAgent
from agentx_tui.load.textgen import TextMaker

Agent = SessionTree | SubAgent  # the parent is the tree itself
CallSender = Callable[[Agent, SessionCall], Awaitable[bool]]  # one request; True when it succeeded
Ended = Literal["done", "error", "stopped"]

_MARKER, _BLOCK, _TAIL = 0x3A55_0001, 0x3A55_0002, 0x3A55_0003
_MARKER_BITS = 48  # a marker tells this many bits' worth of passes apart
_MIN_CACHE = 256


@dataclass(frozen=True, slots=True)
class TreeOutcome:
    ended: Ended  # done: every parent call went well; error: a parent call failed; stopped: by `stop`
    calls_ok: int
    calls_failed: int
    subagents_started: int
    subagents_done: int  # ran all their calls; the others were cut short (a failure, or `stop`)
    elapsed_s: float


async def replay_tree(
    tree: SessionTree,
    send: CallSender,
    *,
    max_think_s: float | None = None,
    stop: asyncio.Event | None = None,
    on_subagent: Callable[[SubAgent, bool], None] | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> TreeOutcome:
    """Replay `tree` through `send`; `on_subagent(sub, True/False)` marks each sub-agent's start/end."""
    started = clock()
    try:
        async with asyncio.TaskGroup() as group:
            run = _Run(group, send, max_think_s, stop, on_subagent, sleep, clock)
            how = await run.agent(tree)
    except BaseExceptionGroup as errors:
        raise _first(errors) from None
    return TreeOutcome(
        ended="error" if how == "failed" else "stopped" if run.stopped else "done",
        calls_ok=run.calls_ok,
        calls_failed=run.calls_failed,
        subagents_started=run.subagents_started,
        subagents_done=run.subagents_done,
        elapsed_s=clock() - started,
    )


class _Run:
    def __init__(
        self,
        group: asyncio.TaskGroup,
        send: CallSender,
        max_think_s: float | None,
        stop: asyncio.Event | None,
        on_subagent: Callable[[SubAgent, bool], None] | None,
        sleep: Callable[[float], Awaitable[object]],
        clock: Callable[[], float],
    ) -> None:
        self.group, self.send, self.max_think_s, self.stop = group, send, max_think_s, stop
        self.on_subagent, self.sleep, self.clock = on_subagent, sleep, clock
        self.calls_ok = self.calls_failed = self.subagents_started = self.subagents_done = 0
        self.stopped = False

    async def agent(self, node: Agent) -> Literal["done", "failed", "stopped"]:
        spawns: dict[int | None, list[SubAgent]] = {}
        joins: dict[int, list[SubAgent]] = {}
        for sub in node.subagents:
            spawns.setdefault(sub.spawn_after, []).append(sub)
            if sub.join_at is not None:
                joins.setdefault(sub.join_at, []).append(sub)
        children: dict[int, asyncio.Task[None]] = {}  # by id() of the sub-agent

        def spawn(after: int | None) -> None:
            for sub in spawns.get(after, ()):
                children[id(sub)] = self.group.create_task(self.subagent(sub))

        how: Literal["done", "failed", "stopped"] = "done"
        try:
            spawn(None)
            last_end = self.clock()  # the first call's think time counts from the agent's start
            for i, call in enumerate(node.calls):
                waits = [children[id(sub)] for sub in joins.get(i, ())]
                think = call.think_time if self.max_think_s is None else min(call.think_time, self.max_think_s)
                if not await self._hold(waits, last_end + max(think, 0.0)):
                    how = "stopped"
                    break
                sent = await self.send(node, call)
                last_end = self.clock()
                if not sent:
                    self.calls_failed += 1
                    how = "failed"
                    break
                self.calls_ok += 1
                spawn(i)
            if how == "failed":
                for task in children.values():
                    task.cancel()
            if children:  # background sub-agents (and stopped ones finishing their calls) end the agent
                await asyncio.wait(children.values())
            return how
        finally:
            for task in children.values():  # only does something when this agent itself was cancelled
                task.cancel()

    async def subagent(self, sub: SubAgent) -> None:
        self.subagents_started += 1
        if self.on_subagent is not None:
            self.on_subagent(sub, True)
        try:
            if await self.agent(sub) == "done":
                self.subagents_done += 1
        finally:
            if self.on_subagent is not None:
                self.on_subagent(sub, False)

    async def _hold(self, waits: Sequence[asyncio.Task[None]], deadline: float) -> bool:
        """Wait for `waits`, then until `deadline`; False when `stop` came first."""
        if self.stop is not None and self.stop.is_set():
            self.stopped = True
            return False
        if not waits and deadline <= self.clock():
            return True
        if self.stop is None:
            await self._wait(waits, deadline)
            return True
        # Race the wait against `stop`; both tasks live in the group, which awaits the cancelled one.
        wait = self.group.create_task(self._wait(waits, deadline))
        halt = self.group.create_task(self.stop.wait())
        try:
            await asyncio.wait((wait, halt), return_when=asyncio.FIRST_COMPLETED)
        finally:
            wait.cancel()
            halt.cancel()
        if self.stop.is_set():
            self.stopped = True
            return False
        return True

    async def _wait(self, waits: Sequence[asyncio.Task[None]], deadline: float) -> None:
        if waits:
            await asyncio.wait(waits)
        delay = deadline - self.clock()
        if delay > 0:
            await self.sleep(delay)


def _first(errors: BaseExceptionGroup[BaseException]) -> BaseException:
    error: BaseException = errors
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


# -- prompt text -----------------------------------------------------------------------------------------


class PassPrompts:
    """The prompts of one pass of `tree` for one model (`maker`); `pass_key` must be new for each pass.

    Block text is kept in two generations of about one prompt's blocks each (like the CeilingTracker's
    points), so the blocks a call repeats from the previous ones cost a dictionary lookup, not new
    text, while memory stays about two prompts' worth per pass."""

    def __init__(self, tree: SessionTree, pass_key: int, maker: TextMaker) -> None:
        self.tree, self.pass_key, self.maker = tree, pass_key, maker
        tm = maker.model
        self._head = tm.header_tokens("user", first=True)
        self._after = tm.message_tokens("user", 0, first=True) - self._head + tm.generation_prompt
        self._marker = _marker_segment(maker, hash((_MARKER, tree.key, pass_key)))
        self._content_start = self._head + self._marker.tokens
        # Block i covers prompt positions bounds[i] to bounds[i + 1].
        self._bounds = [math.floor(i * tree.block_tokens) for i in range(tree.max_blocks + 1)]
        self._generation = max(_MIN_CACHE, tree.max_blocks)
        self._newer: dict[int, tuple[int, Segment]] = {}  # hash id: (tokens asked for, its block)
        self._older: dict[int, tuple[int, Segment]] = {}

    def build(self, call: SessionCall) -> tuple[Conversation, int]:
        """The call's conversation (one user message, `call.input_tokens` long) and its output tokens."""
        end = call.input_tokens - self._after  # where the content must end, in prompt positions
        ids, bounds, start = call.hash_ids, self._bounds, self._content_start
        # The most leading blocks that fit whole: the rest of the prompt is the call's own tail.
        k = max(bisect.bisect_right(bounds, end, 0, len(ids) + 1) - 1, 0)
        segments = [self._marker]
        for i in range(k):
            low, high = bounds[i], bounds[i + 1]
            if low < start:  # the header and marker take the front of the first block(s)
                low = start
                if high <= low:
                    continue
            found = self._newer.get(ids[i])  # the common case, inline: a block the last prompts had
            if found is not None and found[0] == high - low:
                segments.append(found[1])
            else:
                segments.append(self._block_segment(ids[i], high - low))
        tail = end - max(bounds[k], start)
        if tail > 0:
            key = hash((_TAIL, self.tree.key, self.pass_key, call.seq))
            text, real = self.maker.text(key, tail)
            segments.append(Segment(key, text, real))
        conv = Conversation(self.maker.model)
        conv.add("user", segments)
        return conv, call.output_tokens

    def _block_segment(self, hash_id: int, tokens: int) -> Segment:
        found = self._newer.get(hash_id) or self._older.get(hash_id)
        if found is not None and found[0] == tokens:
            seg = found[1]
        else:  # new, or the id met at another position (not in the shipped files): text of its size
            key = hash((_BLOCK, self.tree.key, self.pass_key, hash_id))
            text, real = self.maker.text(key, tokens)
            seg = Segment(key, text, real)
        if len(self._newer) >= self._generation:
            self._newer, self._older = {}, self._newer
        self._newer[hash_id] = (tokens, seg)
        return seg


def _marker_segment(maker: TextMaker, key: int) -> Segment:
    """A few of the cheapest pool words spelling `key` in base (how many there are): a pass's marker."""
    tm = maker.model
    cheapest = min(tm.costs)
    digits = [(w, c) for w, c in zip(tm.words, tm.costs, strict=True) if c == cheapest]
    if len(digits) < 2:  # a degenerate pool: spell with every word, whatever each costs
        digits = list(zip(tm.words, tm.costs, strict=True))
    count = max(4, math.ceil(_MARKER_BITS / math.log2(max(len(digits), 2))))
    value = key % len(digits) ** count
    words: list[str] = []
    tokens = 0
    for _ in range(count):
        value, digit = divmod(value, len(digits))
        word, cost = digits[digit]
        words.append(word)
        tokens += cost
    return Segment(key, "".join(words), tokens)
