"""The load generator as the run sees it (docs/architecture.md): one interface, local or in workers.

`LocalLoad` drives the users in this process; `WorkerPool` spreads them over processes (or Ray
actors). Either way the run gets one `LoadSample` per tick: the client figures (merged exactly:
every load process feeds one `ClientStats`), the client's health, and a bounded sample of user rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from agentx_tui.load.workload import PreparedWorkload
from agentx_tui.measure import ClientStats
from agentx_tui.snapshot import ClientFigures, ClientHealth, UserRow


@dataclass(frozen=True)
class LoadSample:
    client: ClientFigures
    health: ClientHealth
    rows: tuple[UserRow, ...] = ()  # the users table's sample (at most USERS_SHOWN)
    states: dict[str, int] = field(default_factory=dict)  # how many users are in each state, all of them


class LoadGenerator(Protocol):
    """What the run asks of its load, whatever runs it."""

    on_event: Callable[[str], None] | None

    @property
    def users(self) -> int: ...

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

    async def sample(self) -> LoadSample: ...
