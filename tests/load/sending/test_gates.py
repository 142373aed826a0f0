"""The pause gate and the fair connection limit: first come first served, O(1) per waiter."""

from __future__ import annotations

import asyncio
import gc
import time

import pytest

from agentx_tui.load.sending.gates import FairLimit, Gate


async def test_a_shut_gate_holds_waiters_until_it_opens() -> None:
    gate = Gate()
    await gate.wait()  # open: returns at once
    gate.shut()
    waiter = asyncio.create_task(gate.wait())
    await asyncio.sleep(0.01)
    assert not waiter.done()
    gate.open()
    await asyncio.wait_for(waiter, 1)


async def test_the_limit_is_first_come_first_served_and_counts_waiters() -> None:
    limit = FairLimit(2)
    order: list[int] = []

    async def user(i: int) -> None:
        async with limit:
            order.append(i)
            await asyncio.sleep(0.01)

    tasks = [asyncio.create_task(user(i)) for i in range(6)]
    await asyncio.sleep(0)
    assert limit.waiting == 4
    await asyncio.gather(*tasks)
    assert order == list(range(6)) and limit.waiting == 0


async def test_a_cancelled_waiter_gives_up_its_turn_and_never_leaks_a_slot() -> None:
    limit = FairLimit(1)
    await limit.acquire()
    cancelled = asyncio.create_task(limit.acquire())
    after = asyncio.create_task(limit.acquire())
    await asyncio.sleep(0)
    cancelled.cancel()
    limit.release()  # hands the slot to the first live waiter
    await asyncio.wait_for(after, 1)
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    limit.release()
    await asyncio.wait_for(limit.acquire(), 1)  # one slot, free again


@pytest.mark.parametrize("kind", ["gate", "limit"])
async def test_cancelling_many_waiters_costs_linear_time(kind: str) -> None:
    async def spent(n: int) -> float:
        gate, limit = Gate(), FairLimit(1)
        gate.shut()
        await limit.acquire()
        waits = [asyncio.create_task(gate.wait() if kind == "gate" else limit.acquire()) for _ in range(n)]
        await asyncio.sleep(0)
        gc.collect()
        gc.disable()  # the collector's own cost grows with live objects: measure the waiting rooms alone
        try:
            cpu = time.process_time()
            for task in waits:
                task.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
            return time.process_time() - cpu
        finally:
            gc.enable()

    small, large = await spent(2_000), await spent(20_000)
    # Linear: ~10×; asyncio's deque-based Event and Semaphore were ~100× here (O(n) per cancel).
    assert large / max(small, 1e-4) < 30, (small, large)
