"""`python -m agentx_tui`: the command line.

The guard matters: load workers are spawned processes (load/spreading/process.py), and a spawned process
imports the parent's main module again; it must not run the command line a second time."""

from agentx_tui.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
