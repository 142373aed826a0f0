"""The cache pane (³) as a user sees it, in a real terminal (tmux): coding agents against the simulated
engine with a GPU cache too small for them and a CPU KV tier, at 80×24, then at 200×60; the prompt
tokens by source, the offload traffic and KV residency come up live; `q` ends the app, exit status 0,
nothing left running. The captures are printed (shown with -s): docs/sim.md shows one."""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.procs import descendants, kill_left
from tests.helpers.sim import sim_server
from tests.helpers.tmux import Tmux

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (scripts/test.sh installs it)"),
]

SHOW_DEADLINE_S = 90.0  # the first evictions need the GPU cache full: ~20 s of agents on a busy machine
# 3,000 blocks of 16 tokens (48 K tokens) for 8 coding agents of 12 K-token prefixes and growing contexts.
SIM = ("--num-gpu-blocks-override", "3000", "--cpu-kv-gb", "20")
NARROW = re.compile(
    r"source\s+comp (\d+)% GPU (\d+)% offl (\d+)%.*?offload ↓([\d.]+) ↑([\d.]+) GB/s.*?resid\.\s+evict (\S+ s)/",
    re.S,
)


def _narrow(screen: str) -> dict[str, float] | None:
    """The narrow pane's figures once the tier has served tokens and a block has been evicted."""
    m = NARROW.search(screen)
    if m is None or int(m[3]) == 0 or float(m[4]) == 0:
        return None
    return {"computed": int(m[1]), "gpu": int(m[2]), "offload": int(m[3]), "load GB/s": float(m[4])}


def test_the_cache_pane_shows_the_tier_live_at_80x24_and_200x60(tmux: Tmux, tmp_path: Path) -> None:
    with sim_server(*SIM) as url:
        # Without COLUMNS and LINES: the tmux server's environment may carry the test session's, and a
        # program that reads them (Textual does, through shutil) would never see the resize below.
        flags = "-w coding-agent -u 8 --max-think 1 --seed 5"
        app = f"env -u COLUMNS -u LINES {sys.executable} -m agentx_tui --attach {url} {flags}"
        status_file = tmux.start(app, tmp_path, 80, 24)
        root = int(tmux.pane("pane_pid"))
        tree: set[int] = set()
        try:
            started, screen, figures = time.monotonic(), "", None
            while time.monotonic() < started + SHOW_DEADLINE_S and tmux.pane("pane_dead") != "1":
                screen = tmux.screen()
                if (figures := _narrow(screen)) is not None:
                    break
                time.sleep(1.0)
            print(f"80x24, {time.monotonic() - started:.0f} s in:\n{screen}")  # shown with -s
            assert figures is not None, f"no offload figures within {SHOW_DEADLINE_S:.0f} s\n{screen}"
            assert 98 <= figures["computed"] + figures["gpu"] + figures["offload"] <= 102  # rounded shares
            assert "residency p50/p90, all sampled" in screen, screen  # the simulator records every block
            tree = {root} | descendants(root)

            tmux("resize-window", "-t", "ui", "-x", "200", "-y", "60")
            deadline, wide = time.monotonic() + 20, ""
            while time.monotonic() < deadline:
                wide = tmux.screen()
                if "CPU tier 20.0 GB" in wide and "every block sampled" in wide:
                    break
                time.sleep(0.5)
            print(f"200x60:\n{wide}")
            assert "CPU tier 20.0 GB" in wide and "every block sampled" in wide, wide
            assert re.search(r"▓ offload \d+\.\d% [\d.]+(?: [KM])?/s", wide), wide
            assert re.search(r"load [\d.]+ GB/s \d+ ms/GB", wide), wide

            tmux.quit(status_file, tree)
        finally:
            kill_left(tree)  # only if the test failed: never leave the app behind
