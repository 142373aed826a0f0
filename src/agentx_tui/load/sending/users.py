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

from agentx_tui.snapshot import UserRow, UserState


@dataclass(slots=True, kw_only=True)
class CallTally:
    """A row's per-call figures, as the users table shows them: a simulated user's (`User`) and a real
    agent's seen through the proxy (agentx_tui.proxy) are counted alike."""

    requests: int = 0  # calls completed
    errors: int = 0
    output_tokens: int = 0
    last_ttft: float | None = None  # of the latest call that had a first token
    decode_sum: float = 0.0
    decode_n: int = 0
    itl_sum: float = 0.0  # per-request ITL, summed for the session's mean interactivity
    itl_n: int = 0

    def count(self, output_tokens: int, ttft: float | None, decode: float | None, request_itl: float | None) -> None:
        """One completed call."""
        self.requests += 1
        self.output_tokens += output_tokens
        if ttft is not None:
            self.last_ttft = ttft
        if decode is not None:
            self.decode_sum += decode
            self.decode_n += 1
        if request_itl is not None:
            self.itl_sum += request_itl
            self.itl_n += 1

    def tallied(self) -> dict[str, float | int | None]:
        """The `UserRow` fields these figures fill."""
        return {
            "requests": self.requests,
            "errors": self.errors,
            "output_tokens": self.output_tokens,
            "last_ttft_s": self.last_ttft,
            "decode_tokens_per_s": self.decode_sum / self.decode_n if self.decode_n else None,
            "interactivity_tokens_per_s": self.itl_n / self.itl_sum if self.itl_sum > 0 else None,
        }


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

    def decoding(self) -> None:
        """The first token of the request in flight arrived."""
        self.state = "decoding"

    def row(self) -> UserRow:
        return UserRow(
            user=self.user,
            session=self.session,
            state=self.state,
            step=self.step,
            steps_total=self.steps_total,
            context_tokens=self.context_tokens,
            endpoint=self.endpoint,
            parent=self.parent,
            label=self.label,
            **self.tallied(),
        )
