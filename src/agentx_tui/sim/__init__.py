"""The built-in simulated vLLM engine: an OpenAI-compatible server with vLLM's endpoints and metrics,
driven by an engine model (paged KV cache with prefix caching, continuous batching, preemption) and a
roofline time model of a GPU × model profile. See docs/sim.md.

Public API:
- `serve` — run it as a server (blocking);
- `sim_command` — the same from a command line (`agentx-tui sim`, ``python -m agentx_tui.sim``: sim/cli.py);
- `add_cpu_tier_options`, `add_step_options` — its CPU-memory KV tier's options, and those of what a step
  carries (its token budget, speculative decoding), for a command line that embeds it;
- `SpecDecoding` — speculative decoding's K draft tokens and acceptance length (`--spec K:AL`);
- `SimServer` — the same inside a running event loop (``await server.serve()``, ``server.stop()``);
- `list_profiles`, `load_profile`, `SimProfile` — the GPU × model profiles;
- `SimEngine`, `create_app` — the engine and its starlette app, for embedding.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agentx_tui.sim.defaults import DEFAULT_PROFILE

if TYPE_CHECKING:
    from agentx_tui.sim.api import create_app
    from agentx_tui.sim.cli import add_cpu_tier_options, add_step_options, sim_command
    from agentx_tui.sim.engine import SimEngine
    from agentx_tui.sim.profiles import SimProfile, list_profiles, load_profile
    from agentx_tui.sim.server import SimServer, serve
    from agentx_tui.sim.spec import SpecDecoding

# What this package holds loads only when used: `agentx-tui --help` reads DEFAULT_PROFILE, and the
# profiles (YAML, pydantic) and the server stack (HTTP server, prometheus_client, starlette) cost
# a quarter of a second to import.
_LAZY = {
    "create_app": "api",
    "SimEngine": "engine",
    "SimServer": "server",
    "serve": "server",
    "SimProfile": "profiles",
    "list_profiles": "profiles",
    "load_profile": "profiles",
    "sim_command": "cli",
    "add_cpu_tier_options": "cli",
    "add_step_options": "cli",
    "SpecDecoding": "spec",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"agentx_tui.sim.{_LAZY[name]}"), name)
    raise AttributeError(name)


__all__ = [
    "DEFAULT_PROFILE",
    "SimEngine",
    "SimProfile",
    "SimServer",
    "SpecDecoding",
    "add_cpu_tier_options",
    "add_step_options",
    "create_app",
    "list_profiles",
    "load_profile",
    "serve",
    "sim_command",
]
