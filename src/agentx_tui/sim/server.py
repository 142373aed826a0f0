"""Running the simulator as an HTTP server (uvicorn, with httptools' compiled HTTP parser) in the
foreground or inside a running loop."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
from collections.abc import AsyncIterator, Iterator

import uvicorn
from starlette.applications import Starlette

from agentx_tui.errors import TargetError
from agentx_tui.sim.api import create_app
from agentx_tui.sim.defaults import DEFAULT_HOST, DEFAULT_PORT, DEFAULT_PROFILE
from agentx_tui.sim.engine import DEFAULT_STREAM_INTERVAL_S, SimEngine
from agentx_tui.sim.profiles import SimProfile, load_profile
from agentx_tui.sim.spec import SpecDecoding

# Open streams get this long to finish when the server stops.
SHUTDOWN_GRACE_S = 1  # a simulator has nothing to save: stopping fast matters more (a Ctrl-C)


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise TargetError(
            f"The simulated engine cannot listen on {host}:{port}: {exc.strerror}.",
            "Choose another --port, or 0 for a free one.",
        ) from exc
    sock.listen(4096)
    sock.setblocking(False)
    return sock


class _Server(uvicorn.Server):
    # uvicorn re-raises a captured SIGTERM after shutting down, which would kill the caller of
    # `serve()`; `SimServer.serve` handles the signals itself and returns instead.
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class SimServer:
    """A simulator bound to a socket; `serve()` runs it until cancelled or signalled."""

    def __init__(
        self,
        profile: SimProfile,
        host: str = DEFAULT_HOST,
        port: int = 0,
        *,
        time_scale: float = 1.0,
        stream_interval_s: float = DEFAULT_STREAM_INTERVAL_S,
    ) -> None:
        self.profile = profile
        self.engine = SimEngine(profile, time_scale=time_scale, stream_interval_s=stream_interval_s)
        self.sock = bind_socket(host, port)
        self.host = host
        self.port: int = self.sock.getsockname()[1]

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            task = asyncio.create_task(self.engine.run(), name="agentx-sim-engine")
            try:
                yield
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

        self.app = create_app(self.engine, lifespan=lifespan)
        config = uvicorn.Config(
            self.app,
            http="httptools",  # compiled parsing: h11 (pure Python) cost a third more per request
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
            loop="none",
        )
        self.uvicorn = _Server(config)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def serve(self, ready_fd: int | None = None, *, handle_signals: bool = True) -> None:
        """Serve until `stop()`, cancellation, or (with ``handle_signals``) SIGINT/SIGTERM."""
        loop = asyncio.get_running_loop()
        signals = (signal.SIGINT, signal.SIGTERM) if handle_signals else ()
        for sig in signals:
            loop.add_signal_handler(sig, self.stop)

        async def announce() -> None:
            while not self.uvicorn.started:
                await asyncio.sleep(0.005)
            if ready_fd is not None:
                os.write(ready_fd, f"{self.port}\n".encode())
                os.close(ready_fd)

        notifier = asyncio.create_task(announce())
        try:
            await self.uvicorn.serve(sockets=[self.sock])
        finally:
            for sig in signals:
                loop.remove_signal_handler(sig)
            notifier.cancel()
            self.sock.close()

    def stop(self) -> None:
        self.uvicorn.should_exit = True


def serve(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    profile: str = DEFAULT_PROFILE,
    *,
    ready_fd: int | None = None,
    num_gpu_blocks: int | None = None,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
    cpu_kv_gb: float | None = None,
    cpu_kv_gbps: float | None = None,
    spec: SpecDecoding | None = None,
    time_scale: float = 1.0,
    stream_interval_s: float = DEFAULT_STREAM_INTERVAL_S,
) -> None:
    """Run the simulated engine on ``host:port`` until SIGINT/SIGTERM (blocking).

    ``port=0`` picks a free port. With ``ready_fd``, once the server accepts connections its port is
    written to that file descriptor as ASCII digits and a newline, and the descriptor is closed.
    ``num_gpu_blocks``/``max_num_seqs``/``max_num_batched_tokens`` override the profile like vLLM's
    ``--num-gpu-blocks-override`` etc. (small values create KV pressure on demand). ``cpu_kv_gb`` (GB)
    and ``cpu_kv_gbps`` (GB/s per direction and GPU) give the engine a CPU KV tier, ``spec`` speculative
    decoding (docs/sim.md).
    """
    prof = load_profile(profile).with_overrides(
        num_gpu_blocks=num_gpu_blocks,
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens,
        cpu_kv_gb=cpu_kv_gb,
        cpu_kv_gbps=cpu_kv_gbps,
        spec=spec,
    )
    server = SimServer(prof, host, port, time_scale=time_scale, stream_interval_s=stream_interval_s)
    try:
        import uvloop
    except ImportError:  # uvloop is not built for every platform
        asyncio.run(server.serve(ready_fd))
    else:
        uvloop.run(server.serve(ready_fd))
