"""How to start vLLM (docs/architecture.md `--vllm-cmd`), in order:

1. `--vllm-cmd CMD`: the user's command, split like a shell would (but never run through one);
2. `AGENTX_VLLM_PYTHON`: a Python with vLLM installed;
3. the project's own real-engine environment made by `scripts/setup-vllm-env.sh`
   (`$AGENTX_VLLM_ENV`, default `~/.cache/agentx-tui/vllm-env`);
4. `vllm` on PATH: its interpreter (read from the script's `#!` line) runs the API server module.

Every Python form runs `python -m vllm.entrypoints.openai.api_server --model MODEL`, which works for
the GPU and the CPU builds alike (the CPU build's `vllm` command is broken: docs/vllm.md).
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from agentx_tui.errors import VllmNotFoundError

API_SERVER_MODULE = "vllm.entrypoints.openai.api_server"


def default_env_dir() -> Path:
    override = os.environ.get("AGENTX_VLLM_ENV")
    if override:
        return Path(override)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "agentx-tui" / "vllm-env"


@dataclass(frozen=True)
class VllmCommand:
    """A resolved way to run vLLM: `argv_for(model)` gives the full command line."""

    prefix: tuple[str, ...]
    python: str | None  # the interpreter, when known (builds the tiny model)
    source: str  # where it came from, for messages
    module_form: bool  # `python -m …api_server --model M` rather than `vllm serve M`

    def argv_for(self, model: str) -> list[str]:
        if self.module_form:
            return [*self.prefix, "--model", model]
        return [*self.prefix, model]


def _python_form(python: str, source: str) -> VllmCommand:
    return VllmCommand((python, "-m", API_SERVER_MODULE), python, source, True)


def _interpreter_of(script: Path) -> str | None:
    try:
        with script.open("rb") as f:
            first = f.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if first.startswith("#!"):
        parts = first[2:].split()
        if parts and Path(parts[0]).name.startswith("python") and Path(parts[0]).exists():
            return parts[0]
    return None


def resolve_vllm_command(vllm_cmd: str | None = None) -> VllmCommand:
    if vllm_cmd:
        prefix = tuple(shlex.split(vllm_cmd))
        if not prefix:
            raise VllmNotFoundError("--vllm-cmd is empty.", "Give the command that starts vLLM.")
        module_form = API_SERVER_MODULE in prefix
        python = prefix[0] if module_form else None
        if not module_form and Path(prefix[-1]).name == "vllm":
            prefix = (*prefix, "serve")
        return VllmCommand(prefix, python, "--vllm-cmd", module_form)
    env_python = os.environ.get("AGENTX_VLLM_PYTHON")
    if env_python:
        return _python_form(env_python, "AGENTX_VLLM_PYTHON")
    project_python = default_env_dir() / "bin" / "python"
    if project_python.exists():
        return _python_form(str(project_python), f"the real-engine environment at {default_env_dir()}")
    on_path = shutil.which("vllm")
    if on_path:
        interpreter = _interpreter_of(Path(on_path))
        if interpreter:
            return _python_form(interpreter, f"vllm on PATH ({on_path})")
        return VllmCommand((on_path, "serve"), None, f"vllm on PATH ({on_path})", False)
    raise VllmNotFoundError(
        "No vLLM installation was found.",
        "Install vLLM, run scripts/setup-vllm-env.sh, or pass --vllm-cmd / set AGENTX_VLLM_PYTHON.",
    )
