"""³ Prefix cache: where the prompt tokens came from (computed, the GPU prefix cache, an offload tier), the
hit rates beside the workload's ceiling, the offload tier's traffic, and how long KV blocks stay.

Lines, in order: the server's window hit rate (and since it started), the client's and the ceiling;
the window's prompt tokens by source (a stacked bar and the rates too where the pane is wide); the
offload tier's GB/s each way and transfer time per GB; KV residency (idle before eviction, reuse gap)
p50 and p90, and the share of blocks it samples (on the border where the pane is narrow: at 80×24 the
pane has 35 columns; in the full layout from 150 columns 45 or more, and it must not grow the top row
past its old height there). A figure the server does
not export is `n/a` with the flag or version that would give it. Below them, `#cache-client` holds the
client's own view of the cache: its evicted share and the retention curve (panes/_retention.py); the
server's hit-rate history shows when the pane is maximised.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content

from agentx_tui.snapshot import EndpointReading, Percentiles, Snapshot
from agentx_tui.snapshot.unknown import BY_SOURCE_SINCE, residency_unknown
from agentx_tui.ui._format import NA, cells, compact, percent, seconds
from agentx_tui.ui._history import History
from agentx_tui.ui.panes._base import GaugePane, flow, label, line, plot, value
from agentx_tui.ui.panes._retention import RetentionChart, RetentionView, retention_view

WIDE = 56  # from this many columns: the stacked bar, the rates, more words
LABEL, LABEL_WIDE = 8, 11  # the label column, narrow and wide
# The prompt tokens' sources: glyph (the bar reads without colour too), theme colour, words, short words.
SOURCES = (
    ("▒", "$warning", "computed", "comp"),
    ("█", "$success", "GPU cache", "GPU"),
    ("▓", "$accent", "offload", "offl"),
)
MUTED = "$text-muted"


class CachePane(GaugePane):
    KEY = 3
    TITLE = "Prefix cache"

    def __init__(self, history: History, *, id: str | None = None) -> None:
        super().__init__(history, id=id)
        # The client's view of the cache: its evicted share and the retention curve (panes/_retention.py).
        self.retention = RetentionChart(RetentionView(), id="cache-retention")
        self.client_view = Vertical(self.retention, id="cache-client")

    def compose(self) -> ComposeResult:
        yield self.figures
        yield self.client_view
        yield self.chart

    def show(self, snap: Snapshot) -> None:
        width = max(self.figures.size.width, 30)
        self.figures.show(Content("\n").join(cache_lines(snap, width)))
        self.retention.plot(retention_view(snap))
        plot(self.chart, self.history.prefix_hit)
        agg = snap.aggregate
        narrow_residency = width < WIDE and agg is not None and _has_residency(agg)
        self.set_subtitle(f"residency p50/p90, {short_sample_words(agg)}" if narrow_residency else "")


def cache_lines(snap: Snapshot, width: int) -> list[Content]:
    """The pane's figure lines for a pane `width` columns wide (pure: the tests call it)."""
    agg = snap.aggregate
    lines = _hit_rates(snap, width)
    if agg is None:
        return [*lines, Content.styled("no server metrics", "$text-warning")]
    if agg.prefix_caching_enabled is False:
        lines.append(Content.styled("prefix caching is off on the server", "$text-warning"))
    return [*lines, *_sources(agg, width), _offload(agg, width), *_residency(agg, width)]


def _label_width(width: int) -> int:
    return LABEL_WIDE if width >= WIDE else LABEL


def _row(head: str, parts: list[Content], width: int, gap: str = "  ") -> Content:
    """A labelled row: the parts side by side after the label while they fit, then on further lines
    under the first part (`flow`: a figure never wraps away from its label)."""
    indent = _label_width(width)
    body = flow(parts, max(width - indent, 10), gap)
    return line(label(head.ljust(indent)), Content("\n" + " " * indent).join(body.split("\n")))


def _why(*words: str) -> list[Content]:
    """Why a figure is unknown, in parts a narrow pane breaks the line between."""
    return [Content.styled(part, MUTED) for part in words]


def _hit_rates(snap: Snapshot, width: int) -> list[Content]:
    agg, client = snap.aggregate, snap.client
    server = [
        value(percent(agg.prefix_hit_rate_window if agg else None), "bold $accent"),
        line(label("window · life "), value(percent(agg.prefix_hit_rate_lifetime if agg else None))),
    ]
    if client is None:
        client_rate = value("n/a — no load sent", MUTED)
    elif not client.totals.cached_tokens_reported:
        client_rate = value("n/a — server omits cached_tokens", "$text-warning")
    else:
        client_rate = value(percent(client.window.prefix_cache_hit_rate_client))
    ceiling = client.window.prefix_cache_hit_rate_ceiling if client else None
    workload = [line(label("ceiling "), value(percent(ceiling)))]
    if width >= WIDE:
        workload.append(label("(workload as sent)"))
    return [_row("server", server, width, " "), _row("client", [client_rate, *workload], width)]


def _bar(shares: tuple[float, float, float], width: int) -> Content:
    """The three shares as one bar exactly `width` cells wide (largest remainders)."""
    widths = cells(list(shares), width)
    return Content.assemble(
        *(Content.styled(glyph * n, style) for (glyph, style, _, _), n in zip(SOURCES, widths, strict=True))
    )


def _sources(agg: EndpointReading, width: int) -> list[Content]:
    shares = (agg.prompt_share_computed, agg.prompt_share_gpu_cache, agg.prompt_share_offload)
    if None in shares:
        if agg.prompt_computed_tokens_per_s is not None:  # exported, but no prompt token in the window
            return [_row("source", [label("no prompt tokens in the window")], width)]
        why = _why("n/a: needs", BY_SOURCE_SINCE, *(["(prompt_tokens_by_source)"] if width >= WIDE else []))
        return [_row("source", why, width, " ")]
    known = (shares[0] or 0.0, shares[1] or 0.0, shares[2] or 0.0)
    if width < WIDE:  # one line: each share after its source's name, in the source's colour
        parts = [
            line(Content.styled(short, style), value(f" {percent(share, 0)}"))
            for (_, style, _, short), share in zip(SOURCES, known, strict=True)
        ]
        return [_row("source", parts, width, " ")]
    rates = (agg.prompt_computed_tokens_per_s, agg.prompt_gpu_cache_tokens_per_s, agg.prompt_offload_tokens_per_s)
    legend = [
        line(Content.styled(glyph, style), label(f" {words} "), value(percent(share)), label(f" {compact(rate)}/s"))
        for (glyph, style, words, _), share, rate in zip(SOURCES, known, rates, strict=True)
    ]
    return [line(label("source".ljust(LABEL_WIDE)), _bar(known, width - LABEL_WIDE)), _row("", legend, width)]


def _offload(agg: EndpointReading, width: int) -> Content:
    load, store = agg.kv_offload_load_gb_per_s, agg.kv_offload_store_gb_per_s
    if load is None and store is None:
        return _row("offload", _why(*_no_offload(agg, width)), width, " ")
    if width < WIDE:
        parts = [
            line(label("↓"), value(_gb(load)), label(" ↑"), value(_gb(store)), label(" GB/s")),
            line(value(_ms(agg.kv_offload_load_s_per_gb)), label(" ms/GB")),
        ]
        return _row("offload", parts, width, " ")
    parts = [
        _way("load", load, agg.kv_offload_load_s_per_gb),
        _way("store", store, agg.kv_offload_store_s_per_gb),
    ]
    if agg.kv_offload_cpu_bytes is not None:
        parts.append(line(label("CPU tier "), value(f"{compact(agg.kv_offload_cpu_bytes / 1e9)} GB")))
    if agg.waiting_deferred is not None:
        parts.append(line(label("waiting for KV "), value(f"{agg.waiting_deferred:.0f}")))
    return _row("offload", parts, width)


def _way(name: str, gb_per_s: float | None, s_per_gb: float | None) -> Content:
    """One way of the offload traffic: its GB/s and its transfer time per GB."""
    return line(label(f"{name} "), value(_gb(gb_per_s)), label(" GB/s "), value(_ms(s_per_gb)), label(" ms/GB"))


def _no_offload(agg: EndpointReading, width: int) -> tuple[str, ...]:
    """Why there are no offload figures: the flag that would give them, or what the server lacks."""
    if agg.kv_offload_cpu is False:
        flag = "--sim-cpu-kv-gb" if agg.flavor == "sim" else "--kv-offloading-size"
        return ("off: the server has no", flag) if width >= WIDE else ("off", f"({flag})")
    if agg.flavor == "sglang":
        return ("n/a: SGLang exports", "no KV offload metrics")
    return ("n/a: no offloading", "connector's counters")


def _gb(amount: float | None) -> str:
    return NA if amount is None else f"{amount:.2f}" if amount < 10 else f"{amount:.1f}"


def _ms(s_per_gb: float | None) -> str:
    """Transfer time per GB in milliseconds: a 50 GB/s link takes 20 ms a GB."""
    if s_per_gb is None:
        return NA
    return f"{s_per_gb * 1000:.0f}" if s_per_gb >= 0.01 else f"{s_per_gb * 1000:.1f}"


def _has_residency(agg: EndpointReading) -> bool:
    return agg.totals.kv_block_idle_before_evict is not None or agg.kv_block_idle_before_evict.p50 is not None


def _residency(agg: EndpointReading, width: int) -> list[Content]:
    idle, reuse = agg.kv_block_idle_before_evict, agg.kv_block_reuse_gap
    head = "residency" if width >= WIDE else "resid."
    if not _has_residency(agg):
        flag = "--kv-cache-metrics" if agg.flavor == "sim" or width < WIDE else "vLLM's --kv-cache-metrics"
        return [_row(head, _why("n/a: needs", flag), width, " ")]
    if _unknown(idle) and _unknown(reuse):  # nothing evicted to read them from: one reason for both
        return [_row(head, _why(*f"n/a: {_no_eviction(agg)}".split(" ")), width, " ")]  # wrapped by word
    if width < WIDE:  # p50/p90 and the sample rate are said on the border
        parts = [line(label("evict "), _pair(idle)), line(label("reuse "), _pair(reuse))]
        if _unknown(reuse):
            parts.append(label(f"({NO_REUSE_GAP_SHORT})"))
        return [_row("resid.", parts, width)]
    lifetime = line(label("block lifetime p50 "), value(_s(agg.kv_block_lifetime.p50)))
    reuse_parts = [line(value(NA), label(f" ({NO_REUSE_GAP})"))] if _unknown(reuse) else [_p50_p90(reuse)]
    return [
        _row("idle→evict", [_p50_p90(idle), lifetime], width),
        _row("reuse gap", [*reuse_parts, label(sample_words(agg))], width),
    ]


# Reuse gaps are the gaps between a block's last accesses, recorded when it is evicted: none for blocks
# evicted after one use.
NO_REUSE_GAP, NO_REUSE_GAP_SHORT = "no evicted block was hit twice", "no block hit twice"


def _unknown(p: Percentiles) -> bool:
    return p.p50 is None and p.p90 is None


def _no_eviction(agg: EndpointReading) -> str:
    """Why the window has no residency figure while the server exports them: no block evicted in it,
    or none ever (the report's reason, `residency_unknown`)."""
    evicted = agg.totals.kv_block_idle_before_evict
    if evicted is not None and evicted.counts[-1] > 0:
        return "none evicted in the window"
    return residency_unknown(agg.kv_cache_metrics_sample, exported=True)


def sample_words(agg: EndpointReading | None) -> str:
    """The share of KV blocks the residency figures sample, in words."""
    sample = agg.kv_cache_metrics_sample if agg else None
    if sample is None:
        return "sample rate n/a (vLLM does not export it)"
    return "every block sampled" if sample >= 1 else f"sampled: 1 in {1 / sample:.0f} blocks"


def short_sample_words(agg: EndpointReading | None) -> str:
    """`sample_words` for the border of a narrow pane."""
    sample = agg.kv_cache_metrics_sample if agg else None
    if sample is None:
        return "sample rate n/a"
    return "all sampled" if sample >= 1 else f"1/{1 / sample:.0f} sampled"


def _pair(p: Percentiles) -> Content:
    """p50/p90 in few columns; one n/a when neither is known."""
    if p.p50 is None and p.p90 is None:
        return value(NA)
    return line(value(_s(p.p50)), label("/"), value(_s(p.p90)))


def _p50_p90(p: Percentiles) -> Content:
    return line(label("p50 "), value(_s(p.p50)), label(" p90 "), value(_s(p.p90)))


def _s(value_s: float | None) -> str:
    """Residency times run from milliseconds to half an hour: '830 ms', '3.2 s', '41 s', '5.0 min'."""
    if value_s is None:
        return NA
    if value_s < 1:
        return seconds(value_s)
    if value_s < 60:
        return f"{value_s:.1f} s" if value_s < 10 else f"{value_s:.0f} s"
    return f"{value_s / 60:.1f} min"
