"""Waiting for the dashboard to show what the fake source sent, without sleeping blindly."""

from __future__ import annotations

from textual.pilot import Pilot

from agentx_tui.ui import AgentXApp
from agentx_tui.ui.panes import Pane


async def shown(pilot: Pilot[None], seq: int, *, tries: int = 200) -> AgentXApp:
    """Wait until the dashboard has drawn the Snapshot numbered `seq`, then until the screen settles."""
    app = pilot.app
    assert isinstance(app, AgentXApp)
    for _ in range(tries):
        if app.snapshot is not None and app.snapshot.seq == seq:
            await pilot.pause()
            await pilot.wait_for_scheduled_animations()
            await pilot.pause()
            return app
        await pilot.pause(0.02)
    raise AssertionError(f"the dashboard never showed snapshot {seq} (showing {app.snapshot and app.snapshot.seq})")


def pane(app: AgentXApp, key: int) -> Pane:
    """The pane that digit `key` maximises."""
    return next(p for p in app.query(Pane) if key == p.KEY)
