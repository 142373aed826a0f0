#!/usr/bin/env bash
# Set up both environments (once) and run the whole test suite: lint, types, unit tests and the
# integration tests against a real vLLM engine (CPU build, tiny model). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
AGENTX_EXTRAS=test,ray source scripts/_venv.sh
bash scripts/setup-vllm-env.sh
# The fleet tests read telemetry through a real Prometheus (Debian's package).
bash scripts/setup-prometheus.sh
# The `--web` test opens the dashboard in Debian's chromium (through Playwright, which downloads nothing).
bash scripts/setup-chromium.sh
# The end-to-end dashboard test drives the real app in tmux.
if ! command -v tmux >/dev/null && command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
    (apt-get update -qq && apt-get install -y -qq tmux) >/dev/null
fi
echo "== ruff" && .venv/bin/ruff check src tests bench && .venv/bin/ruff format --check src tests bench
echo "== mypy" && .venv/bin/mypy
echo "== pytest" && exec .venv/bin/pytest -q -p no:cacheprovider "$@"
