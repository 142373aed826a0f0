"""One live proxied session (a tree's root or a sub-agent) and its session tree: the figures of a users
table row (docs/capture.md, "Live sessions"), as a simulated user has them (load/sending/users.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agentx_tui.measure import CallTally
from agentx_tui.proxy._call import ProxiedCall
from agentx_tui.proxy._capture import CaptureAgent, CaptureTree
from agentx_tui.snapshot import UserRow, UserState

REAL_ID_BASE = 1 << 50  # rows of proxied sessions have ids from here: they never meet simulated ones
# Proxied session trees' task ids (`Completed.tree`, `Failed.tree`) count from here too: the simulated
# users' tree ids are global session counters (`IdStride`), small, so the two never meet in a TaskBook.
TASK_ID_BASE = REAL_ID_BASE
SCREEN_NAME_CHARS = 64  # a session's name is kept for the screen up to this long
How = Literal["header", "user", "inferred"]


def screen_name(value: str) -> str:
    """A session's name as the screen may show it: at most `SCREEN_NAME_CHARS` printable characters (the
    agent chose it: a control character in it must not reach the terminal)."""
    text = "".join(c if c.isprintable() else "?" for c in value[: SCREEN_NAME_CHARS + 1])
    return text if len(text) <= SCREEN_NAME_CHARS else text[: SCREEN_NAME_CHARS - 1] + "…"


@dataclass(slots=True, eq=False)
class LiveTree:
    """A real agent and its sub-agents as the proxy sees them live: one task of the run's (`task`, its
    calls' tree id), captured as one session file, and over as one (`_eviction.py`). (A session file's
    tree as a replay sends it is `load`'s `SessionTree`.)"""

    id: str
    label: str
    capture: CaptureTree | None
    task: int = -1  # the tree id its calls carry to the run's statistics (from `TASK_ID_BASE`)
    in_flight: int = 0
    counting: int = 0  # completed calls whose figures wait for their prompt's length (/tokenize)
    failed: bool = False  # a call of it failed for good: its task ends as failed
    last_activity: float = 0.0
    sessions: list[LiveSession] = field(default_factory=list)

    @property
    def busy(self) -> bool:
        """A call on the wire, a prompt still being tokenized for its capture, or a call not yet in the
        run's statistics: not to be written or ended yet (its task would miss a call)."""
        return bool(self.in_flight or self.counting or (self.capture is not None and self.capture.pending))


@dataclass(slots=True, eq=False)
class LiveSession(CallTally):
    """One proxied agent (a tree's root or a sub-agent) and its figures."""

    id: int
    tree: LiveTree
    parent: LiveSession | None
    depth: int
    label: str
    how: How
    name: tuple[str, str] | None  # ("header" | "user", value): in memory only
    shown_name: str  # the name as the screen shows it ("" for inferred sessions): never written to a file
    agent: CaptureAgent | None
    head: int | None = None  # key of the first message (inferred sessions)
    tip: int | None = None  # key over the latest call's whole prompt (inferred sessions)
    in_flight: int = 0
    current: ProxiedCall | None = None
    last_end: float | None = None
    steps: int = 0  # calls started
    context_tokens: int = 0

    @property
    def state(self) -> UserState:
        if self.in_flight <= 0:
            return "tool"
        current = self.current
        return "decoding" if current is not None and current.first_at is not None else "prefill"

    def started(self, call: ProxiedCall) -> None:
        # Its idle time counts from this agent's latest call's end; a sub-agent's first call, from its
        # parent's latest (the call it followed), as the capture's think time does.
        previous = self.last_end if self.last_end is not None or self.parent is None else self.parent.last_end
        call.idle_s = max(0.0, call.received_at - previous) if previous is not None else None
        self.in_flight += 1
        self.steps += 1
        call.tree, call.step = self.tree.task, self.steps  # a sub-agent's calls are in its parent's task
        self.current = call
        self.tree.in_flight += 1
        self.tree.last_activity = call.received_at

    def ended(self, call: ProxiedCall) -> None:
        self.in_flight -= 1
        if self.current is call:
            self.current = None
        self.tree.in_flight -= 1
        self.tree.last_activity = max(self.tree.last_activity, call.ended_at)
        self.last_end = call.ended_at

    def completed(self, call: ProxiedCall, prompt: int | None) -> None:
        """A completed call's figures; `prompt` None until its length is known."""
        if prompt is not None:
            self.context_tokens = prompt
        self.count(call.figures())

    def row(self, endpoint: str) -> UserRow:
        return UserRow(
            user=self.id,
            session=1,
            state=self.state,
            step=self.steps,
            steps_total=0,  # unknown: a real agent decides as it goes
            context_tokens=self.context_tokens,
            endpoint=endpoint,
            parent=self.parent.id if self.parent is not None else None,
            label=self.label,
            real=True,
            name=self.shown_name,
            **self.tallied(),
        )
