"""The built-in simulated vLLM engine: an OpenAI-compatible server with vLLM's endpoints and metrics,
driven by an engine model (paged KV cache with prefix caching, continuous batching, preemption) and a
roofline time model of a GPU × model profile. See docs/sim.md.

Public API:
- `serve` — run it as a server (blocking); ``python -m agentx_tui.sim`` does the same;
- `SimServer` — the same inside a running event loop (``await server.serve()``, ``server.stop()``);
- `list_profiles`, `load_profile`, `SimProfile` — the GPU × model profiles;
- `SimEngine`, `create_app` — the engine and its starlette app, for embedding.
"""

from agentx_tui.sim.api import create_app
from agentx_tui.sim.engine import SimEngine
from agentx_tui.sim.profiles import SimProfile, list_profiles, load_profile
from agentx_tui.sim.server import SimServer, serve

DEFAULT_PROFILE = "h200/llama-3.1-8b"

__all__ = [
    "DEFAULT_PROFILE",
    "SimEngine",
    "SimProfile",
    "SimServer",
    "create_app",
    "list_profiles",
    "load_profile",
    "serve",
]
