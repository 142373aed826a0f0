"""agentx-tui: a terminal dashboard for live agent-serving observation.

The public surface is small on purpose: the command line (`agentx-tui`, see docs/architecture.md) and the
report file (docs/metrics.md). Inside, the core packages (`engine`, `load`, `telemetry`, `cost`, `report`,
`sim`) never import Textual; only `ui` does.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
