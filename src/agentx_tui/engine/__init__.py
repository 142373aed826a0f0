"""Engine side: launch vLLM or the simulator, or attach to running servers (DESIGN §2).

Public:
    start_vllm, start_sim, LaunchedServer  — launched servers, always stopped with their whole tree
    probe_endpoint, EndpointInfo           — what an attached URL is (model, max_model_len, version)
    resolve_vllm_command, VllmCommand      — how vLLM is started (--vllm-cmd and fallbacks)
    ensure_tiny_model                      — the bundled tiny random-weight model
    stopped_on_exit                        — stop what a block launched, whatever ends it
"""

from agentx_tui.engine.attach import EndpointInfo, probe_endpoint
from agentx_tui.engine.launcher import TINY, LaunchedServer, start_sim, start_vllm
from agentx_tui.engine.ports import free_port
from agentx_tui.engine.process import LogBuffer, ManagedProcess, stopped_on_exit
from agentx_tui.engine.tiny_model import TINY_SERVED_NAME, ensure_tiny_model
from agentx_tui.engine.vllm_cmd import VllmCommand, default_env_dir, resolve_vllm_command

__all__ = [
    "TINY",
    "TINY_SERVED_NAME",
    "EndpointInfo",
    "LaunchedServer",
    "LogBuffer",
    "ManagedProcess",
    "VllmCommand",
    "default_env_dir",
    "ensure_tiny_model",
    "free_port",
    "probe_endpoint",
    "resolve_vllm_command",
    "start_sim",
    "start_vllm",
    "stopped_on_exit",
]
