"""Waiting rooms for many users: a gate (and the load's pause), a fair connection limit, a fair queue;
O(1) per waiter.

asyncio's own `Event`, `Semaphore` and `Queue` keep their waiters in a deque and remove a cancelled waiter
with `deque.remove`, O(waiters): cancelling 100,000 users paused at an `Event` took 32 s
(quadratic). These keep waiters in a dict (insertion-ordered, so the limit stays first come, first
served) and forget a cancelled one in O(1).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import time
from typing import Generic, TypeVar

from agentx_tui.load.sending.users import User

T = TypeVar("T")


class Gate:
    """Open or shut; `wait()` returns at once when open, else when it opens."""

    def __init__(self) -> None:
        self._open = True
        self._waiters: dict[int, asyncio.Future[None]] = {}
        self._ids = itertools.count()

    @property
    def is_open(self) -> bool:
        return self._open

    def open(self) -> None:
        self._open = True
        waiters, self._waiters = self._waiters, {}
        for fut in waiters.values():
            if not fut.done():
                fut.set_result(None)

    def shut(self) -> None:
        self._open = False

    async def wait(self) -> None:
        if self._open:
            return
        key = next(self._ids)
        fut = self._waiters[key] = asyncio.get_running_loop().create_future()
        try:
            await fut
        finally:
            self._waiters.pop(key, None)


class FairLimit:
    """At most `limit` holders; the others wait, first come first served. `waiting` counts them."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self._held = 0
        self._waiters: dict[int, asyncio.Future[None]] = {}
        self._ids = itertools.count()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    async def acquire(self) -> None:
        if self._held < self.limit and not self._waiters:
            self._held += 1
            return
        key = next(self._ids)
        fut = self._waiters[key] = asyncio.get_running_loop().create_future()
        try:
            await fut  # the releaser hands its slot over: `_held` stays as it is
        except BaseException:
            if self._waiters.pop(key, None) is None and fut.done() and not fut.cancelled():
                self.release()  # handed a slot while being cancelled: pass it on
            raise

    def release(self) -> None:
        while self._waiters:
            key = next(iter(self._waiters))
            fut = self._waiters.pop(key)
            if not fut.done():
                fut.set_result(None)
                return
        self._held -= 1

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()


class FairQueue(Generic[T]):
    """An unbounded queue whose getters wait first come, first served, and leave in O(1)."""

    def __init__(self) -> None:
        self._items: collections.deque[T] = collections.deque()
        self._waiters: dict[int, asyncio.Future[T]] = {}
        self._ids = itertools.count()

    def qsize(self) -> int:
        return len(self._items)

    def put_nowait(self, item: T) -> None:
        while self._waiters:
            fut = self._waiters.pop(next(iter(self._waiters)))
            if not fut.done():
                fut.set_result(item)
                return
        self._items.append(item)

    async def get(self) -> T:
        if self._items:
            return self._items.popleft()
        key = next(self._ids)
        fut = self._waiters[key] = asyncio.get_running_loop().create_future()
        try:
            item: T = await fut
        except BaseException:
            if self._waiters.pop(key, None) is None and fut.done() and not fut.cancelled():
                self._items.appendleft(fut.result())  # handed an item while being cancelled: keep it
            raise
        return item


class PauseGate:
    """The load's pause: a user about to send waits here while paused, its row saying so. It keeps the
    time spent paused: a timed replay's schedule stands still meanwhile (load/sending/kinds/trace.py)."""

    def __init__(self) -> None:
        self._gate = Gate()
        self._paused_since: float | None = None
        self._paused_before = 0.0  # seconds of the pauses that have ended

    @property
    def paused(self) -> bool:
        return not self._gate.is_open

    def set_paused(self, paused: bool) -> None:
        now = time.monotonic()
        if paused:
            if self._paused_since is None:
                self._paused_since = now
            self._gate.shut()
        else:
            if self._paused_since is not None:
                self._paused_before += now - self._paused_since
                self._paused_since = None
            self._gate.open()

    def paused_s(self, now: float) -> float:
        """Seconds spent paused until `now` (`time.monotonic()`), the pause going on included."""
        ongoing = now - self._paused_since if self._paused_since is not None else 0.0
        return self._paused_before + max(0.0, ongoing)

    async def hold(self, user: User) -> None:
        if self._gate.is_open:
            return
        previous, user.state = user.state, "paused"
        await self._gate.wait()
        user.state = previous
