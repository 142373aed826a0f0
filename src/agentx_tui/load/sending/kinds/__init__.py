"""One loop per workload kind: what a user does with one session of that kind.

Every loop has the same shape (`KindLoop`): made from its prepared workload and the driver's
`LoopContext`, started (background feeders, if it has any), asked by each user to `run` one session
after another until it answers False, and closed. Adding a kind: its loop in a module here and one
line in `LOOPS`.
"""

from __future__ import annotations

from typing import Any, Protocol

from agentx_tui.load.sending.context import LoopContext
from agentx_tui.load.sending.kinds.mooncake import TraceLoop
from agentx_tui.load.sending.kinds.session_files import SessionFileLoop
from agentx_tui.load.sending.kinds.synthetic import SyntheticLoop
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


LOOPS: dict[str, type[Any]] = {"agent": SyntheticLoop, "trace": TraceLoop, "sessions": SessionFileLoop}


def loop_for(workload: PreparedWorkload, ctx: LoopContext) -> KindLoop | None:
    """The loop of `workload`'s kind; None for `none` (observe only: nothing is sent)."""
    loop = LOOPS.get(workload.kind)
    return None if loop is None else loop(workload, ctx)
