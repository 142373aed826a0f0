"""One run of agentx-tui, from the command line's plan to its exit code (docs/architecture.md).

build_plan(args) -> RunPlan     pre-flight: every check before any server starts (exit 2)
execute(plan) -> int            serving, load, the tick loop, subscribers, report, exit code
replay(path) -> int             a recording played back in the dashboard
"""

from agentx_tui.run.execute import execute, replay
from agentx_tui.run.plan import API_KEY_ENV, RunPlan
from agentx_tui.run.preflight import build_plan

__all__ = ["API_KEY_ENV", "RunPlan", "build_plan", "execute", "replay"]
