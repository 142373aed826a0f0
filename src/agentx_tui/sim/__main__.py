"""``python -m agentx_tui.sim``: the simulator's command line (sim/cli.py), the one `agentx-tui sim` runs."""

from agentx_tui.sim.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
