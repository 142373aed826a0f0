"""How much CPU the dashboard costs: CPU seconds per wall second, with and without the UI.

A fake source produces one Snapshot per second with 256 sessions and changing figures (the same
generator as the UI tests). Two child processes run it for the same number of ticks:

- ``none``: the source is consumed by a bare loop (what a headless sink costs at least);
- ``tui``: the real dashboard in a pseudo-terminal of the given size (the Linux driver, real escape
  sequences written and drained), like a user's terminal over SSH.

Each child measures its own CPU time (user + system) between the first and the last measured tick,
after a warm-up. The difference is the UI's cost; the goal is under 5% of one core.

    .venv/bin/python bench/tui_overhead.py [--ticks 30] [--sessions 256] [--size 200x60] [--refresh 0.5]
                                           [--profile PATH]

``--profile PATH`` also writes a cProfile of the whole ``tui`` child to PATH (read it with
``python -m pstats PATH``); the profiler slows the child, so its CPU figure is then not the one to quote.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

from agentx_tui.snapshot import Snapshot

ROOT = Path(__file__).resolve().parents[1]
WARMUP_TICKS = 3


class MeteredSource:
    """1 Hz snapshots; records process CPU and wall time at the first and last measured tick."""

    def __init__(self, ticks: int, sessions: int, interval_s: float = 1.0) -> None:
        self.ticks = ticks
        self.sessions = sessions
        self.interval_s = interval_s
        self.marks: list[tuple[float, float]] = []

    async def snapshots(self) -> AsyncIterator[Snapshot]:
        sys.path.insert(0, str(ROOT))
        from tests.ui.fakes import make_snapshot

        start = time.monotonic()
        for seq in range(1, WARMUP_TICKS + self.ticks + 2):
            # Sleep to the tick's deadline so a slow consumer does not stretch the run.
            await asyncio.sleep(max(0.0, start + seq * self.interval_s - time.monotonic()))
            if seq in (WARMUP_TICKS + 1, WARMUP_TICKS + self.ticks + 1):
                self.marks.append((time.process_time(), time.monotonic()))
            yield make_snapshot(seq, sessions=self.sessions, server_log=[f"INFO tick {seq}"])

    def result(self) -> dict[str, float]:
        (cpu0, wall0), (cpu1, wall1) = self.marks
        return {
            "cpu_s": cpu1 - cpu0,
            "wall_s": wall1 - wall0,
            "cpu_per_wall": (cpu1 - cpu0) / (wall1 - wall0),
        }


async def _run_none(source: MeteredSource) -> None:
    async for _ in source.snapshots():
        pass


def child(mode: str, ticks: int, sessions: int, refresh_s: float, out: Path, profile: Path | None = None) -> None:
    if profile is not None:
        import cProfile

        with cProfile.Profile() as profiler:
            child(mode, ticks, sessions, refresh_s, out)
        profiler.dump_stats(profile)
        return
    source = MeteredSource(ticks, sessions)
    if mode == "none":
        asyncio.run(_run_none(source))
    else:
        from agentx_tui.ui import AgentXApp

        app = AgentXApp(source, None, refresh_s=refresh_s)

        async def stop_when_done() -> None:
            while len(source.marks) < 2:
                await asyncio.sleep(0.1)
            app.exit()

        app.call_later(lambda: app.run_worker(stop_when_done()))
        app.run()
    out.write_text(json.dumps(source.result()))


def _spawn(mode: str, args: argparse.Namespace, out: Path) -> dict[str, float]:
    command = [
        sys.executable,
        __file__,
        "--child",
        mode,
        "--ticks",
        str(args.ticks),
        "--sessions",
        str(args.sessions),
        "--refresh",
        str(args.refresh),
        "--out",
        str(out),
    ]
    if args.profile is not None and mode == "tui":
        command += ["--profile", str(args.profile.resolve())]
    if mode == "none":
        subprocess.run(command, check=True, cwd=ROOT)
    else:
        columns, rows = (int(part) for part in args.size.split("x"))
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": str(rows)}
        process = subprocess.Popen(
            command, stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, env=env, start_new_session=True
        )
        os.close(slave)
        tail = bytearray()

        def drain() -> None:
            # The terminal side: read and discard everything, as fast as a real terminal would.
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                tail.extend(chunk)
                del tail[:-4000]

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        code = process.wait()
        os.close(master)
        if code != 0:
            raise SystemExit(f"the tui child failed with exit code {code}: {tail.decode(errors='replace')}")
    result: dict[str, float] = json.loads(out.read_text())
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ticks", type=int, default=30, help="measured ticks (1 s each)")
    parser.add_argument("--sessions", type=int, default=256)
    parser.add_argument("--size", default="200x60", help="terminal size COLSxROWS")
    parser.add_argument("--refresh", type=float, default=0.5, help="UI refresh interval, s")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the tui child to this file")
    parser.add_argument("--child", choices=["none", "tui"], help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.ticks, args.sessions, args.refresh, args.out, args.profile)
        return
    with tempfile.TemporaryDirectory() as tmp:
        none = _spawn("none", args, Path(tmp) / "none.json")
        tui = _spawn("tui", args, Path(tmp) / "tui.json")
    added = tui["cpu_per_wall"] - none["cpu_per_wall"]
    print(
        f"{args.sessions} sessions per snapshot, 1 snapshot/s, {args.ticks} ticks measured, "
        f"terminal {args.size}, UI refresh {args.refresh} s"
    )
    for name, figures in (("without UI", none), ("with UI", tui)):
        print(
            f"  {name + ':':<12}{figures['cpu_s']:.2f} CPU s over {figures['wall_s']:.1f} s"
            f" = {figures['cpu_per_wall'] * 100:.1f}% of a core"
        )
    print(f"  UI adds:    {added * 100:.1f}% of one core (goal: under 5%) -> {'OK' if added < 0.05 else 'OVER'}")


if __name__ == "__main__":
    main()
