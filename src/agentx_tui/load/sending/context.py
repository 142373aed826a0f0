"""What every kind's loop may use (`LoopContext`): the servers, the sender, the pause, think time, the
session ids and stop rules, sub-agents' rows, and the event log. The driver owns it; loops only call it.

Sessions are spread round-robin over the servers and stay on theirs (each keeps its prefix cache on
one server); sub-agents go where their parent is. Session ids are global: a driver in a worker takes
every stride-th one (`IdStride`), so one and N workers start the very same sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass

from agentx_tui.load.sending.gates import PauseGate
from agentx_tui.load.sending.idle import IdleCap
from agentx_tui.load.sending.sender import EventThrottle, RequestSender, ServerConnection
from agentx_tui.load.sending.settings import IdStride, LoadSettings
from agentx_tui.load.sending.users import User
from agentx_tui.load.workload.base import StopRule
from agentx_tui.measure import Failed
from agentx_tui.snapshot import CHILD_ID_BASE

ERROR_PAUSE_S = 1.0


@dataclass
class LoopContext:
    settings: LoadSettings
    ids: IdStride
    sender: RequestSender
    pause: PauseGate
    events: EventThrottle

    def __post_init__(self) -> None:
        self.servers: list[ServerConnection] = []
        self.children: dict[int, User] = {}  # the rows of running sub-agents, by their id
        self.stop_rule = StopRule()  # the current workload's own stop rule
        self.started_at: float | None = None
        self.users_wanted = 0  # the driver's users now (a closed-loop trace keeps this many queued)
        self._rr = 0
        self._next_child = CHILD_ID_BASE
        self._session_seq = 0  # local counter of the session ids handed out
        self._sessions_started = 0
        # Think times, with the whole system's idle gaps capped under --agentx (load/sending/idle.py).
        self.idle = IdleCap(self.settings.idle_cap_s, lambda: self.sender.in_flight, on_cap=self._idle_capped)
        self.sender.on_idle = self.idle.system_idle

    # -- servers and sending ------------------------------------------------------------------
    def pick_server(self) -> ServerConnection:
        server = self.servers[self._rr % len(self.servers)]
        self._rr += 1
        return server

    async def think(self, seconds: float) -> None:
        """Wait a think (tool) time, capped by --max-think; under --agentx it ends early when the whole
        system has been idle for the idle cap (load/sending/idle.py)."""
        cap = self.settings.max_think_s
        if cap is not None:
            seconds = min(seconds, cap)
        if seconds > 0:
            await self.idle.sleep(seconds)

    def _idle_capped(self, skipped_s: float) -> None:
        cap = self.settings.idle_cap_s
        self.events.count(
            "idle_cap",
            lambda n: f"{n} whole-system idle gap(s) capped at {cap:g} s (--agentx), the latest by {skipped_s:.1f} s",
        )

    # -- sessions -----------------------------------------------------------------------------
    def next_session_id(self) -> int | None:
        """The next global session id this driver may start; None when `--sessions` is used up."""
        session_id = self.ids.id(self._session_seq)
        budget = self.settings.sessions
        return None if budget is not None and session_id >= budget else session_id

    @property
    def sessions_taken(self) -> int:
        """How many session ids this driver has handed out (the next is `ids.id(sessions_taken)`)."""
        return self._session_seq

    def stop_rule_hit(self) -> bool:
        """No new session may start: `--sessions` is used up, or the workload's own stop rule holds."""
        if self.next_session_id() is None:
            return True
        stop = self.stop_rule
        if stop.sessions is not None and self._sessions_started >= stop.sessions:
            return True
        return (
            stop.duration_s is not None
            and self.started_at is not None
            and time.monotonic() - self.started_at >= stop.duration_s
        )

    def take_session(self) -> int | None:
        """The global id of a new session, or None when none may start (the stop rules)."""
        if self.stop_rule_hit():
            return None
        session_id = self.next_session_id()
        if session_id is not None:
            self._session_seq += 1
            self._sessions_started += 1
        return session_id

    def too_long(self, server: ServerConnection, prompt_tokens: int, out: int, kind: str, what: str) -> bool:
        """Whether a request of `prompt_tokens` + `out` cannot fit `server`'s context; if so it is not sent
        but counted (as `kind`), and said every few seconds (`what`: what happens to such requests)."""
        limit = server.max_len
        if limit is None or prompt_tokens + out <= limit:
            return False
        self.not_sent(kind)
        self.events.count(
            kind, lambda n: f"{n} {what}: longer than the model's context ({limit} tokens); lower --scale to fit them"
        )
        return True

    def not_sent(self, kind: str) -> None:
        """A request not sent because it would not fit the model's context: counted as `kind` (one of
        `measure.OVER_CONTEXT`), so AgentX's context-overflow share counts it (docs/sweeps.md)."""
        now = time.monotonic()
        self.sender.sink.error(Failed(kind, False, now, now))

    async def error_pause(self, user: User) -> None:
        """After a session that failed: show the error a moment, and do not hammer a failing server."""
        user.state = "error"
        await asyncio.sleep(ERROR_PAUSE_S)

    def session_ended(self, how: str, server: ServerConnection, tree: int = -1) -> None:
        """A session ended (`how`); `tree`: its tree's id when it was a whole task (a top-level session,
        not a sub-agent's own loop), so the task figures count it (measure/tasks.py)."""
        self.sender.sink.session_ended(how, tree)
        if how == "context":
            self.events.count(
                "context",
                lambda n: f"{n} session(s) ended cleanly at the model's context limit ({server.max_len} tokens)",
            )

    # -- sub-agents ---------------------------------------------------------------------------
    def add_child(self, parent: User, server: ServerConnection, *, label: str = "", steps: int = 0) -> User:
        """A row for a sub-agent of `parent`, shown while it runs (`drop_child` when it ends)."""
        self._next_child += 1
        child = User(
            user=self._next_child, parent=parent.user, session=parent.session, tree=parent.tree, endpoint=server.url
        )
        child.label, child.steps_total = label, steps
        child.previous_end, child.previous_tree = parent.previous_end, parent.previous_tree
        self.children[child.user] = child
        return child

    def drop_child(self, child: User) -> None:
        self.children.pop(child.user, None)


async def stop_task(task: asyncio.Task[None] | None) -> None:
    """Cancel a loop's background task (a feeder) and wait until it has ended."""
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
