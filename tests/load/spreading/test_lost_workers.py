"""A load worker that dies mid-run (docs/scale.md, "A lost load worker"): the pool's bookkeeping, with
workers that are fakes (the real processes and the simulator: tests/load/spreading/test_lost_worker_runs.py).

The pool sees the death at the tick's question, counts the users the worker drove as lost, says so in
one sentence, and on `restart_lost` starts a fresh worker in its place past the sessions its
predecessor took."""

from __future__ import annotations

import asyncio
from typing import Any

from agentx_tui.engine import ServerInfo
from agentx_tui.errors import TargetError
from agentx_tui.load import LoadSettings, PreparedWorkload, prepare
from agentx_tui.load.sending.health import ProcessHealth
from agentx_tui.load.spreading.pool import WorkerPool
from agentx_tui.load.spreading.process import exit_words
from agentx_tui.load.spreading.protocol import Command, WorkerReport, WorkerSpec
from agentx_tui.load.workload.spec import parse_workload
from tests.helpers.waiting import until
from tests.load.fake_openai import FakeServer


class FakeWorker:
    """A worker as the pool sees it; `die` makes its next answer the closed pipe of a dead process."""

    remote_clock = False

    def __init__(
        self, spec: WorkerSpec, pid: int, *, start_error: str | None = None, hold: asyncio.Event | None = None
    ) -> None:
        self.spec = spec
        self.index = spec.index
        self.pid: int | None = pid
        self.told: list[tuple[Any, ...]] = []
        self.sessions_taken = 0
        self.death: str | None = None
        self.closed = False
        self._start_error = start_error
        self._hold = hold

    def die(self, how: str = "SIGKILL") -> None:
        self.death = how

    async def started(self, timeout_s: float) -> None:
        if self._hold is not None:
            await self._hold.wait()
        if self._start_error is not None:
            raise TargetError(self._start_error)

    async def call(self, command: Command, *args: Any) -> Any:
        if self.death is not None or self.closed:
            raise ConnectionError(f"load worker {self.index} is gone")
        if command == Command.DRAIN:
            return True
        return WorkerReport(
            index=self.index, completed=[], failed=[], sessions_ended=[], rows=(), states={},
            health=ProcessHealth(None, None, None), in_flight=0, queued=0, finished=False, events=[],
            sessions_taken=self.sessions_taken,
        )  # fmt: skip

    def tell(self, command: Command, *args: Any) -> None:
        self.told.append((command, *args))

    def alive(self) -> bool:
        return self.death is None and not self.closed

    async def ended(self) -> str:
        return self.death or "still running"

    async def close(self) -> None:
        self.closed = True


class Spawner:
    """The pool's `spawn`: fake workers with pids 1001, 1002, …; `fail_next` makes the next one fail to
    start, `hold_next` makes it wait for that event before it has started."""

    def __init__(self) -> None:
        self.made: list[FakeWorker] = []
        self.fail_next: str | None = None
        self.hold_next: asyncio.Event | None = None

    def __call__(self, spec: WorkerSpec) -> FakeWorker:
        worker = FakeWorker(spec, 1001 + len(self.made), start_error=self.fail_next, hold=self.hold_next)
        self.fail_next, self.hold_next = None, None
        self.made.append(worker)
        return worker


def _workload() -> PreparedWorkload:
    spec = parse_workload({"shared_prefix_tokens": 20, "steps": 2, "output_tokens": 5}, source="test", default_name="t")
    return prepare(spec)


async def _pool(fake: FakeServer, users: int, workers: int) -> tuple[WorkerPool, Spawner, list[str]]:
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    spawner = Spawner()
    pool = WorkerPool(_workload(), (info,), LoadSettings(users=users), workers=workers, spawn=spawner)
    said: list[str] = []
    pool.on_event = said.append
    await pool.start()
    return pool, spawner, said


def test_a_dead_process_is_named_by_its_signal_or_its_exit_code() -> None:
    assert exit_words(-9) == "SIGKILL" and exit_words(-15) == "SIGTERM"
    assert exit_words(1) == "exit code 1" and exit_words(0) == "exit code 0"


async def test_a_worker_that_dies_is_said_and_counted_at_the_next_tick(fake: FakeServer) -> None:
    pool, spawner, said = await _pool(fake, users=16, workers=2)
    try:
        await pool.sample()
        assert pool.users_lost == 0 and pool.losses == ()
        spawner.made[1].die("SIGKILL")
        await pool.sample()  # the tick after the death: its question finds the pipe closed
        (loss,) = pool.losses
        assert (loss.worker, loss.workers, loss.pid, loss.how) == (1, 2, 1002, "SIGKILL")
        assert (loss.users, loss.users_lost, loss.users_left) == (16, 8, 8)
        assert loss.restarted_at is None and loss.restart_error is None
        assert said[-1] == "load worker 2 of 2 (pid 1002) died (SIGKILL): its 8 users are gone; 8 of 16 remain"
        assert pool.users == 16 and pool.users_lost == 8  # asked for 16, 8 driven
        assert spawner.made[1].closed
        await pool.sample()
        assert len(pool.losses) == 1 and len(said) == 2  # said once ("2 load workers started", the loss)
        # The lost share follows the users asked for: of 10, worker 2 of 2 would run 5.
        pool.set_users(10)
        assert pool.users_lost == 5
        assert spawner.made[0].told[-1] == (Command.USERS, 10) and spawner.made[1].told == []
    finally:
        await pool.stop()


async def test_every_worker_lost_leaves_no_user(fake: FakeServer) -> None:
    pool, spawner, said = await _pool(fake, users=3, workers=2)
    try:
        for worker in spawner.made:
            worker.die("exit code 1")
        await pool.sample()
        first, second = pool.losses
        assert (first.users_lost, first.users_left) == (2, 1)  # worker 1 of 2 ran users 0 and 2
        assert (second.users_lost, second.users_left) == (1, 0)
        assert pool.users_lost == 3 and not pool.finished
        assert said[-1].endswith("its 1 user is gone; 0 of 3 remain")
    finally:
        await pool.stop()


async def test_a_restarted_worker_takes_the_same_users_past_its_predecessors_sessions(fake: FakeServer) -> None:
    pool, spawner, said = await _pool(fake, users=16, workers=2)
    try:
        dead = spawner.made[1]
        dead.sessions_taken = 5
        await pool.sample()  # it reports having taken 5 sessions of its stride
        dead.die()
        await pool.sample()
        pool.pause()
        pool.restart_lost()
        await until(lambda: pool.users_lost == 0, what="the fresh worker running")
        fresh = spawner.made[2]
        assert fresh.index == 1 and fresh.spec.count == 2 and fresh.spec.settings.users == 16
        # Past the 5 it reported and one more per user (each may have begun one since it last reported).
        assert fresh.spec.resume_at == 5 + 8
        assert fresh.told == [(Command.USERS, 16), (Command.PAUSE,)]  # what changed while it started
        (loss,) = pool.losses
        assert loss.restarted_at is not None and loss.restarted_at >= loss.at
        assert said[-1] == "load worker 2 of 2 restarted (pid 1003): its 8 users run again; 16 of 16 running"
        pool.resume()
        assert fresh.told[-1] == (Command.RESUME,)  # the fresh worker is one of the pool's now
        # It dies in turn: a second loss, and a third worker begins past both.
        fresh.sessions_taken = 2
        await pool.sample()
        fresh.die("SIGTERM")
        await pool.sample()
        assert [loss.pid for loss in pool.losses] == [1002, 1003] and pool.users_lost == 8
        pool.restart_lost()
        await until(lambda: pool.users_lost == 0, what="the third worker running")
        assert spawner.made[3].spec.resume_at == 13 + 2 + 8
    finally:
        await pool.stop()


async def test_a_worker_that_cannot_be_restarted_says_why(fake: FakeServer) -> None:
    pool, spawner, said = await _pool(fake, users=4, workers=2)
    try:
        spawner.made[0].die()
        await pool.sample()
        spawner.fail_next = "Load worker 0 did not start within 60 s."
        pool.restart_lost()
        await until(lambda: pool.losses[0].restart_error is not None, what="the failed restart")
        assert pool.losses[0].restart_error == "Load worker 0 did not start within 60 s"
        assert pool.users_lost == 2 and spawner.made[2].closed
        assert said[-1] == (
            "load worker 1 of 2 could not be restarted: Load worker 0 did not start within 60 s; 2 of 4 users remain"
        )
    finally:
        await pool.stop()


async def test_stopping_while_a_worker_restarts_leaves_nothing_running(fake: FakeServer) -> None:
    pool, spawner, _ = await _pool(fake, users=4, workers=2)
    spawner.made[1].die()
    await pool.sample()
    spawner.hold_next = asyncio.Event()  # never set: the fresh worker is still starting when the run stops
    pool.restart_lost()
    await until(lambda: len(spawner.made) == 3, what="the restart under way")
    await pool.stop()
    starting = spawner.made[2]
    assert starting.closed and starting.told[-1] == (Command.STOP,)
    assert pool.users_lost == 2
