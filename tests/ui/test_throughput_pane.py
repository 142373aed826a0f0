"""The throughput pane's border: who measured the figures, and what a token cost the load client."""

from __future__ import annotations

from agentx_tui.snapshot import ClientHealth
from agentx_tui.ui.panes.throughput import _source
from tests.ui.fakes import make_snapshot


def test_the_border_says_the_clients_cost_in_the_words_that_fit() -> None:
    snap = make_snapshot()
    snap = snap.model_copy(update={"client_health": ClientHealth(cpu_us_per_token=18.4)})
    assert _source("client", snap, 80) == "measured by the client · 18.4 µs CPU/tok"
    assert _source("client", snap, 40) == "by the client, 18.4 µs CPU/tok"
    assert _source("client", snap, 20) == "measured by the client"
    assert _source("server", snap, 80) == "measured by the server"  # the client's cost is not the server's
    assert _source("none", snap, 80) == ""
    unknown = snap.model_copy(update={"client_health": ClientHealth()})  # no token streamed yet
    assert _source("client", unknown, 80) == "measured by the client"
