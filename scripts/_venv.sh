# Sourced by run.sh and test.sh: create .venv and install the project with its test extras, once.
# Re-installs only when pyproject.toml changed since the last install.
stamp=.venv/.agentx-installed
if [[ ! -x .venv/bin/python ]]; then
    python3 -m venv .venv
fi
if [[ ! -f "$stamp" || pyproject.toml -nt "$stamp" ]]; then
    echo "setting up .venv (agentx-tui and its pinned dependencies)" >&2
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e ".[test]"
    touch "$stamp"
fi
