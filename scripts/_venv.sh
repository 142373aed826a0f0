# Sourced by run.sh and test.sh: create .venv and install the project (with the extras named in
# AGENTX_EXTRAS, e.g. "test,ray"), once. Re-installs only when pyproject.toml or setup.py changed since
# then (an editable install records where each package is found when it is made).
extras=${AGENTX_EXTRAS:-}
stamp=".venv/.agentx-installed${extras:+-${extras//,/-}}"
if [[ ! -x .venv/bin/python ]]; then
    python3 -m venv .venv
fi
if [[ ! -f "$stamp" || pyproject.toml -nt "$stamp" || setup.py -nt "$stamp" ]]; then
    echo "setting up .venv (agentx-tui${extras:+ with $extras} and its pinned dependencies)" >&2
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e ".${extras:+[$extras]}"
    touch "$stamp"
fi
