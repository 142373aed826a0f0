"""One loop per workload kind: what a user does with one session of that kind.

Every loop has the same shape (`KindLoop`): made from its prepared workload and the driver's
`LoopContext`, started (background feeders, if it has any), asked by each user to `run` one session
after another until it answers False, and closed. A kind's loop is in the module named after the
kind (`agent`, `trace`, `sessions`: load/workload/ has the kind's spec and data under the same name),
registered in `LOOPS` under the kind's `kind:` name; `none` has no loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from agentx_tui.load.sending.context import LoopContext
from agentx_tui.load.sending.kinds.agent import AgentLoop
from agentx_tui.load.sending.kinds.sessions import SessionsLoop
from agentx_tui.load.sending.kinds.trace import TraceLoop
from agentx_tui.load.sending.users import User
from agentx_tui.load.workload import PreparedWorkload


class KindLoop(Protocol):
    def start(self) -> None:
        """Start what runs beside the users (a trace's clock, Poisson arrivals), if anything."""

    async def close(self) -> None:
        """Stop what `start` started."""

    @property
    def exhausted(self) -> bool:
        """The workload itself has nothing more to send (a trace played to its end)."""
        ...

    async def run(self, user: User) -> bool:
        """One session for `user` (it waits while paused); False when there is none to start."""
        ...


# Made from a prepared workload of its kind (each loop takes its own prepared form) and the context.
LoopFactory = Callable[[Any, LoopContext], KindLoop]
LOOPS: dict[str, LoopFactory] = {"agent": AgentLoop, "trace": TraceLoop, "sessions": SessionsLoop}


def loop_for(workload: PreparedWorkload, ctx: LoopContext) -> KindLoop | None:
    """The loop of `workload`'s kind; None for `none` (observe only: nothing is sent)."""
    loop = LOOPS.get(workload.kind)
    return None if loop is None else loop(workload, ctx)
