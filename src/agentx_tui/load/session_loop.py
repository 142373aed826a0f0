"""One user replaying one AgentX agent session (workloads/README.md): the driver's side of a replay.

`session_replay.replay_tree` decides when each call goes; this module sends them through the core:
the prompt of each call (one pass of the file, with its own marker), the users-table rows of the
parent and its sub-agents, calls too long for the model's context, and how the session ended.
"""

from __future__ import annotations

import asyncio
import time

from agentx_tui.load.core import Core
from agentx_tui.load.session_replay import Agent, PassPrompts, replay_tree
from agentx_tui.load.sessions import SessionCall, SessionTree, SubAgent
from agentx_tui.load.slot import Slot
from agentx_tui.load.stats import Failed
from agentx_tui.load.workload import Workload

TOO_LONG = "session_call_too_long"


async def run_tree(core: Core, slot: Slot, tree: SessionTree, pass_key: int, w: Workload, stop: asyncio.Event) -> str:
    """Replay one pass of `tree` as `slot`; returns how it ended: done, context, error or retired."""
    server = core.pick_server()  # the whole tree on one server: its sub-agents share the parent's cache
    prompts = PassPrompts(tree, pass_key, server.maker)
    children: dict[int, Slot] = {}  # sub-agent id → its row
    too_long = False
    slot.label, slot.step, slot.steps_total, slot.endpoint = tree.label, 0, len(tree.calls), server.url

    async def send(agent: Agent, call: SessionCall) -> bool:
        nonlocal too_long
        row = slot if agent is tree else children[id(agent)]
        conv, out = prompts.build(call)
        row.step, row.context_tokens = call.index + 1, conv.prompt_tokens
        if server.max_len is not None and conv.prompt_tokens + out > server.max_len:
            too_long = True
            now = time.monotonic()
            core.sink.error(Failed(TOO_LONG, False, now, now))
            limit = server.max_len
            core.event(
                TOO_LONG,
                lambda n: (
                    f"{n} session call(s) longer than the model's context ({limit} tokens) ended "
                    "their session; lower --scale to fit them"
                ),
            )
            return False
        await core.gate(row)
        record, _ = await core.send(server, row, conv, out, call.seq + 1, w)
        if record.error is None:
            row.state = "tool"  # the recorded think time until its next call
        return record.error is None

    def subagent(sub: SubAgent, started: bool) -> None:
        if started:
            child = Slot(user=core.new_child_id(), parent=slot.user, session=slot.session, endpoint=server.url)
            child.label, child.steps_total = sub.label, len(sub.calls)
            children[id(sub)] = child
            core.children[child.user] = child
        else:
            child = children.pop(id(sub))
            core.children.pop(child.user, None)

    try:
        outcome = await replay_tree(tree, send, max_think_s=core.max_think_s, stop=stop, on_subagent=subagent)
    finally:
        for child in children.values():
            core.children.pop(child.user, None)
    if outcome.ended == "stopped":
        return "retired"
    if outcome.ended == "error":
        return "context" if too_long else "error"
    return "done"
