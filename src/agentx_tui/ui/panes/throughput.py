"""⁴ Throughput: output, prompt, cached and total tokens/s with histories; tokens/s per user (the North
Star and decode) and where the North-Star-setting requests' time went (panes/_time.py: first token,
decode, stalls; the servers' phases; speculative decoding's acceptance); requests/s; TTFT and ITL; a
timed replay that falls behind its schedule."""

from __future__ import annotations

from collections import deque

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.geometry import Size
from textual.widgets import Sparkline

from agentx_tui.snapshot import Figures, Percentiles, Snapshot
from agentx_tui.snapshot.rates import rates as window_rates
from agentx_tui.sweep import DECODE, NORTH_STAR, point_x
from agentx_tui.ui._format import NA, compact, percent, seconds
from agentx_tui.ui.panes._base import FigureLines, Pane, label, line, plot, value
from agentx_tui.ui.panes._spark import HistoryChart
from agentx_tui.ui.panes._time import time_lines

_SERIES = ("output", "prompt", "cached", "total")
_BORDER_CELLS = 6  # a border title's corners and the spaces around it
_MAXIMISED_CHART_ROWS = 2  # a maximised pane's rate charts keep this many rows each (app.tcss)


class ThroughputPane(Pane):
    KEY = 4
    TITLE = "Throughput"

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        # Textual's grid sizes an auto row by its panes' heights at one column's width, also for a pane
        # that spans two (this one, in the full layout): its long lines would wrap there and the row would
        # get rows it never draws. Measured at the width it is drawn at.
        span = self.styles.column_span or 1
        gutter = self.styles.gutter.totals[0]
        return super().get_content_height(container, viewport, (width + gutter) * span - gutter)

    def compose(self) -> ComposeResult:
        for name in _SERIES:
            with Horizontal(classes="rate-row"):
                yield FigureLines(id=f"tps-{name}", classes="rate-label")
                yield HistoryChart(id=f"tps-{name}-history", classes="rate-history")
        yield FigureLines(id="tps-latency")

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
            self.query_one(f"#tps-{name}", FigureLines).show(
                line(label(f"{name:<7}"), value(f"{compact(figures[name]):>7}", style), label(" tok/s"))
            )
            plot(self.query_one(f"#tps-{name}-history", Sparkline), histories[name])
        client = snap.client
        ttft, itl = rates.ttft, rates.itl
        width = self.query_one("#tps-latency", FigureLines).size.width
        before = [
            _per_user(
                point_x(client.window, NORTH_STAR) if client else None,
                point_x(client.window, DECODE) if client else None,
                width,
            )
        ]
        after = [
            _latency("TTFT", ttft),
            _latency("ITL ", itl),
            _requests_and_per_gpu(
                rates.requests, rates.total, snap.cost.gpus if snap.cost.gpus_source else None, width
            ),
        ]
        if snap.proxy is not None:
            after.append(_real_share(snap))
        if client is not None and client.run.schedule_behind:
            after += _behind_schedule(client.run, width)
        if client is not None and client.run.cold_start_figures:
            after.append(_cold_start(client.run, width))
        if client is not None and client.totals.requests_failed:
            after.append(Content.styled(f"{client.totals.requests_failed} failed requests", "bold $text-error"))
        # Where that North Star's time went, and speculative decoding when the server speculates: maximised,
        # in as much detail as the rows the charts leave (two each) hold.
        room = self.content_size.height - _MAXIMISED_CHART_ROWS * len(_SERIES) - len(before) - len(after)
        for detail, rule in ((True, True), (True, False), (False, False)) if self.is_maximized else ((False, False),):
            time = time_lines(snap, width, detail=detail, rule=rule)
            if sum(part.plain.count("\n") + 1 for part in time) <= room:
                break
        self.query_one("#tps-latency", FigureLines).show(Content("\n").join([*before, *time, *after]))
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


def _per_user(e2e_p90: float | None, decode_p90: float | None, width: int) -> Content:
    """Tokens/s per user at p90, in the words that fit `width`: first the North Star, E2E-normalized
    interactivity (1 / p90 of E2E latency per output token, the AgentX "tok/s per user"), then decode
    interactivity (1 / p90 of per-request ITL) beside it (docs/metrics.md)."""
    e2e, decode = compact(e2e_p90), compact(decode_p90)
    for e2e_words, decode_words, unit in (
        (" E2E (North Star) · ", " decode", " tok/s"),
        (" E2E · ", " decode", " tok/s"),
        (" E2E · ", " decode", ""),
        (" E2E ", " dec", ""),
    ):
        parts = [
            label("per user p90 "), value(e2e, "bold $accent"), label(e2e_words), value(decode), label(decode_words),
            label(unit),
        ]  # fmt: skip
        if sum(part.cell_length for part in parts) <= width:
            break
    return line(*parts)


def _behind_schedule(run: Figures, width: int) -> list[Content]:
    """A timed replay whose users fell behind its schedule (docs/metrics.md, "Honest clocks"): how late
    its requests went out, and how many users would have kept it; one line where it fits, else two."""
    lag = f"behind schedule: lag p90 {seconds(run.schedule_lag_p90_s)}"
    needed = run.schedule_users_needed
    few = f"too few users: ~{needed} would keep it" if needed is not None else "too few users"
    if len(lag) + 3 + len(few) <= width:
        return [Content.styled(f"{lag} · {few}", "bold $text-warning")]
    return [Content.styled(lag, "bold $text-warning"), Content.styled(few, "$text-warning")]


def _cold_start(run: Figures, width: int) -> Content:
    """The run's latency figures that its sessions' cold first requests set (docs/metrics.md, "Cold
    start"): what the report and a --check will read, and the TTFT p90 without them, in the words that fit."""
    candidates: tuple[str, ...]
    if "ttft_p90_s" in (run.cold_start_figures or ()):
        every, warm = seconds(run.ttft_p90_s), seconds(run.ttft_p90_s_warm)
        candidates = (
            f"cold start: run TTFT p90 {every} set by first requests ({warm} without)",
            f"cold start: run TTFT p90 {every} ({warm} without)",
            f"cold start: run TTFT p90 {every}, {warm} warm",
            f"cold: TTFT p90 {every}, {warm} warm",
        )
    else:
        count = len(run.cold_start_figures or ())
        figures = f"{count} run latency figure{'s' if count != 1 else ''}"
        candidates = (f"cold start: first requests set {figures}", "cold start sets latency")
    return Content.styled(next((t for t in candidates if len(t) <= width), candidates[-1]), "$text-warning")


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
