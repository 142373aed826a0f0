"""What the main process and a load worker say to each other, whatever carries it (a pipe, Ray calls).

The main process sends `Command`s; `collect`, `drain` and `stop` have an answer (`ANSWERS`), the
others none. A worker reports with a `WorkerReport`: what happened since it was last asked (request
summaries, the tokens of its requests in flight, its users' rows, its health). `WorkerHandle` is one
worker as the pool sees it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from agentx_tui.engine.info import ServerInfo
from agentx_tui.load.sending import LoadSettings
from agentx_tui.load.sending.health import ProcessHealth
from agentx_tui.load.workload import PreparedWorkload
from agentx_tui.load.workload.text import TokenModel
from agentx_tui.measure import Completed, Failed, Streamed
from agentx_tui.snapshot import UserRow


class Command(StrEnum):
    COLLECT = "collect"  # → a WorkerReport
    DRAIN = "drain"  # (timeout_s) → True when nothing is in flight any more
    STOP = "stop"  # → the final WorkerReport
    USERS = "users"  # (the run's users; the worker takes its share)
    PAUSE = "pause"
    RESUME = "resume"
    WORKLOAD = "workload"  # (a PreparedWorkload)


class WorkerAnswer(StrEnum):
    """What a worker sends back: that it started or could not, or its answer to a `Command`."""

    STARTED = "started"
    FAILED = "failed"  # (why, in words): the worker could not start
    REPORT = "report"
    DRAINED = "drained"
    STOPPED = "stopped"


ANSWERS = {
    Command.COLLECT: WorkerAnswer.REPORT,
    Command.DRAIN: WorkerAnswer.DRAINED,
    Command.STOP: WorkerAnswer.STOPPED,
}


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker needs, picklable: it calibrates nothing and reads no file again."""

    index: int
    count: int
    workload: PreparedWorkload
    servers: tuple[ServerInfo, ...]
    token_models: dict[str, TokenModel]
    settings: LoadSettings  # the run's: users (the worker takes its share), seed, nonce, key, …
    # Where its ids begin in its stride: 0, or for a worker restarted in place of one that died, past
    # the sessions that one took, so it replays none of them again (docs/scale.md).
    resume_at: int = 0


@dataclass(frozen=True)
class WorkerReport:
    """A worker's answer to `collect` (and to `stop`)."""

    index: int
    completed: list[Completed]
    failed: list[Failed]
    sessions_ended: list[tuple[str, int]]  # (how a session ended, its tree id or -1)
    rows: tuple[UserRow, ...]
    states: dict[str, int]
    health: ProcessHealth
    in_flight: int
    queued: int
    finished: bool
    events: list[str]
    now: float = 0.0  # the worker's `time.monotonic()` when it reported (another node's clock, with Ray)
    sessions_taken: int = 0  # sessions its driver has taken so far (a restarted worker begins past them)
    # The tokens its requests in flight streamed since its last report, for the live window.
    streamed: Streamed = field(default_factory=Streamed)


class WorkerHandle(Protocol):
    """One worker as the pool sees it (a process with a pipe, or a Ray actor)."""

    index: int
    # Whether the worker's clock is another node's: its times are then moved onto the main clock.
    remote_clock: bool
    pid: int | None  # its process id, once known (None: a Ray actor not started yet)

    async def started(self, timeout_s: float) -> None:
        """Until the worker has started; `TargetError` (one sentence) when it cannot."""
        ...

    async def call(self, command: Command, *args: Any) -> Any:
        """Send a command and wait for its answer (collect, drain, stop)."""
        ...

    def tell(self, command: Command, *args: Any) -> None:
        """Send a command that has no answer (users, pause, resume, workload)."""
        ...

    def alive(self) -> bool: ...

    async def ended(self) -> str:
        """How a worker that stopped answering ended, in words ("SIGKILL", "exit code 1", "Ray actor died:
        …"); one whose process still runs is killed first (it cannot be spoken to any more)."""
        ...

    async def close(self) -> None: ...
