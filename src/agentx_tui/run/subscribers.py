"""What the tick loop pushes each Snapshot to: one interface for every consumer (docs/architecture.md).

The report builder, the recorder, the headless printer and the dashboard's feed all take
`publish(snapshot)` once per tick and `close()` once at the end. A consumer that fails (a terminal
gone after SIGHUP, a full disk) must not stop the others or the run: `Fanout` isolates them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Protocol

from agentx_tui.snapshot import Snapshot


class Subscriber(Protocol):
    def publish(self, snap: Snapshot) -> None: ...

    def close(self) -> None: ...


class Fanout:
    def __init__(self, subscribers: Sequence[Subscriber], on_error: Callable[[str], None]) -> None:
        self._subscribers = list(subscribers)
        self._on_error = on_error
        self._failed: set[int] = set()

    def publish(self, snap: Snapshot) -> None:
        for i, sub in enumerate(self._subscribers):
            if i in self._failed:
                continue
            try:
                sub.publish(snap)
            except (OSError, ValueError) as exc:
                # The terminal closed (SIGHUP) or the disk filled: that consumer stops, the run goes on.
                self._failed.add(i)
                self._on_error(f"{type(sub).__name__} stopped: {exc}")

    def close(self) -> None:
        for sub in self._subscribers:
            with contextlib.suppress(OSError, ValueError):
                sub.close()


class DashboardFeed:
    """The dashboard's subscriber: a queue the app's worker reads as a `SnapshotSource`.

    Only the newest snapshots matter to a screen that redraws on its own clock, so the queue is small
    and a slow reader drops old ones instead of holding them."""

    def __init__(self, maxsize: int = 8) -> None:
        self._queue: asyncio.Queue[Snapshot | None] = asyncio.Queue(maxsize=maxsize)

    def publish(self, snap: Snapshot) -> None:
        if self._queue.full():
            with contextlib.suppress(asyncio.QueueEmpty):
                self._queue.get_nowait()
        self._queue.put_nowait(snap)

    def close(self) -> None:
        if self._queue.full():
            with contextlib.suppress(asyncio.QueueEmpty):
                self._queue.get_nowait()
        self._queue.put_nowait(None)

    async def snapshots(self) -> AsyncIterator[Snapshot]:
        while (snap := await self._queue.get()) is not None:
            yield snap
