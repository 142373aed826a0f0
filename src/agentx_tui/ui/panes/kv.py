"""² KV cache: usage gauge and history, running / waiting, preemptions, block geometry."""

from __future__ import annotations

from textual.content import Content

from agentx_tui.snapshot import Snapshot
from agentx_tui.ui._format import NA, bar, count, number, percent
from agentx_tui.ui.panes._base import GaugePane, label, line, load_style, plot, value

MAX_LISTED = 3  # endpoints listed one line each; beyond, the fleet pane lists them


class KvPane(GaugePane):
    KEY = 2
    TITLE = "KV cache"

    def show(self, snap: Snapshot) -> None:
        agg = snap.aggregate
        if agg is None:
            self.figures.show(Content.styled("no server metrics", "$text-warning"))
            return
        width = max(self.figures.size.width, 20)
        usage = agg.kv_cache_usage
        lines = [
            line(
                label("usage "),
                Content.styled(bar(usage, max(4, width - 13)), load_style(usage)),
                value(f" {percent(usage):>6}", load_style(usage)),
            ),
            line(
                label("running "),
                value(number(agg.running)),
                label("  waiting "),
                value(number(agg.waiting), "bold $warning" if agg.waiting else "bold"),
            ),
            line(
                label("preempt/s "),
                value(number(agg.preemptions_per_s, 2), "bold $error" if agg.preemptions_per_s else "bold"),
                label("  total "),
                value(count(agg.totals.preemptions)),
            ),
            line(label("blocks "), value(_blocks(agg.num_gpu_blocks, agg.block_size))),
        ]
        if 1 < len(snap.endpoints) <= MAX_LISTED:  # more replicas have the fleet pane (9)
            lines += [
                line(label(f"{i + 1} "), f"{percent(ep.kv_cache_usage, 0):>4} run {number(ep.running)}")
                for i, ep in enumerate(snap.endpoints)
            ]
        elif len(snap.endpoints) > MAX_LISTED:
            lines.append(label(f"mean of {len(snap.endpoints)} replicas · per replica: pane 9"))
        self.figures.show(Content("\n").join(lines))
        plot(self.chart, self.history.kv_usage)


def _blocks(blocks: int | None, size: int | None) -> str:
    if blocks is None:
        return NA
    if size is None:
        return f"{count(blocks)} (block size n/a)"
    return f"{count(blocks)} × {size} tok = {count(blocks * size)} tok"
