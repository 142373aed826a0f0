"""Load in worker processes: the same accounting as one process, controls reach every worker."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentx_tui.engine import ServerInfo
from agentx_tui.load import Driver, LoadSettings, LocalLoad, PreparedWorkload, Workload, prepare
from agentx_tui.load.spreading.generator import LoadGenerator
from agentx_tui.load.spreading.pool import WorkerPool
from agentx_tui.load.spreading.worker import share
from agentx_tui.load.workload.spec import parse_workload
from tests.helpers.waiting import until
from tests.load.fake_openai import FakeServer
from tests.reliability._run import clean_env


def _workload(**fields: object) -> PreparedWorkload:
    base: dict[str, object] = {
        "shared_prefix_tokens": 120,
        "unique_prefix_tokens": {"dist": "uniform", "min": 10, "max": 60},
        "first_message_tokens": 30,
        "steps": {"dist": "uniform", "min": 2, "max": 5},
        "output_tokens": {"dist": "uniform", "min": 5, "max": 25},
        "tool_result_tokens": {"dist": "uniform", "min": 20, "max": 90},
        "tool_latency_s": 0.01,
    }
    base.update(fields)
    spec: Workload = parse_workload(base, source="test", default_name="test")
    return prepare(spec)


async def _until(cond: Callable[[], bool], load: LoadGenerator | None = None, timeout: float = 20.0) -> None:
    """Wait for `cond`; with a `load`, sample it as the run's tick loop does (workers report then)."""
    await until(cond, timeout, each=load.sample if load is not None else None, every_s=0.05)


async def _totals(load: LoadGenerator) -> tuple[int, int, int, int]:
    await load.start()
    try:
        await _until(lambda: load.finished, load)
    finally:
        await load.stop()
    totals = load.stats.totals()
    return totals.requests_completed, totals.prompt_tokens, totals.output_tokens, totals.sessions_completed


def test_users_are_shared_by_id_modulo_the_workers() -> None:
    assert [share(10, w, 3) for w in range(3)] == [4, 3, 3]
    assert sum(share(7, w, 4) for w in range(4)) == 7 and share(0, 2, 4) == 0


@pytest.mark.slow
async def test_one_and_two_workers_give_equal_totals_on_the_same_sessions(fake: FakeServer) -> None:
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    local = LocalLoad(Driver(_workload(), [info], LoadSettings(users=3, seed=7, sessions=12)))
    one = await _totals(local)
    sent_by_one = (fake.prompt_tokens_total, fake.generation_tokens_total)
    pool = WorkerPool(_workload(), (info,), LoadSettings(users=3, seed=7, sessions=12), workers=2)
    two = await _totals(pool)
    assert one[0] > 12 and one[3] == 12  # twelve sessions of several steps each
    assert one == two
    # The server saw the same tokens again: the sessions were the very same ones.
    assert (fake.prompt_tokens_total, fake.generation_tokens_total) == (2 * sent_by_one[0], 2 * sent_by_one[1])


@pytest.mark.slow
async def test_live_controls_reach_every_worker(fake: FakeServer) -> None:
    fake.token_delay_s = 0.002
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    pool = WorkerPool(_workload(steps=200, tool_latency_s=0.05), (info,), LoadSettings(users=4, seed=1), workers=2)
    await pool.start()
    try:
        await _until(lambda: len({r["messages"][1]["content"][:40] for r in fake.requests}) >= 4)
        sample = await pool.sample()
        assert sample.health.workers == 2 and sample.health.cpu_cores is not None
        await _until(lambda: _users(pool) == {0, 1, 2, 3}, pool, timeout=10)
        pool.set_users(6)
        await _until(lambda: _users(pool) == {0, 1, 2, 3, 4, 5}, pool, timeout=10)
        pool.pause()
        assert await pool.drain(10)
        n = len(fake.requests)
        await asyncio.sleep(0.4)
        assert len(fake.requests) == n  # both workers stopped sending
        pool.resume()
        await _until(lambda: len(fake.requests) > n)
        pool.set_workload(_workload(steps=200, output_tokens=77, tool_latency_s=0.05))
        await _until(lambda: {r["max_tokens"] for r in fake.requests[-6:]} == {77}, pool, timeout=15)
        pool.set_users(1)  # (users started by the switch have new ids: the old ones were finishing)
        await _until(lambda: len(_users(pool)) == 1, pool, timeout=10)
    finally:
        await pool.stop()
    totals = pool.stats.totals()
    assert totals.requests_completed > 0 and totals.prompt_tokens > 0


def _users(pool: WorkerPool) -> set[int]:
    """The users the workers listed in their latest reports (sampled by `_until`)."""
    return {row.user for r in pool._last.values() for row in r.rows if row.parent is None}


def test_a_worker_that_cannot_start_is_one_sentence_and_exit_3(tmp_path: Path) -> None:
    # Every spawned worker process dies as it starts (as one would on a broken environment or an OOM
    # kill): the run must say so in one sentence and exit 3, with no traceback and nothing left behind.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os, sys\nif '--multiprocessing-fork' in sys.argv:\n    os._exit(7)\n"
    )
    env = clean_env(PYTHONPATH=os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])]))
    done = subprocess.run(
        [sys.executable, "-m", "agentx_tui", "--workers", "2", "-u", "2", "--headless", "--duration", "20"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Load worker" in errors[0] and "could not start" in errors[0], done.stderr
    assert "Traceback" not in done.stderr
