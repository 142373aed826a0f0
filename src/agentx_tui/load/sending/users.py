"""One user's live state: a row of the users table, whatever kind of loop the user runs.

A *user* is one of the `-u N` concurrent slots of load; it runs one *session* after another (a
synthetic agent session, one pass of a session file, one trace request). A sub-agent gets a row of
its own while it runs. The state follows the stream: `prefill` from the request's send until its
first token, `decoding` while tokens stream, then `tool` (the think or tool time before the next
call, or waiting for sub-agents), `waiting` between sessions; `paused`, `done` and `error` say so.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from agentx_tui.measure import CallTally
from agentx_tui.snapshot import UserRow, UserState


@dataclass(slots=True)
class User(CallTally):
    user: int  # the global user id (a sub-agent's is CHILD_ID_BASE and up)
    parent: int | None = None
    session: int = 0  # sessions started by this user (1-based once it has started one)
    tree: int = -1  # the global id of the session (tree) running now; a sub-agent's is its parent's
    state: UserState = "waiting"
    step: int = 0
    steps_total: int = 0
    context_tokens: int = 0
    endpoint: str = ""
    label: str = ""
    in_flight: bool = False
    retire: bool = False
    task: asyncio.Task[None] | None = None
    stop: asyncio.Event | None = None  # set when retired: a replay lets its calls on the wire finish
    # When this agent's latest call ended, and in which session tree: the next call's idle time counts
    # from it (docs/metrics.md §4, "Where the prefix went"), in the same tree only. A sub-agent starts
    # with its parent's: its first call follows the parent call that spawned it.
    previous_end: float | None = None
    previous_tree: int = -1

    def idle_before(self, sent_at: float) -> float | None:
        """How long this agent's session sat idle before a call sent at `sent_at`; None for the first
        call of a session (a trace request is a session of its own)."""
        if self.previous_end is None or self.previous_tree != self.tree:
            return None
        return max(0.0, sent_at - self.previous_end)

    def call_ended(self, ended_at: float) -> None:
        self.previous_end, self.previous_tree = ended_at, self.tree

    def decoding(self) -> None:
        """The first token of the request in flight arrived."""
        self.state = "decoding"

    def row(self) -> UserRow:
        # The row's fields are this user's attributes of the same names (`CallTally` computes its figures).
        return UserRow.model_validate(self, from_attributes=True)
