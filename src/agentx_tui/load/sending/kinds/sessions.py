"""The loop of `kind: sessions`: replaying AgentX session trees (workloads/README.md, a contract).

Timing (`replay_tree`): the parent's calls go in order, each once its recorded `think_time` (capped
by `max_think_s`) has passed since the end of the parent's previous call: never the gap between
recorded `t`s, which holds the recorded server's latency. A sub-agent starts when the parent call
before it has finished and runs its own calls the same way, in parallel with its siblings (the ones
spawned by the same call). The parent is blocked while it runs: its join call (the first parent call
recorded at or after the sub-agent's `t`, which is the sub-agent's end) waits until every sub-agent
joined there has finished *and* its own think time has passed. A sub-agent with no join call ends
the tree when it finishes. An agent counts as finished when its calls and all its own sub-agents are.

Failures (`send` returned False): a failed parent call ends the tree, cancelling the sub-agents still
running; a failed sub-agent call ends that sub-agent (and its own sub-agents) only, and the parent's
join call stops waiting for it. `stop` (a retired user) lets the calls on the wire finish, then sends
nothing more and ends every wait at once. Cancelling the task cancels everything, calls on the wire
included; no task outlives `replay_tree` (one TaskGroup holds them all). `send` should not raise; if it
does, the tree is cancelled and that exception propagates.

Under `--join midway` a user's first pass joins at a parent call drawn uniformly over those a pass from
the first would reach (before the first call too long for the model's context): the calls before it,
and the sub-agents spawned before it, are not sent; its first prompt carries the recorded context of that
call, uncached. As the harness starts each trajectory at a random turn, but without sending the turns
before. Such a pass is no whole task.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from agentx_tui.errors import WorkloadError
from agentx_tui.load.sending.context import LoopContext
from agentx_tui.load.sending.sender import ServerConnection
from agentx_tui.load.sending.users import User
from agentx_tui.load.workload.session_prompts import PassPrompts
from agentx_tui.load.workload.sessions import PreparedSessions, SessionCall, SessionSubAgent, SessionTree
from agentx_tui.measure import SESSION_CALL_TOO_LONG, Failed

Agent = SessionTree | SessionSubAgent  # the parent is the tree itself
CallSender = Callable[[Agent, SessionCall], Awaitable[bool]]  # one request; True when it succeeded
Ended = Literal["done", "error", "stopped"]
TOO_LONG = SESSION_CALL_TOO_LONG
UNREADABLE = "session_file_unreadable"  # a session the stream could not read: skipped, counted


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
    on_subagent: Callable[[SessionSubAgent, bool], None] | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    start_at: int = 0,
) -> TreeOutcome:
    """Replay `tree` through `send`; `on_subagent(sub, True/False)` marks each sub-agent's start/end.
    `start_at`: the parent call it joins at (`--join midway`): the calls before it, and the sub-agents
    spawned before it, are not sent."""
    started = clock()
    try:
        async with asyncio.TaskGroup() as group:
            run = _Run(group, send, max_think_s, stop, on_subagent, sleep, clock)
            how = await run.agent(tree, start_at)
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
        on_subagent: Callable[[SessionSubAgent, bool], None] | None,
        sleep: Callable[[float], Awaitable[object]],
        clock: Callable[[], float],
    ) -> None:
        self.group, self.send, self.max_think_s, self.stop = group, send, max_think_s, stop
        self.on_subagent, self.sleep, self.clock = on_subagent, sleep, clock
        self.calls_ok = self.calls_failed = self.subagents_started = self.subagents_done = 0
        self.stopped = False

    async def agent(self, node: Agent, start_at: int = 0) -> Literal["done", "failed", "stopped"]:
        spawns: dict[int | None, list[SessionSubAgent]] = {}
        joins: dict[int, list[SessionSubAgent]] = {}
        for sub in node.subagents:
            if start_at and (sub.spawn_after is None or sub.spawn_after < start_at):
                continue  # spawned before the call it joins at: not replayed, and nothing waits for it
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
                if i < start_at:
                    continue
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

    async def subagent(self, sub: SessionSubAgent) -> None:
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


# -- the loop: one user replaying one pass per `run` -------------------------------------------------


class SessionsLoop:
    """The loop of `kind: sessions`: each `run` replays one pass of the next session file.

    Files are taken in order and recycled (session id modulo the files); each pass gets its own
    marker (from the run's nonce and the session id), so no pass hits another's cache, in this run
    or another, whichever worker replays it. A session is read when its user takes it (the workload's
    `SessionStream`); one that cannot be read is skipped: said once, counted as `UNREADABLE` each time
    its id comes round, and the user takes the next id."""

    exhausted = False

    def __init__(self, workload: PreparedSessions, ctx: LoopContext) -> None:
        self.workload = workload
        self.ctx = ctx
        self._said: set[str] = set()  # the unreadable sessions already said
        self._reading: dict[int, asyncio.Task[SessionTree]] = {}  # by session index: one read, many waiting
        self._turn = asyncio.Lock()  # one read at a time (it holds the GIL most of the time)

    def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def run(self, user: User) -> bool:
        ctx = self.ctx
        await ctx.pause.hold(user)
        session_id = None if user.retire else ctx.take_session()
        if session_id is None:
            return False
        try:
            tree = await self._take(session_id)
        except WorkloadError as bad:
            self._skipped(bad)
            return True
        midway = ctx.settings.join == "midway" and user.session == 0
        user.session, user.tree = user.session + 1, session_id
        user.stop = asyncio.Event()
        if user.retire:
            user.stop.set()
        server = ctx.pick_server()  # the whole tree on one server: its sub-agents share the parent's cache
        pass_key = hash((ctx.settings.nonce, session_id))
        start_at = _joined_at(tree, server.max_len, random.Random(pass_key)) if midway else 0
        how = await self._pass(user, server, tree, pass_key, user.stop, start_at)
        user.stop = None
        ctx.session_ended(how, server, user.tree)
        if how == "error":
            await ctx.error_pause(user)
        return True

    async def _take(self, session_id: int) -> SessionTree:
        """The tree of `session_id`: held, or read in a thread (`WorkloadError` when it cannot be)."""
        stream = self.workload.sessions
        index = stream.index_of(session_id)
        found = stream.held(index)
        if found is not None:
            return found
        reading = self._reading.get(index)
        if reading is None:
            reading = self._reading[index] = asyncio.create_task(self._read_in_turn(index))
            reading.add_done_callback(functools.partial(self._read_done, index))
        return await asyncio.shield(reading)  # a user cancelled while waiting leaves it to the others

    async def _read_in_turn(self, index: int) -> SessionTree:
        stream = self.workload.sessions
        async with self._turn:  # the waiting ones take their turn in order, the event loop keeps sending
            found = stream.held(index)
            if found is not None:
                return found
            try:
                return stream.keep(index, await asyncio.to_thread(stream.read, index))
            except WorkloadError as bad:
                stream.refuse(index, bad)
                raise

    def _read_done(self, index: int, reading: asyncio.Task[SessionTree]) -> None:
        del self._reading[index]
        if not reading.cancelled():
            reading.exception()  # retrieved: no warning when every user waiting for it was cancelled

    def _skipped(self, bad: WorkloadError) -> None:
        now = time.monotonic()
        self.ctx.sender.sink.error(Failed(UNREADABLE, False, now, now))
        if bad.message not in self._said:
            self._said.add(bad.message)
            self.ctx.events.say(f"skipped a session that cannot be read, as often as its turn comes: {bad.message}")

    async def _pass(
        self,
        user: User,
        server: ServerConnection,
        tree: SessionTree,
        pass_key: int,
        stop: asyncio.Event,
        start_at: int = 0,
    ) -> str:
        """Replay one pass of `tree` as `user`; returns how it ended: done (joined, when it joined past its
        first call: no whole task), context, error or retired."""
        ctx = self.ctx
        temperature = self.workload.spec.temperature
        prompts = PassPrompts(tree, pass_key, server.maker)
        children: dict[int, User] = {}  # id() of a sub-agent → its row
        too_long = False
        user.label, user.step, user.steps_total, user.endpoint = tree.label, 0, len(tree.calls), server.url

        async def send(agent: Agent, call: SessionCall) -> bool:
            nonlocal too_long
            row = user if agent is tree else children[id(agent)]
            conv, out = prompts.build(call)
            row.step, row.context_tokens = call.index + 1, conv.prompt_tokens
            if ctx.too_long(server, conv.prompt_tokens, out, TOO_LONG, "session call(s) ended their session"):
                too_long = True
                return False
            await ctx.pause.hold(row)
            record, _ = await ctx.sender.send(server, row, conv, out, call.seq + 1, temperature=temperature)
            if record.error is None:
                row.state = "tool"  # the recorded think time until its next call
            return record.error is None

        def subagent(sub: SessionSubAgent, started: bool) -> None:
            if started:
                children[id(sub)] = ctx.add_child(user, server, label=sub.label, steps=len(sub.calls))
            else:
                ctx.drop_child(children.pop(id(sub)))

        try:
            max_think = ctx.settings.max_think_s
            outcome = await replay_tree(
                tree, send, max_think_s=max_think, stop=stop, on_subagent=subagent, sleep=ctx.idle.sleep,
                clock=ctx.idle.now, start_at=start_at,
            )  # fmt: skip
        finally:
            for child in children.values():
                ctx.drop_child(child)
        if outcome.ended == "stopped":
            return "retired"
        if outcome.ended == "error":
            return "context" if too_long else "error"
        return "joined" if start_at else "done"


def _joined_at(tree: SessionTree, max_len: int | None, rng: random.Random) -> int:
    """The parent call a pass joined midway starts at (`--join midway`): drawn uniformly over the calls a
    pass from the first would reach, those before the first that would not fit the model's context."""
    reach = len(tree.calls)
    if max_len is not None:
        reach = next((c.index for c in tree.calls if c.input_tokens + c.output_tokens > max_len), reach)
    return rng.randrange(reach) if reach > 1 else 0
