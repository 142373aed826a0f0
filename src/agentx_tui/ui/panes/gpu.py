"""¹ GPU: one compact row per GPU and the mean utilisation history."""

from __future__ import annotations

from textual.content import Content

from agentx_tui.snapshot import GpuFigures, Snapshot
from agentx_tui.ui._format import NA, bar, percent
from agentx_tui.ui.panes._base import GaugePane, label, load_style, plot, value

_GIB = 1024**3
MAX_ROWS = 8  # one row per GPU up to a node's worth; a fleet's are summed up in one line


class GpuPane(GaugePane):
    KEY = 1
    TITLE = "GPU"

    def show(self, snap: Snapshot) -> None:
        rows, spark = self.figures, self.chart
        if not snap.gpu.gpus:
            rows.show(Content.styled(snap.gpu.status, "$text-warning"))
            spark.add_class("-no-gpu")
            return
        spark.remove_class("-no-gpu")
        width = max(rows.size.width, 30)
        gpus = snap.gpu.gpus
        shown = [_row(gpu, width) for gpu in gpus[:MAX_ROWS]]
        if len(gpus) > MAX_ROWS:  # a fleet's GPUs: the busiest rows would not fit, say how many more
            mean = [g.utilization for g in gpus if g.utilization is not None]
            rest = percent(sum(mean) / len(mean), 0) if mean else NA
            shown.append(label(f"+{len(gpus) - MAX_ROWS} more GPUs · mean util of all {len(gpus)}: {rest}"))
        rows.show(Content("\n").join(shown))
        plot(spark, self.history.gpu_util)
        self.set_subtitle(snap.gpu.gpus[0].source)


def _row(gpu: GpuFigures, width: int) -> Content:
    memory = (
        gpu.memory_used_bytes / gpu.memory_total_bytes
        if gpu.memory_used_bytes is not None and gpu.memory_total_bytes
        else None
    )
    power = NA if gpu.power_w is None else f"{gpu.power_w:.0f}"
    limit = "" if gpu.power_limit_w is None else f"/{gpu.power_limit_w:.0f}"
    temp = " n/a" if gpu.temperature_c is None else f" {gpu.temperature_c:.0f}°C"
    wide = width >= 60
    watts = f" {power}{limit}W".rjust(10) if wide else f" {power}W"
    name_w = 12 if wide else 5
    if wide:
        used = NA if gpu.memory_used_bytes is None else f"{gpu.memory_used_bytes / _GIB:.0f}"
        total = "" if gpu.memory_total_bytes is None else f"/{gpu.memory_total_bytes / _GIB:.0f}G"
        memory_parts: list[Content | str] = [
            Content.styled(bar(memory, 6), load_style(memory, 0.9, 0.97)),
            f" {used}{total}".ljust(9),
        ]
    else:
        memory_parts = [Content.styled(f"{percent(memory, 0):>3}", load_style(memory, 0.9, 0.97))]
    head: list[Content | str] = [
        value(f"{gpu.index} "),
        gpu.name.removeprefix("NVIDIA ")[:name_w].ljust(name_w),
        " ",
    ]
    tail: list[Content | str] = [
        value(f" {percent(gpu.utilization, 0):>4}" if wide else f" {percent(gpu.utilization, 0):>3}"),
        label(" mem "),
        *memory_parts,
        watts,
        temp,
    ]
    fixed = sum(len(part.plain if isinstance(part, Content) else part) for part in (*head, *tail))
    util = Content.styled(bar(gpu.utilization, max(3, width - fixed)), load_style(gpu.utilization, 0.9, 2.0))
    return Content.assemble(*head, util, *tail)
