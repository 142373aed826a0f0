"""`--proxy`: real agents' sessions as rows of the users table (marked as real, first), and how much of
the traffic is theirs, beside the simulated users' (docs/capture.md)."""

from __future__ import annotations

from agentx_tui.snapshot import ProxyState, Snapshot, UserRow
from agentx_tui.ui import AgentXApp
from agentx_tui.ui.panes import ThroughputPane, UsersPane
from agentx_tui.ui.panes._base import FigureLines
from tests.ui._helpers import shown
from tests.ui.fakes import FakeLiveControls, FakeSource, make_snapshot

REAL = 1 << 50  # the proxy's first session id (agentx_tui.proxy.REAL_ID_BASE)


def _with_real_agents(seq: int) -> Snapshot:
    snap = make_snapshot(seq, sessions=3)
    real = (
        UserRow(user=REAL, session=1, state="decoding", step=7, steps_total=0, context_tokens=18_400,
                requests=7, output_tokens=2_100, label="3f2a9c", real=True),
        UserRow(user=REAL + 1, session=1, state="prefill", step=2, steps_total=0, context_tokens=9_000,
                requests=2, output_tokens=300, parent=REAL, label="3f2a9c.1", real=True),
        UserRow(user=REAL + 2, session=1, state="tool", step=3, steps_total=0, context_tokens=4_000,
                requests=3, output_tokens=90, label="7c01d2", real=True, name="alpha1"),
        UserRow(user=REAL + 3, session=1, state="tool", step=1, steps_total=0, context_tokens=1_000,
                requests=1, output_tokens=10, parent=REAL + 2, label="7c01d2.1", real=True,
                name="alpha1-the-explorer-of-src-and-tests"),
    )  # fmt: skip
    assert snap.client is not None
    totals = snap.client.totals
    proxy = ProxyState(
        url="http://127.0.0.1:8081",
        upstream="http://10.0.0.7:8000",
        proxied_requests=9,
        proxied_sessions=1,
        live_sessions=2,
        # A quarter of every token the client counted over the run came from the real agent.
        prompt_tokens=totals.prompt_tokens // 4,
        output_tokens=totals.output_tokens // 4,
    )
    return snap.model_copy(update={"sessions": (*snap.sessions, *real), "proxy": proxy})


async def test_real_sessions_are_marked_listed_first_and_their_share_is_shown() -> None:
    app = AgentXApp(FakeSource([_with_real_agents(seq) for seq in (1, 2)]), FakeLiveControls())
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot, 2)
        table = app.query_one(UsersPane).table
        first, second, named, named_sub, *rest = table.order
        assert table.cell(first, "user").text == "real" and table.cell(first, "where").text == "3f2a9c"
        assert table.cell(second, "user").text == "real›" and table.cell(second, "where").text == "3f2a9c.1"
        assert table.cell(second, "step").text == "2"  # a real agent's steps so far (its total is unknown)
        # A session that named itself shows its name, cut with an ellipsis to the column's width.
        assert table.cell(named, "where").text == "alpha1"
        assert table.cell(named_sub, "where").text == "alpha1-the-explorer-…"  # 21 columns
        assert [table.cell(key, "user").text for key in rest] == ["0", "1", "2"]
        latency = app.query_one(ThroughputPane).query_one("#tps-latency", FigureLines)
        assert "real  25.0% of tokens · 2 live sessions" in str(latency.render())
        assert "real agents 2" in str(app.query_one("#header").render())
