"""Per-user costs are O(1): starting N users costs N × a constant, the loop stays responsive, and the
client says when it, not the server, limits the figures (docs/scale.md)."""

from __future__ import annotations

import asyncio
import time

import pytest

from agentx_tui.engine import ServerInfo
from agentx_tui.load import Driver, LoadSettings, LocalLoad, load_workload
from agentx_tui.load.sending.health import HealthProbe, ProcessHealth, judge
from tests.load.fake_openai import FakeServer


async def _start_paused(fake: FakeServer, users: int) -> tuple[float, float, Driver]:
    """CPU seconds to bring `users` users up (paused: they wait at the gate, nothing is sent), and
    the worst event-loop lag meanwhile."""
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    driver = Driver(load_workload("chat"), [info], LoadSettings(users=0, seed=1))
    await driver.start()
    driver.pause()
    probe = HealthProbe(period_s=0.01)
    probe.start()
    cpu = time.process_time()
    driver.set_users(users)
    while driver.starting or driver.states().get("paused", 0) < users:
        await asyncio.sleep(0.05)  # (the check itself is O(users): not too often, or it is what we measure)
    spent = time.process_time() - cpu
    lag = max(probe.look().lag_samples, default=0.0)
    await probe.stop()
    return spent, lag, driver


@pytest.mark.slow
async def test_starting_ten_times_the_users_costs_about_ten_times_as_much(fake: FakeServer) -> None:
    small, _, a = await _start_paused(fake, 1_000)
    large, lag, b = await _start_paused(fake, 10_000)
    await a.stop()
    await b.stop()
    # Linear: ~10×. The quadratic scan this replaced (every new user looked at every task) was ~100×.
    assert large / small < 25, (small, large)
    assert lag < 0.25, f"the event loop was blocked for {lag:.3f} s while users started"


async def test_retiring_and_adding_users_reuses_ids(fake: FakeServer) -> None:
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    driver = Driver(load_workload("chat"), [info], LoadSettings(users=0, seed=1))
    await driver.start()
    driver.pause()
    driver.set_users(50)
    await asyncio.sleep(0.1)
    driver.set_users(10)
    await asyncio.sleep(0.1)
    driver.set_users(30)
    await asyncio.sleep(0.1)
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
        time.sleep(0.3)  # one stall: the probe's next timer runs at least 200 ms late
        await asyncio.sleep(0.15)
        stalled = probe.look()
        quiet = probe.look()  # no new sample yet: the last figure stands
        await asyncio.sleep(0.25)
        after = probe.look()
    finally:
        await probe.stop()
    assert stalled.loop_lag_p99_s is not None and stalled.loop_lag_p99_s >= 0.2
    assert quiet.lag_samples == () and quiet.loop_lag_p99_s == stalled.loop_lag_p99_s
    assert after.loop_lag_p99_s is not None and after.loop_lag_p99_s < 0.2  # the stall is not seen again


async def test_a_client_made_to_lag_says_it_is_saturated_and_an_idle_one_does_not(fake: FakeServer) -> None:
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    load = LocalLoad(Driver(load_workload("chat"), [info], LoadSettings(users=0, seed=1)))
    await load.start()
    try:
        for _ in range(4):  # idle: nothing to do between looks
            await asyncio.sleep(0.3)
            idle = await load.sample()
        assert not idle.health.saturated and not idle.health.run_saturated
        for _ in range(4):  # lagging on purpose: the loop is blocked 150 ms at a time, as by heavy work
            for _ in range(3):
                time.sleep(0.15)
                await asyncio.sleep(0)
            lagging = await load.sample()
        assert lagging.health.saturated and lagging.health.run_saturated
        assert lagging.health.reason is not None and "late (p99)" in lagging.health.reason
    finally:
        await load.stop()
