"""What a sink may ask of the thing producing Snapshots (core side; the UI never reaches further).

`LiveControls` is implemented by the runtime of a live run; `ReplayControls` by the recording player.
Both are plain synchronous calls that take effect by the next tick, so a UI key handler can call them
directly.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from agentx_tui.snapshot import Snapshot


@runtime_checkable
class SnapshotSource(Protocol):
    """An async stream of Snapshots, one per tick, ending when the run ends."""

    def snapshots(self) -> AsyncIterator[Snapshot]: ...


@runtime_checkable
class Pausable(Protocol):
    """What a live run and a replay both offer: the dashboard's pause key."""

    @property
    def paused(self) -> bool: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...


@runtime_checkable
class LiveControls(Pausable, Protocol):
    @property
    def users(self) -> int: ...

    def set_users(self, users: int) -> None: ...

    @property
    def workload(self) -> str: ...

    def workloads(self) -> list[tuple[str, str]]:
        """(name, one-line description) of the workloads the run may switch to."""

    def set_workload(self, name: str) -> str | None:
        """Switch the load to workload `name` (by its next sessions); None, or why it cannot."""

    def set_price(self, usd_per_gpu_hour: float | None, gpus: int | None) -> None:
        """Override the cost meter's price (None keeps the current value)."""

    def reset_windows(self) -> None:
        """Forget windowed figures (rates, percentiles, histories) and start measuring afresh."""

    async def shutdown(self, reason: str | None = None) -> None:
        """Ask the run to end (`reason` says why). It returns at once: the run then drains its load,
        publishes a final snapshot and ends the snapshot stream, and whoever started the run stops
        its servers."""


@runtime_checkable
class ReplayControls(Pausable, Protocol):
    @property
    def speed(self) -> float: ...

    @property
    def position(self) -> int: ...

    @property
    def length(self) -> int: ...

    def step(self, ticks: int = 1) -> None:
        """Move by `ticks` (negative goes back) and pause."""

    def seek(self, index: int) -> None: ...

    def set_speed(self, speed: float) -> None: ...
