"""One simulated user: a loop of agent sessions whose context grows every step (workloads/README.md).

A session opens with the shared system prompt and a user message (the session's unique prefix + its
first message), then repeats: send the whole history, append the answer, wait the tool's latency,
append the tool result. It ends after its drawn step count, or cleanly when the next step would not
fit the model's context. Sub-agents are child loops that open with the same shared prompt and the
parent's unique prefix, so they hit the parent's cached blocks; the parent waits for them as for a tool.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from agentx_tui.load.sending.sender import Core, ServerConnection
from agentx_tui.load.sending.users import User
from agentx_tui.load.workload.conversation import Conversation, Segment
from agentx_tui.load.workload.spec import Workload

SHARED_KEY = 0x51A7ED


@dataclass(frozen=True)
class Opening:
    """The first two messages' content of a session, shared by its sub-agents."""

    shared: Segment | None
    unique: Segment | None


def open_session(server: ServerConnection, w: Workload, rng: random.Random, core: Core) -> Opening:
    shared_tokens = core.shared_prefix_tokens(w)
    shared = None
    if shared_tokens > 0:
        text, tokens = server.maker.text(SHARED_KEY, shared_tokens)
        shared = Segment(SHARED_KEY, text, tokens)
    unique = None
    n = w.unique_prefix_tokens.draw_int(rng, floor=0)
    if n > 0:
        key = new_key(rng)
        text, tokens = server.maker.text(key, n)
        unique = Segment(key, text, tokens)
    return Opening(shared, unique)


def _conversation(server: ServerConnection, opening: Opening, first: Segment) -> Conversation:
    conv = Conversation(server.tm)
    if opening.shared is not None:
        conv.add("system", [opening.shared])
    conv.add("user", [s for s in (opening.unique, first) if s is not None])
    return conv


def new_key(rng: random.Random) -> int:
    """Keys of unique text: drawn from the session's seeded generator, so a seed replays the same text."""
    return rng.getrandbits(60) + (1 << 61)


def _segment(server: ServerConnection, rng: random.Random, tokens: int) -> Segment:
    key = new_key(rng)
    text, real = server.maker.text(key, tokens)
    return Segment(key, text, real)


async def run_session(
    core: Core,
    slot: User,
    server: ServerConnection,
    w: Workload,
    rng: random.Random,
    *,
    opening: Opening | None = None,
    steps: int | None = None,
) -> str:
    """Run one session to its end; returns how it ended: done, context, error or retired."""
    child = opening is not None
    if opening is None:
        opening = open_session(server, w, rng, core)
    first_dist = w.subagents.task_tokens if (child and w.subagents) else w.first_message_tokens
    conv = _conversation(server, opening, _segment(server, rng, first_dist.draw_int(rng)))
    slot.steps_total = steps if steps is not None else w.steps.draw_int(rng)
    slot.step = 0
    slot.endpoint = server.url
    for step in range(1, slot.steps_total + 1):
        out = w.output_tokens.draw_int(rng)
        slot.context_tokens = conv.prompt_tokens
        if server.max_len is not None and conv.prompt_tokens + out > server.max_len:
            return "context"
        if slot.retire:
            return "retired"
        await core.gate(slot)
        slot.step = step
        record, text = await core.send(server, slot, conv, out, step, w)
        if record.error == "context_overflow":
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
            conv.add("assistant", [_segment(server, rng, out)])
        if step == slot.steps_total or slot.retire:
            break
        sub = w.subagents
        if sub is not None and not child and step % sub.every_steps == 0:
            slot.state = "tool"
            await run_children(core, slot, server, w, opening, sub.children.draw_int(rng), rng)
        else:
            slot.state = "tool"
            await core.think(w.tool_latency_s.draw(rng))
        conv.add("user", [_segment(server, rng, w.tool_result_tokens.draw_int(rng))])
    slot.context_tokens = conv.prompt_tokens
    return "retired" if slot.retire else "done"


async def run_children(
    core: Core, parent: User, server: ServerConnection, w: Workload, opening: Opening, count: int, rng: random.Random
) -> None:
    """Sub-agents: child sessions that open with the parent's prefix; the parent waits for them all."""
    sub = w.subagents
    if sub is None or count <= 0:
        return
    slots = []
    for _ in range(count):
        child = User(user=core.new_child_id(), parent=parent.user, session=1, endpoint=server.url)
        core.children[child.user] = child
        slots.append(child)

    async def one(child: User, seed: int) -> None:
        crng = random.Random(seed)
        try:
            how = await run_session(core, child, server, w, crng, opening=opening, steps=sub.steps.draw_int(crng))
            core.session_ended(how, server)
        finally:
            core.children.pop(child.user, None)

    await asyncio.gather(*(one(c, rng.getrandbits(63)) for c in slots))
