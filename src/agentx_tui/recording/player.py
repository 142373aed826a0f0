"""Playing a recording back: a `SnapshotSource` paced like the original run, with replay controls.

Snapshots are yielded with their recorded time gaps divided by the speed. Seek and step yield the
snapshot they land on at once (step also pauses). With ``hold_at_end`` (the default, for the
dashboard) the player pauses on the last snapshot instead of ending the stream, so the user can still
seek back; resuming at the end starts over. Controls are plain calls from the event loop's thread
(a key handler) and take effect immediately: a wait in progress is woken.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence

from agentx_tui.recording.reader import Recording
from agentx_tui.snapshot import Snapshot

MIN_SPEED = 1 / 64
MAX_SPEED = 64.0


class ReplayPlayer:
    def __init__(
        self,
        recording: Recording | Sequence[Snapshot],
        *,
        speed: float = 1.0,
        hold_at_end: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        snaps = recording.snapshots if isinstance(recording, Recording) else recording
        self._snaps: tuple[Snapshot, ...] = tuple(snaps)
        self._wake = asyncio.Event()
        self._speed = 1.0
        self.set_speed(speed)
        self._hold = hold_at_end
        self._clock = clock
        self._paused = False
        self._pos = 0
        self._jump = True  # the snapshot at _pos is due now (start, seek, step)
        self._gap_left: float | None = None  # recorded seconds still to wait before _pos + 1
        self._closed = False

    # ---- ReplayControls -----------------------------------------------------------------------
    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def position(self) -> int:
        return self._pos

    @property
    def length(self) -> int:
        return len(self._snaps)

    def pause(self) -> None:
        self._paused = True
        self._poke()

    def resume(self) -> None:
        if self._snaps and self._pos >= len(self._snaps) - 1:
            self._pos, self._jump, self._gap_left = 0, True, None  # at the end: play it again
        self._paused = False
        self._poke()

    def step(self, ticks: int = 1) -> None:
        """Move by `ticks` (negative goes back) and pause."""
        self._paused = True
        self.seek(self._pos + ticks)

    def seek(self, index: int) -> None:
        if not self._snaps:
            return
        self._pos = min(max(index, 0), len(self._snaps) - 1)
        self._jump = True
        self._gap_left = None
        self._poke()

    def set_speed(self, speed: float) -> None:
        if not speed > 0:
            raise ValueError("speed must be positive")
        self._speed = min(max(speed, MIN_SPEED), MAX_SPEED)
        self._poke()

    def close(self) -> None:
        """End the snapshot stream (the consumer's loop then finishes)."""
        self._closed = True
        self._poke()

    # ---- SnapshotSource -----------------------------------------------------------------------
    async def snapshots(self) -> AsyncIterator[Snapshot]:
        while not self._closed and self._snaps:
            if self._jump:
                self._jump = False
                yield self._snaps[self._pos]
                continue
            if self._paused:
                await self._sleep(None)
                continue
            if self._pos >= len(self._snaps) - 1:
                if not self._hold:
                    return
                self._paused = True
                continue
            if await self._wait_gap():
                self._pos += 1
                self._gap_left = None
                yield self._snaps[self._pos]

    async def snapshots_fast(self) -> AsyncIterator[Snapshot]:
        """Every snapshot in order, unpaced and ignoring the controls (for tests and reports)."""
        for snap in self._snaps:
            yield snap

    # ---- internals ----------------------------------------------------------------------------
    def _poke(self) -> None:
        self._wake.set()

    async def _sleep(self, timeout: float | None) -> bool:
        """Wait until poked (True) or until `timeout` seconds pass (False)."""
        self._wake.clear()
        if timeout is None:
            await self._wake.wait()
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout=timeout)
            return True
        return False

    async def _wait_gap(self) -> bool:
        """Wait out the recorded gap to the next snapshot; False when a control interrupted it."""
        if self._gap_left is None:
            gap = self._snaps[self._pos + 1].time - self._snaps[self._pos].time
            self._gap_left = max(gap, 0.0)
        while self._gap_left is not None and self._gap_left > 0:
            left, speed, start = self._gap_left, self._speed, self._clock()
            if not await self._sleep(left / speed):
                return True
            if self._jump or self._closed:
                return False  # a seek starts afresh from where it lands
            self._gap_left = max(0.0, left - (self._clock() - start) * speed)
            if self._paused:
                return False  # resuming waits out only what is left of the gap
        return True
