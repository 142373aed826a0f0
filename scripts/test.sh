#!/usr/bin/env bash
# Set up both environments (once) and run the whole test suite: lint, types, unit tests and the
# integration tests against a real vLLM engine (CPU build, tiny model). Extra arguments go to pytest.
#
# --quick: the loop while you work: lint, types and every test that needs no real vLLM, Prometheus or
# browser (markers `vllm`, `prometheus`, `browser`) but the dozen whole runs and sweeps of half a minute
# or more (marker `long`), setting none of those up, over 4 pytest processes (pytest-xdist, a test file's
# tests in one process): about 5 minutes on a 2-core machine, as its tests mostly wait on the
# subprocesses they start. The full suite runs those the same way, then the tests
# that need the real engines in one process, where one real vLLM serves them all. Given arguments of
# your own, the full suite runs in one process with them (a `-m` of yours would undo the split).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=false
pytest_args=()
for arg in "$@"; do
    if [[ $arg == --quick ]]; then quick=true; else pytest_args+=("$arg"); fi
done
AGENTX_EXTRAS=test,ray source scripts/_venv.sh
real_parts="vllm or prometheus or browser"  # the markers of the tests that need a real engine
no_engine=(-m "not ($real_parts)" -n 4 --dist loadfile)
if $quick; then
    # The inner loop leaves out the few whole runs and sweeps of half a minute or more (marker `long`).
    pytest_args=(-m "not ($real_parts or long)" -n 4 --dist loadfile "${pytest_args[@]}")
else
    bash scripts/setup-vllm-env.sh
    # The fleet tests read telemetry through a real Prometheus (Debian's package).
    bash scripts/setup-prometheus.sh
    # The `--web` test opens the dashboard in Debian's chromium (through Playwright, which downloads nothing).
    bash scripts/setup-chromium.sh
    # The end-to-end dashboard test drives the real app in tmux.
    if ! command -v tmux >/dev/null && command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
        (apt-get update -qq && apt-get install -y -qq tmux) >/dev/null
    fi
fi
echo "== ruff" && .venv/bin/ruff check src tests bench && .venv/bin/ruff format --check src tests bench
echo "== mypy" && .venv/bin/mypy
pytest=(.venv/bin/pytest -q -p no:cacheprovider)
if ! $quick && [[ ${#pytest_args[@]} -eq 0 ]]; then
    echo "== pytest: no real engine (4 processes)"
    "${pytest[@]}" "${no_engine[@]}"
    echo "== pytest: real vLLM, Prometheus, browser (one process)"
    exec "${pytest[@]}" -m "$real_parts"
fi
echo "== pytest" && exec "${pytest[@]}" "${pytest_args[@]}"
