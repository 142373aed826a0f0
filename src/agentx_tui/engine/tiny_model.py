"""The bundled tiny random-weight model (docs/vllm.md), built once into a cache directory and reused.

Building needs torch, transformers and tokenizers, which live with vLLM, not in agentx-tui's own
environment: the builder script runs under the vLLM interpreter. Concurrent builders (parallel
test sessions) are serialised with a file lock; the model appears atomically (build, then rename).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from agentx_tui.errors import LaunchError

TINY_MODEL_VERSION = 1
TINY_SEED = 0
TINY_SERVED_NAME = "agentx-tiny"
TINY_MAX_MODEL_LEN = 4096
_BUILDER = Path(__file__).with_name("_build_tiny_model.py")


def tiny_model_dir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "agentx-tui" / "models" / f"tiny-v{TINY_MODEL_VERSION}-seed{TINY_SEED}"


def ensure_tiny_model(python: str, target: Path | None = None) -> Path:
    """Return the tiny model's directory, building it with `python` (one with vLLM) if needed."""
    target = target or tiny_model_dir()
    if (target / "agentx_tiny.json").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with (target.parent / f".{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / "agentx_tiny.json").exists():
            return target
        work = Path(tempfile.mkdtemp(prefix=".tiny-", dir=target.parent))
        try:
            result = subprocess.run(
                [python, str(_BUILDER), str(work), str(TINY_SEED)],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if result.returncode != 0:
                tail = (result.stderr or result.stdout).strip().splitlines()[-8:]
                raise LaunchError(
                    f"Building the tiny model with {python} failed (exit {result.returncode}).",
                    "That Python needs torch, transformers and tokenizers (run scripts/setup-vllm-env.sh).",
                    log_tail=tail,
                )
            os.replace(work, target)
        except (OSError, subprocess.SubprocessError) as exc:
            raise LaunchError(f"Could not build the tiny model: {exc}.", "Check --vllm-cmd.") from exc
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target
