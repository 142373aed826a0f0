"""How long users take to start, and how responsive the event loop stays meanwhile (docs/scale.md).

    .venv/bin/python bench/user_start.py [--users 1000,10000,100000]

For each count, a `Driver` against a local fake server (calibration only: the users are paused, so
they start, reach the pause gate and wait, and nothing else is measured) brings the users up; printed:
wall and CPU seconds until every user waits at the gate, per-user cost, the worst event-loop lag seen
by a 10 ms timer meanwhile, and the process's resident memory. Then the users are stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentx_tui.engine import ServerInfo
from agentx_tui.load import Driver, LoadSettings, load_workload
from agentx_tui.load.sending.health import HealthProbe
from tests.load.fake_openai import FakeServer


async def measure(fake: FakeServer, users: int) -> None:
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=16)
    driver = Driver(load_workload("chat"), [info], LoadSettings(users=0, seed=1))
    await driver.start()
    driver.pause()
    probe = HealthProbe(period_s=0.01)
    probe.start()
    wall, cpu = time.perf_counter(), time.process_time()
    driver.set_users(users)
    while driver.starting or driver.states().get("paused", 0) < users:
        await asyncio.sleep(0.05)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    lag = max(probe.look().lag_samples, default=0.0)
    await probe.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    stop = time.perf_counter()
    await driver.stop()
    print(
        f"{users:>8,} {wall:>8.2f} {cpu:>8.2f} {cpu / users * 1e6:>8.1f} {lag * 1000:>9.1f} "
        f"{rss:>8.0f} {time.perf_counter() - stop:>8.2f}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", default="1000,10000,100000")
    counts = [int(n) for n in parser.parse_args().users.split(",")]
    fake = await FakeServer().start()
    print(f"{'users':>8} {'wall s':>8} {'CPU s':>8} {'µs/user':>8} {'max lag ms':>9} {'RSS MiB':>8} {'stop s':>8}")
    try:
        for n in counts:
            await measure(fake, n)
    finally:
        await fake.close()


if __name__ == "__main__":
    import uvloop

    uvloop.run(main())
