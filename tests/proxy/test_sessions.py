"""Which session a proxied call belongs to (each rule of docs/capture.md), the users-table rows, and
what the run's statistics get."""

from __future__ import annotations

import asyncio
import json

import pytest

from agentx_tui.proxy import REAL_ID_BASE, LiveSessions, ProxiedCall, Tokenizer
from agentx_tui.proxy._session import SCREEN_NAME_CHARS
from agentx_tui.snapshot import Snapshot
from tests.proxy.calls import SYSTEM, Sink, assistant, make_call, stream, tool, user
from tests.proxy.upstream import Upstream
from tests.ui.fakes import make_snapshot


def run(sessions: LiveSessions, call: ProxiedCall, *, first: float | None = None, **answer: object) -> ProxiedCall:
    """One whole call: started, streamed, ended."""
    sessions.call_started(call)
    stream(call, first=first if first is not None else call.received_at + 0.05, **answer)  # type: ignore[arg-type]
    sessions.call_ended(call)
    return call


def test_the_session_header_names_a_session_and_the_parent_header_its_parent() -> None:
    sessions = LiveSessions()
    a1 = run(sessions, make_call([SYSTEM, user("one")], at=0.0, header="agent-A"))
    a2 = run(sessions, make_call([user("totally different")], at=1.0, header="agent-A"))
    b = run(sessions, make_call([SYSTEM, user("one")], at=1.5, header="agent-B"))
    sub = run(sessions, make_call([user("sub task")], at=2.0, header="agent-A-sub", parent="agent-A"))
    assert a1.session is a2.session
    assert b.session is not a1.session and b.session.tree is not a1.session.tree
    assert sub.session.parent is a1.session and sub.session.tree is a1.session.tree
    rows = {r.user: r for r in sessions.rows()}
    assert rows[sub.session.id].parent == a1.session.id
    assert all(r.real and r.user > REAL_ID_BASE for r in rows.values())
    assert all("agent" not in r.label for r in rows.values())  # labels are ours, never the header's value
    figures = sessions.figures()
    assert figures.proxied_sessions == 2 and figures.subagents == 1 and figures.by_header == 3


def test_the_screen_shows_a_sessions_own_name_and_files_keep_the_short_id() -> None:
    """A team finds its agent by the name it gave it; the recording and the report's `users_detail`
    (both serialise the rows) carry the short id only: no header value or `user` field is written."""
    sessions = LiveSessions()
    named = run(sessions, make_call([SYSTEM, user("one")], at=0.0, header="alpha1"))
    sub = run(sessions, make_call([user("sub")], at=0.5, header="alpha1-explorer", parent="alpha1"))
    by_user = run(sessions, make_call([SYSTEM, user("two")], at=1.0, user_field="team-b\x1b[31m"))
    inferred = run(sessions, make_call([SYSTEM, user("three")], at=60.0))
    rows = {r.user: r for r in sessions.rows()}
    assert rows[named.session.id].name == "alpha1" and rows[sub.session.id].name == "alpha1-explorer"
    assert rows[by_user.session.id].name == "team-b?[31m"  # no control character reaches the terminal
    assert rows[inferred.session.id].name == ""  # inferred: the short id (its label) is what is shown
    assert rows[named.session.id].label == named.session.tree.label and len(rows[named.session.id].label) == 6
    snap = make_snapshot(1, sessions=1)
    snap = snap.model_copy(update={"sessions": (*snap.sessions, *rows.values())})
    written = snap.to_json() + json.dumps([row.model_dump() for row in snap.sessions])
    assert "alpha1" not in written and "team-b" not in written
    assert named.session.label in written
    assert Snapshot.from_json(snap.to_json()).sessions[-1].name == ""  # a replay shows the short id


def test_a_long_session_name_is_kept_shortened() -> None:
    sessions = LiveSessions()
    call = run(sessions, make_call([SYSTEM, user("one")], at=0.0, header="n" * 500))
    assert call.session.shown_name == "n" * (SCREEN_NAME_CHARS - 1) + "…"


def test_the_user_field_names_a_session_when_no_header_does() -> None:
    sessions = LiveSessions()
    first = run(sessions, make_call([SYSTEM, user("a")], at=0.0, user_field="alice"))
    second = run(sessions, make_call([user("unrelated")], at=1.0, user_field="alice"))
    other = run(sessions, make_call([SYSTEM, user("a")], at=1.0, user_field="bob"))
    assert first.session is second.session and other.session is not first.session
    assert sessions.figures().by_user == 2


def test_a_call_that_extends_an_earlier_prompt_continues_its_session() -> None:
    sessions = LiveSessions()
    history = [SYSTEM, user("fix the parser")]
    first = run(sessions, make_call(history, at=0.0))
    history += [assistant("reading parser.py"), tool("def parse(): ...")]
    second = run(sessions, make_call(history, at=1.0))
    history += [assistant("patched"), tool("tests pass")]
    third = run(sessions, make_call(history, at=2.0))
    assert first.session is second.session is third.session
    row = sessions.rows()[0]
    assert row.step == 3 and row.requests == 3 and row.context_tokens == 100 and row.state == "tool"
    assert sessions.figures().inferred == 1


def test_a_call_that_shares_a_waiting_sessions_first_message_but_diverges_is_its_sub_agent() -> None:
    sessions = LiveSessions()
    parent = run(sessions, make_call([SYSTEM, user("refactor the repo")], at=0.0))
    # Two sub-agents spawned together after the parent's call: same system prompt, their own task.
    one = run(sessions, make_call([SYSTEM, user("explore src/")], at=0.6))
    two = run(sessions, make_call([SYSTEM, user("explore tests/")], at=0.7))
    one_next = run(sessions, make_call([SYSTEM, user("explore src/"), assistant("ls"), tool("a.py")], at=1.5))
    assert one.session.parent is parent.session and two.session.parent is parent.session  # not nested
    assert one_next.session is one.session  # a sub-agent continues as any session does
    parent_next = run(sessions, make_call([SYSTEM, user("refactor the repo"), assistant("x"), tool("y")], at=3.0))
    assert parent_next.session is parent.session
    labels = sorted(r.label for r in sessions.rows())
    assert labels[0] == parent.session.label and labels[1].startswith(parent.session.label + ".")


def test_inference_starts_a_new_session_when_nothing_fits() -> None:
    sessions = LiveSessions(spawn_window_s=10.0)
    first = run(sessions, make_call([SYSTEM, user("task one")], at=0.0))
    other_system = run(sessions, make_call([{"role": "system", "content": "another agent"}, user("x")], at=0.5))
    assert other_system.session.tree is not first.session.tree
    # Same first message, but the tree has been quiet for longer than the spawn window: a new user.
    late = run(sessions, make_call([SYSTEM, user("task two")], at=60.0))
    assert late.session.tree is not first.session.tree and late.session.parent is None
    # The same first prompt twice at once is two agents, not one session calling itself.
    busy = make_call([SYSTEM, user("same start")], at=100.0)
    sessions.call_started(busy)
    twin = make_call([SYSTEM, user("same start")], at=100.1)
    sessions.call_started(twin)
    assert twin.session is not busy.session
    assert twin.session.parent is None  # the session it shares a start with is busy, not waiting


def test_row_states_follow_the_call() -> None:
    sessions = LiveSessions()
    call = make_call([SYSTEM, user("go")], at=0.0)
    sessions.call_started(call)
    assert sessions.rows()[0].state == "prefill"
    stream(call, first=0.1)
    assert sessions.rows()[0].state == "decoding"  # (the call has not ended yet)
    sessions.call_ended(call)
    assert sessions.rows()[0].state == "tool"
    assert sessions.states() == {"tool": 1}


def test_rows_are_the_most_recently_active_up_to_the_limit() -> None:
    sessions = LiveSessions()
    calls = [run(sessions, make_call([user(f"s{i}")], at=float(i), header=f"h{i}")) for i in range(50)]
    rows = sessions.rows(limit=5)
    assert [r.user for r in rows] == sorted(c.session.id for c in calls[-5:])


def test_each_call_reaches_the_statistics_with_the_load_clients_definitions() -> None:
    sink = Sink()
    sessions = LiveSessions(sink=sink)
    call = run(
        sessions, make_call([SYSTEM, user("go")], at=10.0), first=10.2, tokens=5, gap=0.02, prompt=120, cached=64
    )
    (done,) = sink.added
    assert done.sent_at == 10.0 and done.first_token_at == 10.2
    assert done.ttft_s == pytest.approx(0.2)
    assert done.prompt_tokens == 120 and done.cached_tokens == 64 and done.output_tokens == 5
    assert done.request_itl_s == pytest.approx(0.02) and done.decode_tokens_per_s == pytest.approx(5 / 0.08)
    assert sum(done.itl.values()) == pytest.approx(4)  # token gaps after the first, bucketed
    failed = make_call([SYSTEM, user("go"), assistant("a"), tool("b")], at=11.0)
    sessions.call_started(failed)
    stream(failed, first=11.1, error="connection")
    sessions.call_ended(failed)
    assert [f.kind for f in sink.errors] == ["connection"] and sink.errors[0].final
    assert sessions.rows()[0].errors == 1 and call.session is failed.session
    assert sessions.figures().prompt_tokens == 120


async def test_a_call_without_usage_is_counted_with_the_servers_tokenize(upstream: Upstream) -> None:
    sink = Sink()
    tokenizer = Tokenizer(upstream.url)
    sessions = LiveSessions(sink=sink, tokenizer=tokenizer)
    await sessions.start()
    try:
        messages = [SYSTEM, user("four words right here")]
        call = make_call(messages, at=0.0, usage=False)
        call.auth = (("Authorization", "Bearer sk-abc"),)
        run(sessions, call, prompt=None)
        assert sink.added == []  # counted once the prompt's length is known, off the request's path
        assert await tokenizer.drain(5)
        (done,) = sink.added
        from tests.proxy.upstream import chat_ids

        assert done.prompt_tokens == len(chat_ids(messages)) and done.output_tokens == 4 and done.cached_tokens is None
        assert upstream.tokenized[0]["auth"] == "Bearer sk-abc"  # the call's own credentials
        assert upstream.tokenized[0]["body"]["messages"] == messages
    finally:
        await sessions.close()


def test_idle_trees_leave_the_live_table() -> None:
    sessions = LiveSessions(idle_s=600)
    parent = run(sessions, make_call([SYSTEM, user("a")], at=0.0, header="p"))
    run(sessions, make_call([user("b")], at=1.0, header="c", parent="p"))
    run(sessions, make_call([SYSTEM, user("z")], at=500.0, header="q"))
    assert sessions.expire(599.0) == 0
    assert sessions.expire(601.5) == 1
    assert {r.label for r in sessions.rows()} == {sessions.rows()[0].label}
    assert sessions.figures().live_sessions == 1 and sessions.figures().proxied_sessions == 2
    again = run(sessions, make_call([SYSTEM, user("a")], at=700.0, header="p"))
    assert again.session is not parent.session  # the name starts a new tree once its old one is gone


async def test_the_sweeper_runs_and_close_is_safe_twice() -> None:
    sessions = LiveSessions()
    await sessions.start()
    await asyncio.sleep(0)
    await sessions.close()
    await sessions.close()


def test_a_flood_of_sessions_keeps_the_live_table_bounded() -> None:
    sessions = LiveSessions(max_live_trees=10)
    for i in range(100):
        run(sessions, make_call([user(f"one-off call {i}")], at=float(i)))
    figures = sessions.figures()
    assert figures.proxied_sessions == 100 and figures.live_sessions == 10
