"""Engine side: launch vLLM or the simulator, or attach to running servers (docs/architecture.md).

Public:
    start_vllm, start_sim, LaunchedServer  — launched servers, always stopped with their whole tree
    probe_server, ServerInfo               — what a server is (model, max_model_len, version, block size)
    resolve_vllm_command, VllmCommand      — how vLLM is started (--vllm-cmd and fallbacks)
    ensure_tiny_model                      — the bundled tiny random-weight model
    stopped_on_exit                        — stop what a block launched, whatever ends it
    local_dram_bytes                       — this machine's DRAM, a launched server's (AgentX's offload budget)
"""

from agentx_tui.engine.attach import probe_server
from agentx_tui.engine.host import local_dram_bytes
from agentx_tui.engine.info import ServerInfo
from agentx_tui.engine.launcher import TINY, LaunchedServer, start_sim, start_vllm
from agentx_tui.engine.ports import free_port
from agentx_tui.engine.process import LogBuffer, ManagedProcess, stopped_on_exit
from agentx_tui.engine.tiny_model import TINY_SERVED_NAME, ensure_tiny_model
from agentx_tui.engine.vllm_cmd import VllmCommand, default_env_dir, resolve_vllm_command

__all__ = [
    "TINY",
    "TINY_SERVED_NAME",
    "LaunchedServer",
    "LogBuffer",
    "ManagedProcess",
    "ServerInfo",
    "VllmCommand",
    "default_env_dir",
    "ensure_tiny_model",
    "free_port",
    "local_dram_bytes",
    "probe_server",
    "resolve_vllm_command",
    "start_sim",
    "start_vllm",
    "stopped_on_exit",
]
