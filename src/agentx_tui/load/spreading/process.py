"""A load worker in a local process (`--workers N`): the standard library's `multiprocessing` (spawned
processes, a `Pipe` each, pickled tuples) carrying the protocol's commands to a `WorkerCore`.

A blocking reader thread on each side hands messages to the event loop, so neither loop ever waits on
the pipe. A worker that falls behind answers late: its summaries carry their own times, so they are
counted at the next tick, in the right seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import signal
import threading
from multiprocessing.connection import Connection
from typing import Any

from agentx_tui.errors import TargetError
from agentx_tui.load.spreading.protocol import ANSWERS, Command, WorkerAnswer, WorkerSpec
from agentx_tui.load.spreading.worker import WorkerCore

_STOP_TIMEOUT_S = 10.0
_ENDED_WAIT_S = 2.0  # for a worker whose pipe closed to be reaped (it is being torn down)
_START_HINT = "Check that the servers answer, or run with --workers 1 to load from this process."


def exit_words(code: int | None) -> str:
    """A worker process's end in words: the signal that killed it ("SIGKILL"), or its exit code."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def worker_main(conn: Connection, spec: WorkerSpec) -> None:
    """A worker process: run `WorkerCore` and answer the main process's commands until `stop`."""
    # Ctrl-C in the terminal reaches the whole process group: the main process decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import uvloop

        uvloop.run(_serve(conn, spec))
    except ImportError:  # pragma: no cover - uvloop is a dependency, but not on Windows
        asyncio.run(_serve(conn, spec))


async def _serve(conn: Connection, spec: WorkerSpec) -> None:
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()

    def read() -> None:  # a blocking reader thread: the event loop never waits on the pipe
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                message = (Command.STOP,)  # the main process is gone: stop too
            loop.call_soon_threadsafe(inbox.put_nowait, message)
            if message[0] == Command.STOP:
                return

    threading.Thread(target=read, name="agentx-worker-inbox", daemon=True).start()
    core = WorkerCore(spec)
    try:
        await core.start()
        conn.send((WorkerAnswer.STARTED, spec.index))
    except Exception as exc:  # calibration is done; a failure here is a server that went away
        conn.send((WorkerAnswer.FAILED, f"{type(exc).__name__}: {exc}"))
        return
    while True:
        command, *args = await inbox.get()
        if command == Command.COLLECT:
            conn.send((WorkerAnswer.REPORT, core.collect()))
        elif command == Command.USERS:
            core.set_users(args[0])
        elif command == Command.PAUSE:
            core.pause()
        elif command == Command.RESUME:
            core.resume()
        elif command == Command.WORKLOAD:
            core.set_workload(args[0])
        elif command == Command.DRAIN:
            conn.send((WorkerAnswer.DRAINED, await core.drain(args[0])))
        elif command == Command.STOP:
            await core.stop()
            with contextlib.suppress(OSError):
                conn.send((WorkerAnswer.STOPPED, core.collect()))
            return


class ProcessWorker:
    """A worker process and its pipe; answers are read by a thread and handed to the event loop."""

    remote_clock = False  # the same machine, the same monotonic clock

    def __init__(self, spec: WorkerSpec) -> None:
        self.index = spec.index
        context = multiprocessing.get_context("spawn")  # no fork of a process with threads and a loop
        self._conn, child = context.Pipe()
        self.process = context.Process(
            target=worker_main, args=(child, spec), name=f"agentx-worker-{spec.index}", daemon=True
        )
        self.process.start()
        self.pid: int | None = self.process.pid
        child.close()
        self._loop = asyncio.get_running_loop()
        self._answers: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self._lock = asyncio.Lock()
        threading.Thread(target=self._read, name=f"agentx-worker-{spec.index}-answers", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                message = self._conn.recv()
            except (EOFError, OSError):
                self._loop.call_soon_threadsafe(self._answers.put_nowait, ("gone",))
                return
            self._loop.call_soon_threadsafe(self._answers.put_nowait, message)

    async def started(self, timeout_s: float) -> None:
        try:
            kind, *rest = await asyncio.wait_for(self._answers.get(), timeout_s)
        except TimeoutError as exc:
            raise TargetError(f"Load worker {self.index} did not start within {timeout_s:g} s.", _START_HINT) from exc
        if kind != WorkerAnswer.STARTED:
            if kind == "gone":
                self._answers.put_nowait(("gone",))  # every later question fails at once too
            why = str(rest[0]).rstrip(".") if rest and kind == WorkerAnswer.FAILED else "its process exited"
            raise TargetError(f"Load worker {self.index} could not start: {why}.", _START_HINT)

    def tell(self, command: Command, *args: Any) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._conn.send((command, *args))

    async def call(self, command: Command, *args: Any) -> Any:
        expected = ANSWERS[command]
        async with self._lock:  # one question at a time: answers come back in order
            self.tell(command, *args)
            while True:
                kind, *rest = await self._answers.get()
                if kind == "gone":
                    self._answers.put_nowait(("gone",))
                    raise ConnectionError(f"load worker {self.index} is gone")
                if kind == expected:
                    return rest[0] if rest else None
                # The answer to a question whose asker was cancelled: nobody waits for it any more.

    def alive(self) -> bool:
        return self.process.is_alive()

    async def ended(self) -> str:
        # Its pipe closes as the kernel tears the process down, a moment before it can be reaped.
        await asyncio.to_thread(self.process.join, _ENDED_WAIT_S)
        if self.process.is_alive():  # its pipe broke, yet it runs: it cannot be told anything any more
            self.process.kill()
            await asyncio.to_thread(self.process.join, _ENDED_WAIT_S)
            return "its pipe broke; killed"
        return exit_words(self.process.exitcode)

    async def close(self) -> None:
        await asyncio.to_thread(self.process.join, _STOP_TIMEOUT_S)
        if self.process.is_alive():
            self.process.kill()
            await asyncio.to_thread(self.process.join, 2.0)
        self._conn.close()
