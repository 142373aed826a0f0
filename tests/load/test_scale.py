"""Per-user costs are O(1): starting N users costs N × a constant, the loop stays responsive, and the
client says when it, not the server, limits the figures (docs/scale.md)."""

from __future__ import annotations

import asyncio
import time

import pytest

from agentx_tui.engine import ServerInfo
from agentx_tui.load import Driver, LoadSettings, LocalLoad, load_workload
from agentx_tui.load.sending.health import HealthProbe, ProcessHealth, judge
from agentx_tui.load.spreading.client_health import HealthBook
from tests.helpers.waiting import until
from tests.load.fake_openai import FakeServer


async def _start_paused(fake: FakeServer, users: int) -> tuple[float, float, Driver]:
    """CPU seconds to bring `users` users up (paused: they wait at the gate, nothing is sent), and
    the longest stretch of CPU work the event loop did without letting a timer run meanwhile.

    CPU time, not wall time: on a machine whose cores other processes hold, a timer comes late
    however little the loop is blocked; the CPU spent between two runs of a 10 ms timer is what our
    own code kept the loop busy for."""
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    driver = Driver(load_workload("chat"), [info], LoadSettings(users=0, seed=1))
    await driver.start()
    driver.pause()
    busiest = 0.0
    done = asyncio.Event()

    async def watch() -> None:
        nonlocal busiest
        last = time.thread_time()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.thread_time()
            busiest, last = max(busiest, now - last), now

    watcher = asyncio.create_task(watch())
    cpu = time.process_time()
    driver.set_users(users)
    while driver.starting or driver.states().get("paused", 0) < users:
        await asyncio.sleep(0.05)  # (the check itself is O(users): not too often, or it is what we measure)
    spent = time.process_time() - cpu
    done.set()
    await watcher
    return spent, busiest, driver


@pytest.mark.slow
async def test_starting_ten_times_the_users_costs_about_ten_times_as_much(fake: FakeServer) -> None:
    small, _, a = await _start_paused(fake, 1_000)
    large, lag, b = await _start_paused(fake, 10_000)
    await a.stop()
    await b.stop()
    # Linear: ~10×. The quadratic scan this replaced (every new user looked at every task) was ~100×.
    assert large / small < 25, (small, large)
    assert lag < 0.25, f"the event loop was kept busy {lag:.3f} s at a stretch while users started"


async def test_retiring_and_adding_users_reuses_ids(fake: FakeServer) -> None:
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    driver = Driver(load_workload("chat"), [info], LoadSettings(users=0, seed=1))
    await driver.start()
    driver.pause()
    for n in (50, 10, 30):
        driver.set_users(n)
        await until(lambda n=n: not driver.starting and len(driver.rows()) == n)  # type: ignore[misc]
    users = sorted(row.user for row in driver.rows())
    await driver.stop()
    assert users == list(range(30))  # the lowest free ids, as before the change


def test_the_verdict_names_each_limit() -> None:
    calm = ProcessHealth(cpu_cores=0.3, loop_lag_p99_s=0.002, run_queue_s_per_s=0.01)
    assert judge([calm], queued_requests=0) == (False, None)
    busy = ProcessHealth(cpu_cores=0.97, loop_lag_p99_s=0.18, run_queue_s_per_s=0.4)
    saturated, reason = judge([calm, busy], queued_requests=12)
    assert saturated and reason is not None
    for words in ("0.97 of a core", "180 ms late", "12 request(s) waited for a connection slot", "0.40 s per s"):
        assert words in reason


async def test_one_stall_counts_in_one_look_only_however_close_the_looks() -> None:
    probe = HealthProbe()
    probe.start()
    try:
        await asyncio.sleep(0.25)
        probe.look()
        time.sleep(0.6)  # one stall: the probe's next timer runs at least 500 ms late
        await asyncio.sleep(0.15)
        stalled = probe.look()
        quiet = probe.look()  # no new sample yet: the last figure stands
        await asyncio.sleep(0.25)
        after = probe.look()
    finally:
        await probe.stop()
    assert stalled.loop_lag_p99_s is not None and stalled.loop_lag_p99_s >= 0.5
    assert quiet.lag_samples == () and quiet.loop_lag_p99_s == stalled.loop_lag_p99_s
    assert after.loop_lag_p99_s is not None and after.loop_lag_p99_s < 0.5  # the stall is not seen again


def test_an_idle_client_is_not_saturated_and_a_busy_one_is_after_three_looks() -> None:
    # The verdict's rule, on given figures: deterministic whatever else the machine is doing.
    book = HealthBook(workers=1)
    idle = ProcessHealth(cpu_cores=0.02, loop_lag_p99_s=0.001, run_queue_s_per_s=0.0, lag_samples=(0.001,))
    for _ in range(5):
        assert not book.tick([idle], queued=0).saturated
    busy = ProcessHealth(cpu_cores=0.95, loop_lag_p99_s=0.15, run_queue_s_per_s=0.0, lag_samples=(0.15,))
    verdicts = [book.tick([busy], queued=0).saturated for _ in range(3)]
    assert verdicts == [False, False, True]  # a passing hiccup is not saturation; three in a row are
    health = book.tick([idle], queued=0)
    assert not health.saturated and health.run_saturated and health.run_reason is not None


async def test_a_client_made_to_lag_says_it_is_saturated(fake: FakeServer) -> None:
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    load = LocalLoad(Driver(load_workload("chat"), [info], LoadSettings(users=0, seed=1)))
    await load.start()
    try:
        for _ in range(4):  # idle: nothing to do between looks (whether the machine is, is not ours to say)
            await asyncio.sleep(0.3)
            idle = await load.sample()
        assert idle.health.cpu_cores is not None and idle.health.cpu_cores < 0.5
        assert "of a core" not in (idle.health.reason or "")  # its own work never limits it
        for _ in range(4):  # lagging on purpose: the loop is blocked 150 ms at a time, as by heavy work
            for _ in range(3):
                time.sleep(0.15)
                await asyncio.sleep(0)
            lagging = await load.sample()
        assert lagging.health.saturated and lagging.health.run_saturated
        assert lagging.health.reason is not None and "late (p99)" in lagging.health.reason
    finally:
        await load.stop()
