"""The machine a launched vLLM or the simulator runs on: what AgentX's offload budget needs of it."""

from __future__ import annotations

from agentx_tui.procfs import mem_total_bytes


def local_dram_bytes() -> int | None:
    """The DRAM of this machine, the server's when it was launched here (`/proc/meminfo`); None when the
    kernel does not say (never a guess)."""
    return mem_total_bytes()
