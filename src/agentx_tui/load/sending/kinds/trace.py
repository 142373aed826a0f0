"""The loop of `kind: trace`: a Mooncake trace's requests, one per `run` (load/workload/trace.py).

A feeder releases the requests into a queue, at their timestamps ÷ `speed` (`timed`) or as fast as the
users take them (`closed`: at most one queued per user); each user sends the next one it gets. Each
request is one session. A worker takes every stride-th request, so the workers share the trace
without overlap. A request too long for the model's context is skipped and counted.

A timed request carries when it was due: its TTFT and E2E count from then, so a burst that waits for
a free user shows in them, and the wait is the schedule's lag (docs/metrics.md, "Honest clocks"). The
schedule runs on a clock that stands still while the load is paused: a pause is not lag.
"""

from __future__ import annotations

import asyncio
import time

from agentx_tui.load.sending.context import LoopContext, stop_task
from agentx_tui.load.sending.gates import FairQueue
from agentx_tui.load.sending.users import User
from agentx_tui.load.workload.conversation import Conversation
from agentx_tui.load.workload.trace import PreparedTrace, TraceRequest, build_request
from agentx_tui.measure import TRACE_TOO_LONG

TOO_LONG = TRACE_TOO_LONG


class TraceLoop:
    def __init__(self, workload: PreparedTrace, ctx: LoopContext) -> None:
        self.workload = workload
        self.ctx = ctx
        self.exhausted = False
        # A request and its time on the schedule's clock (None: closed mode); None: the trace has ended.
        self._queue: FairQueue[tuple[TraceRequest, float | None] | None] = FairQueue()
        self._feeder: asyncio.Task[None] | None = None
        self._feeder_row = User(user=-1)  # the feeder waits at the pause gate like a user

    def start(self) -> None:
        self._feeder = asyncio.create_task(self._feed())

    async def close(self) -> None:
        await stop_task(self._feeder)

    async def run(self, user: User) -> bool:
        item = await self._queue.get()
        if item is None:  # the trace is played to its end
            return False
        await self._send(user, *item)
        return True

    async def _send(self, user: User, req: TraceRequest, scheduled: float | None) -> None:
        ctx = self.ctx
        servers = ctx.servers
        server = servers[(req.hash_ids[0] if req.hash_ids else req.index) % len(servers)]
        conv = Conversation(server.tm)
        out = build_request(conv, req, self.workload.block_tokens, server.maker)
        user.session, user.tree, user.step, user.steps_total = req.index, req.index, 1, 1
        user.endpoint, user.context_tokens = server.url, conv.prompt_tokens
        if ctx.too_long(server, conv.prompt_tokens, out, TOO_LONG, "trace request(s) skipped"):
            return
        await ctx.pause.hold(user)
        # On the monotonic clock, a request is due at its schedule time plus every pause so far.
        due_at = None if scheduled is None else scheduled + ctx.pause.paused_s(time.monotonic())
        record, _ = await ctx.sender.send(
            server, user, conv, out, 1, temperature=self.workload.spec.temperature, due_at=due_at
        )
        ctx.session_ended("done" if record.error is None else "error", server, user.tree)

    async def _feed(self) -> None:
        ctx, spec = self.ctx, self.workload.spec.trace
        reqs = self.workload.requests
        mine = reqs[ctx.ids.offset :: ctx.ids.stride]
        timed = spec.mode == "timed"
        t0, base = self._schedule_clock(time.monotonic()), reqs[0].timestamp_s if reqs else 0.0
        sent = 0
        for req in mine:
            scheduled = None
            if timed:
                scheduled = t0 + (req.timestamp_s - base) / spec.speed
                await self._until(scheduled)
            else:
                while self._queue.qsize() > max(ctx.users_wanted, 1):
                    await asyncio.sleep(0.01)
            await ctx.pause.hold(self._feeder_row)
            if ctx.take_session() is None:  # a stop rule: no more requests start
                break
            self._queue.put_nowait((req, scheduled))
            sent += 1
        self.exhausted = True
        ctx.events.say(f"trace replay finished: {sent} of {len(mine)} requests were sent")
        for _ in range(max(ctx.users_wanted, 1) * 4):
            self._queue.put_nowait(None)

    def _schedule_clock(self, now: float) -> float:
        """The schedule's clock: `time.monotonic()` less the time spent paused."""
        return now - self.ctx.pause.paused_s(now)

    async def _until(self, scheduled: float) -> None:
        """Until the schedule's clock reaches `scheduled` (a pause holds it back)."""
        pause = self.ctx.pause
        while True:
            if pause.paused:
                await pause.hold(self._feeder_row)
            now = time.monotonic()
            delay = scheduled - self._schedule_clock(now)
            if delay <= 0:
                return
            await asyncio.sleep(delay)
