"""What each page runs: the dashboard's own command line, as the user typed it, less `--web` and the key.

textual-serve starts one process per page from a shell command line. That process is an ordinary
dashboard run (agentx_tui.web.page wraps `agentx-tui`), so the page is the dashboard itself and a flag
that works in a terminal works in the page.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Collection, MutableMapping, Sequence

from agentx_tui.redaction import redact
from agentx_tui.run import RunPlan

PAGE_MODULE = "agentx_tui.web.page"
# Set by the serving process for its pages: its PID, for each page's run to check that it is still the
# server's child when it asks for its parent-death signal (web/page.py).
SERVER_PID_ENV = "AGENTX_WEB_SERVER_PID"
API_KEY_ENV = "AGENTX_API_KEY"  # the first place a run looks for its key (run/plan.py API_KEY_ENV)
# Flags (with their values) that stay with the serving process: `--web` is what it does, and the API
# key goes to each page's run through the environment (AGENTX_API_KEY), never its command line, where
# any user of the machine could read it in a process listing.
SERVER_ONLY = ("--web", "--api-key")


def _resolve(token: str, known: Collection[str]) -> str | None:
    """The long option `token` names, as argparse reads it: exactly, or by an unambiguous prefix."""
    if not token.startswith("--") or token == "--":
        return None
    name = token.split("=", 1)[0]
    if name in known:
        return name
    matches = [option for option in known if option.startswith(name)]
    return matches[0] if len(matches) == 1 else None


def page_argv(argv: Sequence[str], known: Collection[str]) -> list[str]:
    """`argv` without the server-only flags and their values; everything else unchanged, in order.

    `known` is every long option of the parser, so that an abbreviation (`--we 8080`, which argparse
    accepts) is recognised as the flag it stands for, and `--workload` is never taken for `--web`."""
    out: list[str] = []
    skip_value = False
    for token in argv:
        if skip_value:
            skip_value = False
            continue
        if _resolve(token, known) in SERVER_ONLY:
            skip_value = "=" not in token
            continue
        out.append(token)
    return out


def page_command(argv: Sequence[str], python: str = sys.executable) -> str:
    """The shell command line textual-serve runs for each page. `exec`: the page's run is the
    server's own child (no shell in between), so the server can signal it, and the run's parent-death
    signal is tied to the server."""
    return "exec " + shlex.join([python, "-m", PAGE_MODULE, *argv])


def page_environment(environ: MutableMapping[str, str], *, api_key: str | None, server_pid: int) -> None:
    """Make the serving process's environment the one its pages need (textual-serve gives each page a
    copy of it): NO_COLOR dropped, since it is meant for terminals and a monochrome page helps nobody;
    the API key given on the command line set where a run reads it first; the server's PID."""
    environ.pop("NO_COLOR", None)
    if api_key:
        environ[API_KEY_ENV] = api_key
    environ[SERVER_PID_ENV] = str(server_pid)


def page_title(plan: RunPlan) -> str:
    """What runs, for the browser's tab and the page's start screen, e.g.
    "agentx-tui · simulated h200/llama-3.1-8b · coding-agent"."""
    target = plan.target
    if target.kind == "sim":
        what = f"simulated {target.sim_profile}"
    elif target.kind == "serve":
        what = f"vLLM {target.serve}"
    elif target.kind == "prometheus" and target.prometheus is not None:
        what = f"prometheus {target.prometheus.url}"
    else:
        what = "attach " + ", ".join(target.attach)
    workload = plan.load.workload.name if plan.load.sends_load else "observing, no load"
    parts = ["agentx-tui", what, workload]
    if plan.sweep is not None:
        parts.append("sweep " + ("auto" if plan.sweep.auto else "users=" + ",".join(map(str, plan.sweep.users))))
    return redact(" · ".join(parts), plan.secrets)
