"""⁴ Throughput: output, prompt, cached and total tokens/s with histories; requests/s; TTFT and ITL."""

from __future__ import annotations

from collections import deque

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Sparkline

from agentx_tui.snapshot import Percentiles, Snapshot
from agentx_tui.snapshot.rates import rates as window_rates
from agentx_tui.ui._format import NA, compact, percent, seconds
from agentx_tui.ui.panes._base import Figures, Pane, label, line, plot, value
from agentx_tui.ui.panes._spark import HistoryChart

_SERIES = ("output", "prompt", "cached", "total")
_BORDER_CELLS = 6  # a border title's corners and the spaces around it


class ThroughputPane(Pane):
    KEY = 4
    TITLE = "Throughput"

    def compose(self) -> ComposeResult:
        for name in _SERIES:
            with Horizontal(classes="rate-row"):
                yield Figures(id=f"tps-{name}", classes="rate-label")
                yield HistoryChart(id=f"tps-{name}-history", classes="rate-history")
        yield Figures(id="tps-latency")

    def show(self, snap: Snapshot) -> None:
        rates = window_rates(snap)
        histories: dict[str, deque[float | None]] = {
            "output": self.history.output_tps,
            "prompt": self.history.prompt_tps,
            "cached": self.history.cached_tps,
            "total": self.history.total_tps,
        }
        figures = {
            "output": rates.output,
            "prompt": rates.prompt,
            "cached": rates.cached,
            "total": rates.total,
        }
        for name in _SERIES:
            style = "bold $accent" if name == "total" else "bold"
            self.query_one(f"#tps-{name}", Figures).show(
                line(label(f"{name:<7}"), value(f"{compact(figures[name]):>7}", style), label(" tok/s"))
            )
            plot(self.query_one(f"#tps-{name}-history", Sparkline), histories[name])
        client = snap.client
        ttft, itl = rates.ttft, rates.itl
        width = self.query_one("#tps-latency", Figures).size.width
        lines = [
            _per_user(
                client.interactivity_p90_tokens_per_s if client else None,
                client.interactivity_p50_tokens_per_s if client else None,
            ),
            _latency("TTFT", ttft),
            _latency("ITL ", itl),
            _requests_and_per_gpu(
                rates.requests, rates.total, snap.cost.gpus if snap.cost.gpus_source else None, width
            ),
        ]
        if snap.proxy is not None:
            lines.append(_real_share(snap))
        if client is not None and client.totals.requests_failed:
            lines.append(Content.styled(f"{client.totals.requests_failed} failed requests", "bold $text-error"))
        self.query_one("#tps-latency", Figures).show(Content("\n").join(lines))
        self.set_subtitle(_source(rates.source, snap, self.size.width))


def _source(source: str, snap: Snapshot, width: int) -> str:
    """Who measured the figures and, when it was the load client, what a token cost it (its CPU), in
    the words that fit the border (`width`)."""
    if source == "none":
        return ""
    health = snap.client_health
    # None before the client streamed a token, and in a run with no simulated users (`-w none` with
    # `--proxy`): the client then sent no token of its own, and its CPU over the agents' relayed tokens
    # would be the proxy's and the dashboard's cost, not the client's (run/traffic.py leaves it out).
    cost = health.cpu_us_per_token if health is not None and source == "client" else None
    if cost is None:
        return f"measured by the {source}"
    for text in (f"measured by the client · {compact(cost)} µs CPU/tok", f"by the client, {compact(cost)} µs CPU/tok"):
        if len(text) <= width - _BORDER_CELLS:
            return text
    return "measured by the client"


def _per_user(p90: float | None, p50: float | None) -> Content:
    # AgentX interactivity: 1 / percentile of per-request ITL; p90 is the speed 90% of requests beat,
    # the "tokens/s per user" of the AgentX figures (docs/metrics.md).
    return line(
        label("per user p90 "), value(compact(p90), "bold $accent"), label("  p50 "), value(compact(p50)),
        label(" tok/s"),
    )  # fmt: skip


def _requests_and_per_gpu(requests: float | None, total: float | None, gpus: int | None, width: int) -> Content:
    per_gpu = total / gpus if total is not None and gpus else None
    parts = [
        label("req/s "), value(compact(requests)), label("  per GPU "), value(compact(per_gpu), "bold $accent"),
        label(" tok/s"),
    ]  # fmt: skip
    why = f" ({gpus} GPU{'s' if gpus != 1 else ''})" if gpus else " (GPUs unknown)"
    if sum(part.cell_length for part in parts) + len(why) <= width:  # the count, where it fits
        parts.append(label(why))
    return line(*parts)


def _real_share(snap: Snapshot) -> Content:
    """How much of the traffic counted here is real agents' (through --proxy), over the run."""
    proxy, client = snap.proxy, snap.client
    assert proxy is not None
    real = proxy.prompt_tokens + proxy.output_tokens
    total = client.totals.prompt_tokens + client.totals.output_tokens if client is not None else 0
    share = percent(real / total) if total else NA
    sessions = f"{proxy.live_sessions} live session{'s' if proxy.live_sessions != 1 else ''}"
    return line(label("real  "), value(share, "bold $accent"), label(f" of tokens · {sessions}"))


def _latency(name: str, figures: Percentiles) -> Content:
    # Padded so that the TTFT and ITL rows' p50 and p90 figures line up.
    return line(
        label(f"{name} p50 "),
        value(f"{seconds(figures.p50):>6}"),
        label("  p90 "),
        value(f"{seconds(figures.p90):>6}"),
    )
