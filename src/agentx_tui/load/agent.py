"""One simulated user: a loop of agent sessions whose context grows every step (DESIGN §7).

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
from typing import TYPE_CHECKING

from agentx_tui.load.conversation import Conversation, Segment
from agentx_tui.telemetry.snapshot import SessionRow, SessionState

if TYPE_CHECKING:
    from agentx_tui.load.core import Core, Endpoint
    from agentx_tui.load.workload import Workload

SHARED_KEY = 0x51A7ED


@dataclass
class Slot:
    user: int
    parent: int | None = None
    session: int = 0
    state: SessionState = "waiting"
    step: int = 0
    steps_total: int = 0
    context_tokens: int = 0
    last_ttft: float | None = None
    decode_sum: float = 0.0
    decode_n: int = 0
    output_tokens: int = 0
    requests: int = 0
    errors: int = 0
    endpoint: str = ""
    in_flight: bool = False
    retire: bool = False
    task: asyncio.Task[None] | None = None

    def row(self) -> SessionRow:
        return SessionRow(
            user=self.user,
            session=self.session,
            state=self.state,
            step=self.step,
            steps_total=self.steps_total,
            context_tokens=self.context_tokens,
            last_ttft_s=self.last_ttft,
            decode_tokens_per_s=self.decode_sum / self.decode_n if self.decode_n else None,
            output_tokens=self.output_tokens,
            requests=self.requests,
            errors=self.errors,
            endpoint=self.endpoint,
            parent=self.parent,
        )


@dataclass(frozen=True)
class Opening:
    """The first two messages' content of a session, shared by its sub-agents."""

    shared: Segment | None
    unique: Segment | None


def open_session(ep: Endpoint, w: Workload, rng: random.Random, core: Core) -> Opening:
    shared_tokens = core.shared_prefix_tokens(w)
    shared = None
    if shared_tokens > 0:
        text, tokens = ep.maker.text(SHARED_KEY, shared_tokens)
        shared = Segment(SHARED_KEY, text, tokens)
    unique = None
    n = w.unique_prefix_tokens.draw_int(rng, floor=0)
    if n > 0:
        key = new_key(rng)
        text, tokens = ep.maker.text(key, n)
        unique = Segment(key, text, tokens)
    return Opening(shared, unique)


def _conversation(ep: Endpoint, opening: Opening, first: Segment) -> Conversation:
    conv = Conversation(ep.tm)
    if opening.shared is not None:
        conv.add("system", [opening.shared])
    conv.add("user", [s for s in (opening.unique, first) if s is not None])
    return conv


def new_key(rng: random.Random) -> int:
    """Keys of unique text: drawn from the session's seeded generator, so a seed replays the same text."""
    return rng.getrandbits(60) + (1 << 61)


def _segment(ep: Endpoint, rng: random.Random, tokens: int) -> Segment:
    key = new_key(rng)
    text, real = ep.maker.text(key, tokens)
    return Segment(key, text, real)


async def run_session(
    core: Core,
    slot: Slot,
    ep: Endpoint,
    w: Workload,
    rng: random.Random,
    *,
    opening: Opening | None = None,
    steps: int | None = None,
) -> str:
    """Run one session to its end; returns how it ended: done, context, error or retired."""
    child = opening is not None
    if opening is None:
        opening = open_session(ep, w, rng, core)
    first_dist = w.subagents.task_tokens if (child and w.subagents) else w.first_message_tokens
    conv = _conversation(ep, opening, _segment(ep, rng, first_dist.draw_int(rng)))
    slot.steps_total = steps if steps is not None else w.steps.draw_int(rng)
    slot.step = 0
    slot.endpoint = ep.target.url
    for step in range(1, slot.steps_total + 1):
        out = w.output_tokens.draw_int(rng)
        slot.context_tokens = conv.prompt_tokens
        if ep.max_len is not None and conv.prompt_tokens + out > ep.max_len:
            return "context"
        if slot.retire:
            return "retired"
        await core.gate(slot)
        slot.step = step
        record, text = await core.send(ep, slot, conv, out, step, w)
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
            conv.add("assistant", [_segment(ep, rng, out)])
        if step == slot.steps_total or slot.retire:
            break
        sub = w.subagents
        if sub is not None and not child and step % sub.every_steps == 0:
            slot.state = "tool"
            await core.run_children(slot, ep, w, opening, sub.children.draw_int(rng), rng)
        else:
            slot.state = "tool"
            await asyncio.sleep(w.tool_latency_s.draw(rng))
        conv.add("user", [_segment(ep, rng, w.tool_result_tokens.draw_int(rng))])
    slot.context_tokens = conv.prompt_tokens
    return "retired" if slot.retire else "done"
