"""The live controls of a holder of one `Driver`, passed straight to it: the in-process load
(`LocalLoad`) and a worker's side (`WorkerCore`) hold one each and forward these alike."""

from __future__ import annotations

from agentx_tui.load.sending import Driver
from agentx_tui.load.workload import PreparedWorkload


class DriverControls:
    """Pause, resume, switch workload and drain: each is its driver's (users are shared out
    differently by each holder, so `set_users` stays theirs)."""

    driver: Driver

    def pause(self) -> None:
        self.driver.pause()

    def resume(self) -> None:
        self.driver.resume()

    def set_workload(self, workload: PreparedWorkload) -> None:
        self.driver.set_workload(workload)

    async def drain(self, timeout_s: float) -> bool:
        return await self.driver.drain(timeout_s)
