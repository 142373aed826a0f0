"""The simulator's defaults, in a module that imports nothing: `agentx-tui --help` reads the default
profile without loading the profiles or the server stack, and the server and its command line read
them without reading the package's `__init__` (which names every module here, for type checkers)."""

DEFAULT_PROFILE = "h200/llama-3.1-8b"  # the built-in default target: what a demo shows
DEFAULT_HOST = "127.0.0.1"  # loopback: the simulator has no authentication
DEFAULT_PORT = 8000  # vLLM's
