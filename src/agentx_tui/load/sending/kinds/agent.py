"""The loop of `kind: agent`: one synthetic agent session per `run` (load/workload/agent.py has its shape).

Each step sends the whole history, appends the answer, waits the tool's latency and appends the tool
result. A session ends after its drawn step count, or cleanly when the next step would not fit the
model's context. Every `every_steps` steps a parent spawns sub-agents, child sessions that open with
its prefix; the parent waits for them as for a tool. With Poisson arrival, a user waits for the next
arrival before it starts a session.

Under `--join midway` a user's first session joins at a stage drawn at random: its step count is drawn
as usual, then a number of its steps, uniform over the stages it would reach (0 … steps − 1, fewer
where the model's context would end it sooner), is built into the history without being sent (their
answers and tool results), and the session sends from the step after. A load that users join (each
sweep step's new users) then carries the context lengths of a load that has run a while, not every new
user's short first requests. Such a session is no whole task: its end leaves the task figures
(measure/tasks.py), as a retired user's does.
"""

from __future__ import annotations

import asyncio
import random

from agentx_tui.load.sending.context import LoopContext, stop_task
from agentx_tui.load.sending.gates import FairQueue
from agentx_tui.load.sending.sender import ServerConnection
from agentx_tui.load.sending.users import User
from agentx_tui.load.workload.agent import (
    AgentSpec,
    Opening,
    PreparedAgent,
    first_conversation,
    new_key,
    opening,
    segment,
)
from agentx_tui.load.workload.conversation import Conversation, Segment
from agentx_tui.measure import AGENT_STEP_TOO_LONG, CONTEXT_OVERFLOW

_ARRIVAL_SALT = 0xA441


class AgentLoop:
    def __init__(self, workload: PreparedAgent, ctx: LoopContext) -> None:
        self.w: AgentSpec = workload.spec
        self.ctx = ctx
        # Drawn once for the run: every session must send the very same shared text.
        self.shared_tokens = self.w.shared_prefix_tokens.draw_int(random.Random(ctx.settings.seed), floor=0)
        self._arrivals: FairQueue[None] | None = None
        self._feeder: asyncio.Task[None] | None = None

    exhausted = False

    def start(self) -> None:
        if self.w.arrival.mode == "poisson":
            self._arrivals = FairQueue()
            self._feeder = asyncio.create_task(self._feed_arrivals(self._arrivals))

    async def close(self) -> None:
        await stop_task(self._feeder)

    async def run(self, user: User) -> bool:
        if self._arrivals is not None:
            await self._arrivals.get()
        await self.ctx.pause.hold(user)
        session_id = None if user.retire else self.ctx.take_session()
        if session_id is None:  # the stop rule may have been reached while waiting
            return False
        midway = self.ctx.settings.join == "midway" and user.session == 0
        user.session, user.tree = user.session + 1, session_id
        server = self.ctx.pick_server()
        rng = random.Random(hash((self.ctx.settings.seed, session_id)))
        how = await self._session(user, server, rng, midway=midway)
        self.ctx.session_ended(how, server, user.tree)
        if how == "error" or (how == "context" and user.step == 0):
            await self.ctx.error_pause(user)
        return True

    async def _session(
        self,
        user: User,
        server: ServerConnection,
        rng: random.Random,
        *,
        start: Opening | None = None,
        steps: int | None = None,
        midway: bool = False,
    ) -> str:
        """Run one session (or, given the parent's `start`, one sub-agent) to its end; returns how it
        ended: done (joined, when it joined past its first step: no whole task), context, error or retired.
        `midway`: it joins at a stage drawn at random."""
        w, ctx = self.w, self.ctx
        child = start is not None
        if start is None:
            start = opening(server.maker, w, rng, self.shared_tokens)
        first_dist = w.subagents.task_tokens if (child and w.subagents) else w.first_message_tokens
        conv = first_conversation(server.maker, start, segment(server.maker, rng, first_dist.draw_int(rng)))
        user.steps_total = steps if steps is not None else w.steps.draw_int(rng)
        user.step = 0
        user.endpoint = server.url
        first = self._join_midway(conv, server, rng, user.steps_total) + 1 if midway else 1
        for step in range(first, user.steps_total + 1):
            out = w.output_tokens.draw_int(rng)
            user.context_tokens = conv.prompt_tokens
            if server.max_len is not None and conv.prompt_tokens + out > server.max_len:
                ctx.not_sent(AGENT_STEP_TOO_LONG)  # the session ends cleanly; the step is an overflow still
                return "context"
            if user.retire:
                return "retired"
            await ctx.pause.hold(user)
            user.step = step
            record, text = await ctx.sender.send(
                server, user, conv, out, step, temperature=w.temperature, echo=w.history == "echo"
            )
            if record.error == CONTEXT_OVERFLOW:
                return "context"
            if record.error is not None:
                return "error"
            if w.history == "echo":
                # The echoed text's token count is known only from the next prompt: correct by what the
                # server reported for this one (the error of the previous echoed answer).
                if record.prompt_tokens is not None and record.expected_prompt_tokens is not None:
                    conv.adjust(record.prompt_tokens - record.expected_prompt_tokens)
                conv.add("assistant", [Segment(new_key(rng), text, record.output_tokens or out)])
            else:
                conv.add("assistant", [segment(server.maker, rng, out)])
            if step == user.steps_total or user.retire:
                break
            user.state = "tool"
            sub = w.subagents
            if sub is not None and not child and step % sub.every_steps == 0:
                await self._children(user, server, start, sub.children.draw_int(rng), rng)
            else:
                await ctx.think(w.tool_latency_s.draw(rng))
            conv.add("user", [segment(server.maker, rng, w.tool_result_tokens.draw_int(rng))])
        user.context_tokens = conv.prompt_tokens
        return "retired" if user.retire else "joined" if first > 1 else "done"

    def _join_midway(self, conv: Conversation, server: ServerConnection, rng: random.Random, steps: int) -> int:
        """Build a drawn number of the session's first steps into `conv` without sending them (module
        docstring); how many. The draw is uniform over the stages the session would reach sending from
        its first step: 0 … steps − 1 built, fewer where the model's context would end it sooner (the
        next step's longest answer must still fit), so a session joins where it could have been."""
        w, tm = self.w, conv.tm
        room = None if server.max_len is None else server.max_len - w.output_tokens.upper
        # Each step's sizes and text keys first (cheap): which stages fit decides the draw.
        fitting: list[tuple[tuple[int, int], tuple[int, int]]] = []
        prompt = conv.prompt_tokens
        for _ in range(steps - 1):
            answer, result = (
                (new_key(rng), w.output_tokens.draw_int(rng)),
                (new_key(rng), w.tool_result_tokens.draw_int(rng)),
            )
            prompt += tm.message_tokens("assistant", answer[1], first=False)
            prompt += tm.message_tokens("user", result[1], first=False)
            if room is not None and prompt > room:
                break
            fitting.append((answer, result))
        built = rng.randrange(len(fitting) + 1)
        for answer, result in fitting[:built]:
            conv.add("assistant", [Segment(answer[0], *server.maker.text(*answer))])
            conv.add("user", [Segment(result[0], *server.maker.text(*result))])
        return built

    async def _children(
        self, parent: User, server: ServerConnection, start: Opening, count: int, rng: random.Random
    ) -> None:
        """Sub-agents: child sessions that open with the parent's prefix; the parent waits for them all."""
        sub = self.w.subagents
        if sub is None or count <= 0:
            return
        children = [self.ctx.add_child(parent, server) for _ in range(count)]

        async def one(child: User, seed: int) -> None:
            crng = random.Random(seed)
            try:
                steps = sub.steps.draw_int(crng)
                how = await self._session(child, server, crng, start=start, steps=steps)
                self.ctx.session_ended(how, server)
            finally:
                self.ctx.drop_child(child)

        await asyncio.gather(*(one(c, rng.getrandbits(63)) for c in children))

    async def _feed_arrivals(self, queue: FairQueue[None]) -> None:
        ids = self.ctx.ids
        rng = random.Random(self.ctx.settings.seed ^ _ARRIVAL_SALT ^ ids.offset)
        rate = (self.w.arrival.rate_per_s or 1.0) / ids.stride  # each worker takes its share
        while True:
            await asyncio.sleep(rng.expovariate(rate))
            queue.put_nowait(None)
