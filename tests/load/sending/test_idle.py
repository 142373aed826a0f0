"""The whole-system idle cap of `--agentx` (load/sending/idle.py), on a virtual clock: only time in which
no request is in flight is cut, all waiting think times move by one amount (their spacing kept), and a
think time is never shortened while a request runs. It is not `--max-think`, which caps each think time."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentx_tui.load.sending.idle import IdleCap
from agentx_tui.load.sending.kinds.sessions import Agent, replay_tree
from agentx_tui.load.workload.sessions import SessionCall
from tests.load.sending.kinds.test_sessions import VirtualLoop, run_virtual, tree_of
from tests.load.workload.test_sessions import call


class InFlight:
    """The requests of a fake process on the wire."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> int:
        return self.n


async def _think(idle: IdleCap, loop: VirtualLoop, seconds: float, ends: list[float]) -> None:
    await idle.sleep(seconds)
    ends.append(loop.time())


def test_when_nothing_is_in_flight_every_waiting_think_time_moves_forward_by_one_amount() -> None:
    async def main(loop: VirtualLoop) -> tuple[list[float], IdleCap]:
        idle = IdleCap(10.0, InFlight(), clock=loop.time)
        ends: list[float] = []
        await asyncio.gather(_think(idle, loop, 30.0, ends), _think(idle, loop, 31.0, ends))
        return ends, idle

    ends, idle = run_virtual(main)
    # Idle from 0: at 10 s the soonest (30 s) ends; the other keeps its 1 s behind it.
    assert ends == [10.0, 11.0]
    assert (idle.caps, idle.skipped_s) == (1, 20.0)


def test_no_think_time_is_shortened_while_a_request_is_in_flight() -> None:
    async def main(loop: VirtualLoop) -> list[float]:
        flying = InFlight()
        flying.n = 1
        idle = IdleCap(10.0, flying, clock=loop.time)
        ends: list[float] = []

        async def request_ends_at_5() -> None:
            await asyncio.sleep(5.0)
            flying.n = 0
            idle.system_idle()

        await asyncio.gather(_think(idle, loop, 30.0, ends), request_ends_at_5())
        return ends

    # In flight until 5 s; idle from then: the cap is reached at 15 s.
    assert run_virtual(main) == [15.0]


def test_short_gaps_and_no_cap_are_left_as_they_are() -> None:
    async def main(loop: VirtualLoop) -> list[float]:
        capped, uncapped = IdleCap(10.0, InFlight(), clock=loop.time), IdleCap(None, InFlight(), clock=loop.time)
        ends: list[float] = []
        await _think(capped, loop, 4.0, ends)  # under the cap: as it is
        await _think(uncapped, loop, 100.0, ends)
        return ends

    assert run_virtual(main) == [4.0, 104.0]


def test_a_replayed_session_keeps_its_order_and_waits_at_most_the_cap_between_calls(tmp_path: Path) -> None:
    """A session whose recorded think times are 100 s, alone on the system: each gap is capped at 10 s;
    `--max-think` is not set, and no think time shorter than the cap is touched."""
    tree = tree_of(
        tmp_path, [call(0, api=2), call(100, think=100, api=1), call(300, think=4, api=1), call(400, think=100, api=1)]
    )

    async def main(loop: VirtualLoop) -> list[float]:
        flying = InFlight()
        idle = IdleCap(10.0, flying, clock=loop.time)
        starts: list[float] = []

        async def send(agent: Agent, c: SessionCall) -> bool:
            starts.append(loop.time())
            flying.n += 1
            await asyncio.sleep(c.api_time or 1.0)
            flying.n -= 1
            if not flying.n:
                idle.system_idle()
            return True

        await replay_tree(tree, send, sleep=idle.sleep, clock=idle.now)
        return starts

    # 0-2, idle 10 s, 12-13, 4 s as recorded, 17-18, idle 10 s, 28.
    assert run_virtual(main) == [0.0, 12.0, 17.0, 28.0]
