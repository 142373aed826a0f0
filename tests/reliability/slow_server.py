"""A stand-in for a vLLM that is still starting: `python slow_server.py MODEL --host H --port P ...`.

Like vLLM's API server it starts helper processes in its own process group (an "engine core" that
starts a "worker"), prints log lines, and never answers /health: agentx-tui waits for it until it is
stopped. The helpers ignore SIGINT, as vLLM's engine core does, so only a signal to the whole group
stops them.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time


def _helper(name: str, spawn: str | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if spawn:
        subprocess.Popen([sys.executable, __file__, "--helper", spawn])
    print(f"{name} started", flush=True)
    while True:
        time.sleep(1)


def main() -> None:
    if sys.argv[1:2] == ["--helper"]:
        name = sys.argv[2]
        _helper(name, "worker" if name == "engine-core" else None)
        return
    print("INFO slow stand-in server: loading the model...", flush=True)
    subprocess.Popen([sys.executable, __file__, "--helper", "engine-core"])
    step = 0
    while True:
        step += 1
        print(f"INFO still loading ({step})", flush=True)
        time.sleep(1)


if __name__ == "__main__":
    main()
