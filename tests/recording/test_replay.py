"""The replay player: paced by recorded gaps ÷ speed, with pause, step, seek and speed controls."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

import pytest

from agentx_tui.control import ReplayControls, SnapshotSource
from agentx_tui.recording import Recorder, ReplayPlayer, read_recording
from agentx_tui.snapshot import Snapshot
from tests.helpers.waiting import until
from tests.recording._header import a_header
from tests.report._snaps import stream

pytestmark = pytest.mark.timeout(20)


async def take(player: ReplayPlayer, n: int, timeout: float = 5.0) -> list[int]:
    seqs: list[int] = []

    async def run() -> None:
        async for s in player.snapshots():
            seqs.append(s.seq)
            if len(seqs) == n:
                return

    await asyncio.wait_for(run(), timeout)
    return seqs


def test_it_is_a_snapshot_source_and_replay_controls() -> None:
    player = ReplayPlayer(stream())
    assert isinstance(player, SnapshotSource) and isinstance(player, ReplayControls)
    assert (player.length, player.position, player.speed, player.paused) == (5, 0, 1.0, False)


async def test_a_recording_replays_to_the_same_snapshots(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    snaps = stream()
    with Recorder(path, a_header()) as rec:
        for s in snaps:
            rec.publish(s)
    player = ReplayPlayer(read_recording(path), speed=64, hold_at_end=False)
    assert [s async for s in player.snapshots()] == snaps
    assert [s async for s in ReplayPlayer(snaps).snapshots_fast()] == snaps


async def test_pacing_follows_the_recorded_gaps_divided_by_speed() -> None:
    snaps = stream()  # 2 s gaps, 8 s in all
    player = ReplayPlayer(snaps, speed=32, hold_at_end=False)  # 0.0625 s per gap
    times: list[float] = []
    async for _ in player.snapshots():
        times.append(time.monotonic())
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) == 5
    # A timer never fires early, so each gap is at least 2 s ÷ 32; well under the unscaled 2 s it is
    # scaled (a busy machine makes a gap late, not 20× late).
    assert all(0.0625 <= g < 1.5 for g in gaps), gaps


async def test_speed_change_takes_effect_during_a_wait() -> None:
    snaps = [s.model_copy(update={"time": 1000.0 + 10 * i}) for i, s in enumerate(stream(3))]
    player = ReplayPlayer(snaps, hold_at_end=False)  # 10 s gaps at speed 1
    got: list[int] = []

    async def consume() -> None:
        async for s in player.snapshots():
            got.append(s.seq)

    task = asyncio.create_task(consume())
    await until(lambda: got == [1])
    player.set_speed(1e9)  # clamped to the maximum, 64×: 10 s → ~0.16 s
    assert player.speed == 64
    await asyncio.wait_for(task, 10)
    assert got == [1, 2, 3]


async def test_pause_step_and_seek() -> None:
    snaps = [s.model_copy(update={"time": 1000.0 + 1000 * i}) for i, s in enumerate(stream())]
    player = ReplayPlayer(snaps)  # gaps far too long to pass by themselves during the test
    seen: list[Snapshot] = []
    arrived = asyncio.Event()

    async def consume() -> None:
        async for s in player.snapshots():
            seen.append(s)
            arrived.set()

    async def next_seq() -> int:
        await asyncio.wait_for(arrived.wait(), 2)
        arrived.clear()
        return seen[-1].seq

    task = asyncio.create_task(consume())
    assert await next_seq() == 1
    player.step(1)
    assert player.paused and player.position == 1
    assert await next_seq() == 2
    player.step(2)
    assert await next_seq() == 4
    player.step(-3)
    assert await next_seq() == 1
    player.seek(99)  # clamped to the last snapshot
    assert player.position == 4 and await next_seq() == 5
    player.seek(-5)
    assert player.position == 0 and await next_seq() == 1
    await asyncio.sleep(0.05)
    assert len(seen) == 6  # paused: nothing more arrives
    player.close()
    await asyncio.wait_for(task, 2)


async def test_it_holds_at_the_end_and_resume_plays_again() -> None:
    player = ReplayPlayer(stream(3), speed=64)
    assert await take(player, 3) == [1, 2, 3]
    seen: list[int] = []

    async def consume() -> None:
        async for s in player.snapshots():
            seen.append(s.seq)

    task = asyncio.create_task(consume())
    await until(lambda: player.paused and player.position == 2)  # held on the last one, stream still open
    assert not task.done()
    player.resume()
    await until(lambda: seen[-3:] == [1, 2, 3] and player.paused)  # played again, and held again
    assert not task.done()
    player.close()
    await asyncio.wait_for(task, 2)


def test_speed_must_be_positive_and_is_clamped() -> None:
    player = ReplayPlayer(stream())
    with pytest.raises(ValueError):
        player.set_speed(0)
    player.set_speed(1e-9)
    assert player.speed == pytest.approx(1 / 64)
    player.set_speed(2)
    assert player.speed == 2


async def test_an_empty_player_ends_at_once() -> None:
    player = ReplayPlayer([])
    assert [s async for s in player.snapshots()] == []
    player.seek(3)
    player.step(1)
    assert player.position == 0 and player.length == 0


async def test_pause_mid_gap_holds_and_resume_finishes_the_gap() -> None:
    # The player reads how much of a gap passed from its clock: a fake one says 3.9 s of a 4 s gap
    # went by before the pause, so after the resume only 0.1 s is left to wait, however busy the machine.
    now = [0.0]
    snaps = [s.model_copy(update={"time": 1000.0 + 4.0 * i}) for i, s in enumerate(stream(2))]
    player = ReplayPlayer(snaps, hold_at_end=False, clock=lambda: now[0])
    seen: list[int] = []

    async def consume() -> None:
        async for s in player.snapshots():
            seen.append(s.seq)

    task = asyncio.create_task(consume())
    await until(lambda: seen == [1])
    await asyncio.sleep(0)  # the player is now waiting out the gap
    now[0] += 3.9
    player.pause()
    await asyncio.sleep(0.2)  # paused: nothing comes, whatever the time
    assert seen == [1]
    start = time.monotonic()
    player.resume()
    await asyncio.wait_for(task, 10)
    assert seen == [1, 2]
    assert time.monotonic() - start < 2.0  # the rest of the gap (0.1 s), not the whole of it (4 s)
