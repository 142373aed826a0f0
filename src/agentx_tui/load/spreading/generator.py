"""The load generator as the run sees it (docs/architecture.md): one interface, local or in workers.

`LocalLoad` drives the users in this process; `WorkerPool` spreads them over processes (or Ray
actors). Either way the run gets one `LoadSample` per tick: the client figures (merged exactly:
every load process feeds one `ClientStats`), the client's health, and a bounded sample of user rows;
and, from a pool, the workers that died (`WorkerLoss`), which the run reports and a sweep restarts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from agentx_tui.load.workload import PreparedWorkload
from agentx_tui.measure import ClientStats
from agentx_tui.snapshot import ClientHealth, ClientReading, UserRow


@dataclass(frozen=True)
class LoadSample:
    client: ClientReading
    health: ClientHealth
    rows: tuple[UserRow, ...] = ()  # the users table's sample (at most USERS_SHOWN)
    states: dict[str, int] = field(default_factory=dict)  # how many users are in each state, all of them


@dataclass(frozen=True)
class WorkerLoss:
    """A load worker that died mid-run, as the pool saw it (docs/scale.md, "A lost load worker")."""

    worker: int  # its index, 0-based
    workers: int
    pid: int | None  # None: a Ray actor whose process id is not known
    how: str  # how it ended, in words: "SIGKILL", "exit code 1", "Ray actor died: …"
    users: int  # the run's users then
    users_lost: int  # its share of them
    users_left: int  # the users the other workers still drove
    at: float  # unix time when it was seen
    restarted_at: float | None = None  # unix time a fresh worker took its users again
    restart_error: str | None = None  # why a fresh worker could not be started


class LoadGenerator(Protocol):
    """What the run asks of its load, whatever runs it."""

    on_event: Callable[[str], None] | None

    @property
    def users(self) -> int:
        """The users asked for (`-u`, the live controls, a sweep's point)."""
        ...

    @property
    def users_lost(self) -> int:
        """Of those, the users no worker drives now: their worker died and no fresh one took them again."""
        ...

    @property
    def losses(self) -> tuple[WorkerLoss, ...]:
        """Every load worker that died so far, in order."""
        ...

    @property
    def paused(self) -> bool: ...

    @property
    def finished(self) -> bool: ...

    @property
    def workers(self) -> int: ...

    @property
    def stats(self) -> ClientStats: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def drain(self, timeout_s: float) -> bool: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def set_users(self, users: int) -> None: ...

    def set_workload(self, workload: PreparedWorkload) -> None: ...

    def reset_window(self) -> None: ...

    def restart_lost(self) -> None:
        """Start a fresh worker, in the background, for each lost one that is not running again."""
        ...

    async def sample(self) -> LoadSample: ...
