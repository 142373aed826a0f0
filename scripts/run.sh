#!/usr/bin/env bash
# Set up the project's virtual environment (once) and run the dashboard.
# With no arguments the target is the built-in simulated engine (no GPU needed).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
exec .venv/bin/agentx-tui "$@"
