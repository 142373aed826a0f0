"""Proxied session trees as the run's tasks (docs/metrics.md, "Tasks"; docs/capture.md): every call
carries its tree's task id (a sub-agent's, its parent's), a tree idle for `--session-idle` has ended (a
completed task, or a failed one), one still open at close is a running task, one cut off counts nowhere."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import cast

from agentx_tui.measure import ClientStats
from agentx_tui.proxy import TASK_ID_BASE, LiveProxy, LiveSessions, ProxiedCall, Tokenizer
from agentx_tui.snapshot import TaskReading
from tests.proxy.calls import SYSTEM, Sink, assistant, make_call, stream, tool, user
from tests.proxy.test_sessions import run
from tests.proxy.two_agents import A_CALLS, B_CALLS, agent_a, agent_b


def _fail(sessions: LiveSessions, call: ProxiedCall, error: str) -> ProxiedCall:
    sessions.call_started(call)
    stream(call, first=call.received_at + 0.05, error=error)
    sessions.call_ended(call)
    return call


def test_every_call_carries_its_trees_task_id_and_a_sub_agents_is_its_parents() -> None:
    sink = Sink()
    sessions = LiveSessions(sink=sink)
    a1 = run(sessions, make_call([SYSTEM, user("one")], at=0.0, header="A"))
    sub1 = run(sessions, make_call([user("explore")], at=1.0, header="A-sub", parent="A"))
    sub2 = run(sessions, make_call([user("explore"), assistant("ls"), tool("x")], at=2.0, header="A-sub", parent="A"))
    b1 = run(sessions, make_call([SYSTEM, user("two")], at=2.5, header="B"))
    a2 = run(sessions, make_call([SYSTEM, user("one"), assistant("a"), tool("b")], at=3.0, header="A"))
    task_a, task_b = a1.session.tree.task, b1.session.tree.task
    assert task_a >= TASK_ID_BASE and task_b >= TASK_ID_BASE and task_a != task_b
    assert [d.tree for d in sink.added] == [task_a, task_a, task_a, task_b, task_a]
    # Each call's step is its place in its own agent's loop (the step curve's row).
    assert [d.step for d in sink.added] == [1, 1, 2, 1, 2]
    assert all(c.tree == c.session.tree.task for c in (a1, sub1, sub2, b1, a2))
    failed = _fail(
        sessions, make_call([SYSTEM, user("two"), assistant("c"), tool("d")], at=4.0, header="B"), "http_5xx"
    )
    assert sink.errors[-1].tree == task_b and sink.errors[-1].final and failed.tree == task_b


def test_a_tree_idle_for_the_session_idle_time_is_a_completed_task_with_its_sub_agents_calls() -> None:
    stats = ClientStats(10.0, 0.0)
    sessions = LiveSessions(sink=stats, idle_s=0.5)
    first = run(sessions, make_call([SYSTEM, user("one")], at=0.0, header="A"))
    run(sessions, make_call([user("explore")], at=1.0, header="A-sub", parent="A"))
    run(sessions, make_call([user("explore"), assistant("ls"), tool("x")], at=2.0, header="A-sub", parent="A"))
    run(sessions, make_call([SYSTEM, user("one"), assistant("a"), tool("b")], at=3.0, header="A"))
    run(sessions, make_call([SYSTEM, user("two")], at=3.2, header="B"))
    assert sessions.expire(3.3) == 0  # A's last call ended at 3.09: not idle for 0.5 s yet
    assert stats.tasks.figures(3.3).tasks_running == 2
    assert sessions.expire(3.7) == 1  # A is over, B (last call ended at 3.29) not yet
    figures = stats.tasks.figures(3.7)
    assert figures.tasks_completed == 1 and figures.tasks_running == 1 and figures.tasks_failed == 0
    assert figures.steps_per_task_mean == 4  # the sub-agent's two calls are inside its parent's task
    assert figures.task_s_p50 is not None and abs(figures.task_s_p50 - 3.09) < 0.1
    assert sessions.expire(4.0) == 1
    figures = stats.tasks.figures(4.0)
    assert figures.tasks_completed == 2 and figures.tasks_running == 0 and figures.steps_per_task_mean == 2.5
    assert stats.totals().sessions_completed == 2
    # The same name after its tree ended starts a new tree: a new task.
    again = run(sessions, make_call([SYSTEM, user("one")], at=10.0, header="A"))
    assert stats.tasks.figures(10.1).tasks_running == 1 and again.tree != first.tree


def test_a_call_that_failed_for_good_fails_its_task_and_a_cancelled_one_does_not() -> None:
    stats, sink = ClientStats(10.0, 0.0), Sink()
    sessions = LiveSessions(sink=stats, idle_s=1.0)
    run(sessions, make_call([SYSTEM, user("one")], at=0.0, header="A"))
    _fail(sessions, make_call([user("sub")], at=0.5, header="A-sub", parent="A"), "connection")  # a sub-agent's
    run(sessions, make_call([SYSTEM, user("one"), assistant("a"), tool("b")], at=1.0, header="A"))
    run(sessions, make_call([SYSTEM, user("two")], at=1.0, header="B"))
    _fail(sessions, make_call([SYSTEM, user("two"), assistant("c"), tool("d")], at=1.2, header="B"), "cancelled")
    figures = stats.tasks.figures(1.5)
    assert figures.tasks_failed == 1 and figures.tasks_running == 1  # failed at once, B still running
    assert sessions.expire(5.0) == 2
    figures = stats.tasks.figures(5.0)
    assert figures.tasks_failed == 1 and figures.tasks_completed == 1 and figures.tasks_running == 0
    assert figures.steps_per_task_mean == 1  # B's one completed call (its cancelled one is no step)
    assert stats.totals().sessions_completed == 1  # A ended in error
    sessions_sink = LiveSessions(sink=sink, idle_s=1.0)
    _fail(sessions_sink, make_call([SYSTEM, user("x")], at=0.0, header="C"), "timeout")
    sessions_sink.expire(5.0)
    assert sink.ended_trees == [("error", sink.errors[0].tree)]


async def test_the_proxys_housekeeping_ends_an_idle_tree_on_its_own() -> None:
    stats = ClientStats(10.0, time.monotonic())
    sessions = LiveSessions(sink=stats, idle_s=0.5)
    assert sessions.sweep_s <= 0.125  # a quarter of the idle time: the tree ends at most that late
    await sessions.start()
    try:
        now = time.monotonic()
        run(sessions, make_call([SYSTEM, user("one")], at=now, header="A"), first=now + 0.01)
        assert stats.tasks.figures(time.monotonic()).tasks_running == 1
        for _ in range(100):
            await asyncio.sleep(0.05)
            if stats.tasks.figures(time.monotonic()).tasks_completed:
                break
        figures = stats.tasks.figures(time.monotonic())
        assert figures.tasks_completed == 1 and figures.tasks_running == 0
        assert not sessions.rows()  # and the tree left the live table
    finally:
        await sessions.close()


async def test_a_tree_still_open_at_close_is_a_running_task_not_a_completed_one() -> None:
    stats = ClientStats(10.0, 0.0)
    sessions = LiveSessions(sink=stats, idle_s=120.0)
    run(sessions, make_call([SYSTEM, user("one")], at=0.0, header="A"))
    await sessions.close()
    figures = stats.tasks.figures(1.0)
    assert figures.tasks_running == 1 and figures.tasks_completed == 0


def test_a_tree_pushed_out_by_the_live_trees_limit_counts_nowhere() -> None:
    sink = Sink()
    sessions = LiveSessions(sink=sink, max_live_trees=1)
    first = run(sessions, make_call([SYSTEM, user("one")], at=0.0, header="A"))
    run(sessions, make_call([SYSTEM, user("two")], at=1.0, header="B"))
    assert sink.ended_trees == [("retired", first.tree)]  # cut off: neither completed nor failed


class _HeldTokenizer:
    """A tokenizer that answers only when told: the call's figures wait for it."""

    def __init__(self) -> None:
        self.waiting: list[Callable[[Sequence[int] | None], Awaitable[None]]] = []

    def submit(
        self, kind: str, body: bytes, auth: object, done: Callable[[Sequence[int] | None], Awaitable[None]]
    ) -> bool:
        self.waiting.append(done)
        return True


async def test_a_tree_does_not_end_before_its_calls_figures_reached_the_statistics() -> None:
    """A call without usage is counted once its prompt is tokenized: until then its tree is busy, or
    its task would end without it (and the late call would start a task of its own)."""
    stats = ClientStats(10.0, 0.0)
    tokenizer = _HeldTokenizer()
    sessions = LiveSessions(sink=stats, tokenizer=cast(Tokenizer, tokenizer), idle_s=0.5)
    run(sessions, make_call([SYSTEM, user("one")], at=0.0, header="A", usage=False), prompt=None)
    assert sessions.expire(10.0) == 0  # idle, but its call is not counted yet
    (done,) = tokenizer.waiting
    await done([1, 2, 3])
    assert sessions.expire(10.0) == 1
    figures = stats.tasks.figures(10.0)
    assert figures.tasks_completed == 1 and figures.steps_per_task_mean == 1 and figures.tokens_per_task_mean == 7


async def _tasks_until(stats: ClientStats, completed: int, timeout_s: float = 15.0) -> TaskReading:
    deadline = time.monotonic() + timeout_s
    while (figures := stats.tasks.figures(time.monotonic())).tasks_completed < completed:
        assert time.monotonic() < deadline, f"{figures.tasks_completed} tasks completed, not {completed}"
        await asyncio.sleep(0.05)
    return figures


async def test_official_client_sessions_through_the_proxy_are_tasks_once_idle(sim_url: str) -> None:
    """Two sessions named by X-Session-ID, one with a sub-agent, with `--session-idle 1`: each is a
    task once it has made no call for a second, with its own calls (the sub-agent's in its parent's)."""
    stats = ClientStats(10.0, time.monotonic())
    proxy = LiveProxy(sim_url, sink=stats, idle_s=1.0)
    await proxy.start()
    try:
        b = await agent_b(proxy.url)
        assert {row.name for row in proxy.rows()} == b.names  # by their own names, while live
        figures = await _tasks_until(stats, 1)
        assert figures.tasks_running == 0 and figures.steps_per_task_mean == B_CALLS
        assert figures.tokens_per_task_mean == b.tokens
        a = await agent_a(proxy.url)
        assert {row.name for row in proxy.rows()} == a.names  # B's tree has ended and left the table
        figures = await _tasks_until(stats, 2)
    finally:
        await proxy.close()
    assert figures.tasks_running == 0 and figures.tasks_failed == 0
    assert figures.steps_per_task_mean == (B_CALLS + A_CALLS) / 2  # A's task holds its sub-agent's 3 calls
    assert figures.tokens_per_task_mean == (a.tokens + b.tokens) / 2
    assert stats.totals().requests_completed == B_CALLS + A_CALLS
