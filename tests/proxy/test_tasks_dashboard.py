"""On the dashboard, through `--proxy --capture --session-idle 1`: every call the official `openai`
client completed (12, in two sessions named by `X-Session-ID`, one with a sub-agent) is in the capture
and in its task, and the users table showed the sessions by their own names.

The real run (`agentx_tui.run.execute`, the plan from the real command line) with the real dashboard
under Textual's pilot: once against the built-in simulator (quick), once against the real tiny vLLM.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from agentx_tui.cli import parse_args
from agentx_tui.load import load_session_set
from agentx_tui.run import build_plan
from agentx_tui.run.execute import execute
from agentx_tui.snapshot import TaskReading
from agentx_tui.ui import AgentXApp
from agentx_tui.ui.panes import UsersPane
from tests.proxy.two_agents import A_CALLS, B_CALLS, Agent, agent_a, agent_b
from tests.reliability._run import KEY_VARS

DEADLINE_S = 60.0  # for each wait: the tiny vLLM on a busy CPU takes seconds per call


@dataclass
class Seen:
    """What the dashboard showed while the agents ran."""

    names: set[str] = field(default_factory=set)  # the `where` cells of real agents' rows
    after_b: TaskReading | None = None
    after_both: TaskReading | None = None
    agents: list[Agent] = field(default_factory=list)


async def _until(pilot: Pilot[None], what: str, ready: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + DEADLINE_S
    while not (found := ready()):
        assert time.monotonic() < deadline, f"the dashboard never showed {what}"
        await pilot.pause(0.05)
    return found


def _tasks(app: AgentXApp, completed: int) -> TaskReading | None:
    tasks = app.snapshot.tasks if app.snapshot is not None else None
    return tasks if tasks is not None and tasks.tasks_completed >= completed else None


async def _watch_names(app: AgentXApp, seen: Seen) -> None:
    """Every name a real agent's row showed in the users table, as the run goes."""
    while True:
        table = app.query_one(UsersPane).table
        for key in table.order:
            if table.cell(key, "user").text.startswith("real"):
                seen.names.add(table.cell(key, "where").text)
        await asyncio.sleep(0.05)


async def _agents_on_the_dashboard(app: AgentXApp, pilot: Pilot[None], seen: Seen) -> None:
    def proxy_url() -> str | None:
        proxy = app.snapshot.proxy if app.snapshot is not None else None
        return proxy.url if proxy is not None and not proxy.url.endswith(":0") else None

    url = await _until(pilot, "where the proxy listens", proxy_url)
    watch = asyncio.create_task(_watch_names(app, seen))
    try:
        seen.agents.append(await agent_b(url))
        seen.after_b = await _until(pilot, "agent B's task", lambda: _tasks(app, 1))
        seen.agents.append(await agent_a(url))
        seen.after_both = await _until(pilot, "agent A's task", lambda: _tasks(app, 2))
    finally:
        watch.cancel()
    await pilot.press("q")


def _run_on_the_dashboard(target: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, Seen, Path]:
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    capture = tmp_path / "capture"
    argv = [*target, "--proxy", "0", "-w", "none", "--capture", str(capture), "--session-idle", "1"]
    plan = build_plan(parse_args([*argv, "--interval", "0.25", "--refresh", "0.1", "--duration", "600"]))
    seen = Seen()

    async def run_under_pilot(app: AgentXApp) -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await _agents_on_the_dashboard(app, pilot, seen)

    monkeypatch.setattr(AgentXApp, "run_async", run_under_pilot)
    return execute(plan), seen, capture


def _check(code: int, seen: Seen, capture: Path) -> None:
    assert code == 0
    b, a = seen.agents
    # Each task holds its own calls, the sub-agent's inside its parent's: B ended first, with its 4.
    assert seen.after_b is not None and seen.after_b.tasks_completed == 1
    assert seen.after_b.steps_per_task_mean == B_CALLS and seen.after_b.tokens_per_task_mean == b.tokens
    done = seen.after_both
    assert done is not None and done.tasks_completed == 2 and done.tasks_failed == 0 and done.tasks_running == 0
    assert done.steps_per_task_mean == (B_CALLS + A_CALLS) / 2
    assert done.tokens_per_task_mean == (a.tokens + b.tokens) / 2
    assert seen.names >= b.names | a.names  # the rows showed the sessions by their own names
    # Every completed call is in the capture: one file per task, the sub-agent's calls in A's file.
    trees = sorted(load_session_set(capture).trees, key=lambda tree: tree.call_count)
    assert [tree.call_count for tree in trees] == [B_CALLS, A_CALLS]
    for tree, agent in zip(trees, (b, a), strict=True):
        assert sorted(c.recorded_in for c in tree.all_calls()) == sorted(c.prompt_tokens for c in agent.calls)
        assert sorted(c.recorded_out for c in tree.all_calls()) == sorted(c.completion_tokens for c in agent.calls)
    assert trees[1].subagent_count == 1 and len(trees[1].subagents[0].calls) == 3


def test_every_call_of_the_official_client_is_in_the_capture_and_its_task_on_the_simulator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _check(*_run_on_the_dashboard(["--sim"], tmp_path, monkeypatch))


@pytest.mark.vllm
@pytest.mark.slow
def test_every_call_of_the_official_client_is_in_the_capture_and_its_task_on_real_vllm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, vllm_url: str
) -> None:
    _check(*_run_on_the_dashboard(["--attach", vllm_url], tmp_path, monkeypatch))
