"""³ Prefix cache: server window and lifetime hit rate, client hit rate, the workload's ceiling; the
retention curve (panes/_retention.py)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content

from agentx_tui.snapshot import Snapshot
from agentx_tui.ui._format import compact, percent
from agentx_tui.ui.panes._base import GaugePane, label, line, plot, value
from agentx_tui.ui.panes._retention import RetentionChart, RetentionView, retention_view


class PrefixPane(GaugePane):
    KEY = 3
    TITLE = "Prefix cache"

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield RetentionChart(RetentionView(), id="prefix-retention")

    def show(self, snap: Snapshot) -> None:
        agg = snap.aggregate
        client = snap.client
        window = agg.prefix_hit_rate_window if agg else None
        lifetime = agg.prefix_hit_rate_lifetime if agg else None
        if client is None:
            client_text = value("n/a — no load sent", "$text-muted")
        elif not client.totals.cached_tokens_reported:
            client_text = value("n/a — server omits cached_tokens", "$text-warning")
        else:
            client_text = value(percent(client.window.prefix_cache_hit_rate_client))
        ceiling = client.window.prefix_cache_hit_rate_ceiling if client else None
        cached = (
            client.window.cached_prompt_tokens_per_s if client else (agg.cached_prompt_tokens_per_s if agg else None)
        )
        caching_off = agg is not None and agg.prefix_caching_enabled is False
        lines = [
            line(label("server   "), value(percent(window), "bold $accent"), label(" window")),
            line(label("lifetime "), value(percent(lifetime))),
            line(label("client   "), client_text),
            line(label("ceiling  "), value(percent(ceiling)), label(" (workload as sent)")),
            line(label("cached   "), value(compact(cached)), label(" prompt tok/s")),
        ]
        if caching_off:
            lines.append(Content.styled("prefix caching is off on the server", "$text-warning"))
        self.figures.show(Content("\n").join(lines))
        plot(self.chart, self.history.prefix_hit)
        self.query_one("#prefix-retention", RetentionChart).plot(retention_view(snap))
