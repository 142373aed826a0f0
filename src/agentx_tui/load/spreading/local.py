"""The load in this process: one `Driver`, whose statistics are the run's (a `LoadGenerator`)."""

from __future__ import annotations

import time
from collections.abc import Callable

from agentx_tui.load.sending import Driver, HealthProbe
from agentx_tui.load.spreading.client_health import HealthBook
from agentx_tui.load.spreading.driven import DriverControls
from agentx_tui.load.spreading.generator import LoadSample, WorkerLoss
from agentx_tui.measure import ClientStats


class LocalLoad(DriverControls):
    """The users in this process: one `Driver`, whose statistics are the run's."""

    workers = 1

    def __init__(self, driver: Driver) -> None:
        assert driver.stats is not None
        self.driver = driver
        self.stats: ClientStats = driver.stats
        self.on_event: Callable[[str], None] | None = None
        self._probe = HealthProbe()
        self.health = HealthBook(workers=1)

    @property
    def users(self) -> int:
        return self.driver.users

    # One process: it cannot lose a worker and go on.
    users_lost = 0
    losses: tuple[WorkerLoss, ...] = ()

    def restart_lost(self) -> None:
        """Nothing to restart: the users run in this process."""

    @property
    def paused(self) -> bool:
        return self.driver.paused

    @property
    def finished(self) -> bool:
        return self.driver.finished

    async def start(self) -> None:
        self.driver.on_event = self._emit
        self._probe.start()
        await self.driver.start()

    def _emit(self, line: str) -> None:
        if self.on_event is not None:
            self.on_event(line)

    async def stop(self) -> None:
        await self.driver.stop()
        await self._probe.stop()

    def set_users(self, users: int) -> None:
        self.driver.set_users(users)

    def reset_window(self) -> None:
        self.driver.reset_window()

    async def sample(self) -> LoadSample:
        figures = self.driver.figures(time.monotonic())
        health = self.health.tick([self._probe.look()], self.driver.queued, figures.totals.output_tokens)
        return LoadSample(figures, health, self.driver.rows(), self.driver.states())
