"""The whole-system idle cap of an AgentX replay (docs/sweeps.md, "The harness's replay choices").

Under `--agentx`, as the official harness's `agentx` scenario does (AIPerf's
`--system-idle-gap-cap-seconds 10`): when no request of this process has been in flight for `cap_s`
seconds, every think time still running is moved forward by one and the same amount, so that the
soonest of them ends now. Only time in which the whole system waits is cut; no session's think time is
shortened while another request runs, and the think times keep their order and their spacing. It is not
`--max-think`, which caps each think time on its own (and breaks AgentX's rule that every session keeps
its own pacing).

Think times are measured on this cap's clock (`now`: the monotonic clock plus the seconds skipped), so a
replay that schedules its calls from it (`replay_tree`) and the synthetic loops' `think` see one time.
O(1) per request, O(waits) per cap reached: at most once per idle gap.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable


class IdleCap:
    """Think times of one load process, with their whole-system idle gaps capped at `cap_s` (None: not
    capped: `sleep` is `asyncio.sleep`). `in_flight` reads the process's requests on the wire; the sender
    calls `system_idle` each time that count falls to 0 (an idle gap begins)."""

    def __init__(
        self,
        cap_s: float | None,
        in_flight: Callable[[], int],
        *,
        clock: Callable[[], float] = time.monotonic,
        on_cap: Callable[[float], None] | None = None,
    ) -> None:
        self.cap_s = cap_s
        self._in_flight = in_flight
        self._clock = clock
        self._on_cap = on_cap  # told the seconds skipped each time the cap is reached
        self.skipped_s = 0.0  # seconds every waiting think time was moved forward by, in all
        self.caps = 0  # idle gaps that reached the cap
        self._idle_since = clock()
        self._waits: dict[int, float] = {}  # each running think time's end, on `now`'s clock
        self._keys = itertools.count()
        self._moved = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None

    def now(self) -> float:
        """This cap's clock: the monotonic clock plus every second skipped."""
        return self._clock() + self.skipped_s

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` of think time, ended early when the whole system has been idle for `cap_s`."""
        if self.cap_s is None:
            if seconds > 0:
                await asyncio.sleep(seconds)
            return
        end = self.now() + seconds
        key = next(self._keys)
        self._waits[key] = end
        self._arm()
        try:
            while (left := end - self.now()) > 0:
                with contextlib.suppress(TimeoutError):  # the end came: the loop sees it
                    await asyncio.wait_for(self._moved.wait(), left)
        finally:
            del self._waits[key]

    def system_idle(self) -> None:
        """No request of this process is in flight any more: an idle gap begins now."""
        self._idle_since = self._clock()
        self._arm()

    def _arm(self) -> None:
        """Check again when the gap reaches the cap (once: a timer already set stands)."""
        if self.cap_s is None or self._timer is not None or not self._waits or self._in_flight():
            return
        delay = max(0.0, self._idle_since + self.cap_s - self._clock())
        self._timer = asyncio.get_running_loop().call_later(delay, self._reached)

    def _reached(self) -> None:
        self._timer = None
        if self._in_flight() or not self._waits:
            return  # a request went out meanwhile: the next gap sets its own timer
        if self._clock() - self._idle_since < (self.cap_s or 0.0):
            self._arm()  # the gap began again after this timer was set
            return
        jump = min(self._waits.values()) - self.now()
        if jump <= 0:
            return
        self.skipped_s += jump
        self.caps += 1
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()  # every think time recomputes its end on the moved clock
        if self._on_cap is not None:
            self._on_cap(jump)
