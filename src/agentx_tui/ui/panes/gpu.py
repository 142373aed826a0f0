"""¹ GPU: one compact row per GPU, how close to the limit (the roofline and energy per token), and the
mean utilisation history.

How close to the limit (docs/metrics.md, "Roofline", "Energy"), over the rate window: MFU and MBU with
the one that binds in bold, the achieved TFLOP/s and HBM GB/s per GPU against the peak, and joules per
token; where a figure cannot be known, n/a and why (the flag, the GPU without a peak, the driver without
an energy counter or power reading). Two lines at 80 columns; more words where the pane is wide."""

from __future__ import annotations

from textual.content import Content

from agentx_tui.snapshot import GpuReading, LimitsReading, Snapshot
from agentx_tui.snapshot.limits import MODELLED_ENERGY
from agentx_tui.ui._format import NA, bar, compact, percent
from agentx_tui.ui.panes._base import GaugePane, flow, label, load_style, plot, value

_GIB = 1024**3
MAX_ROWS = 8  # one row per GPU up to a node's worth; a fleet's are summed up in one line


class GpuPane(GaugePane):
    KEY = 1
    TITLE = "GPU"

    def show(self, snap: Snapshot) -> None:
        rows, spark = self.figures, self.chart
        width = max(rows.size.width, 30)
        limits = limits_lines(snap.limits, width) if snap.limits is not None else []
        if not snap.gpu.gpus:
            # A server without an NVIDIA GPU (the tiny engine on CPU) still says what work it did.
            rows.show(Content("\n").join([Content.styled(snap.gpu.status, "$text-warning"), *limits]))
            spark.add_class("-no-gpu")
            return
        spark.remove_class("-no-gpu")
        gpus = snap.gpu.gpus
        shown = [_row(gpu, width) for gpu in gpus[:MAX_ROWS]]
        if len(gpus) > MAX_ROWS:  # a fleet's GPUs: the busiest rows would not fit, say how many more
            mean = [g.utilization for g in gpus if g.utilization is not None]
            rest = percent(sum(mean) / len(mean), 0) if mean else NA
            shown.append(label(f"+{len(gpus) - MAX_ROWS} more GPUs · mean util of all {len(gpus)}: {rest}"))
        rows.show(Content("\n").join([*shown, *limits]))
        plot(spark, self.history.gpu_util)
        modelled = snap.limits is not None and _modelled(snap.limits)
        self.set_subtitle(snap.gpu.gpus[0].source + (" · power modelled" if modelled else ""))


def _row(gpu: GpuReading, width: int) -> Content:
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


def limits_lines(limits: LimitsReading, width: int) -> list[Content]:
    """How close to the limit over the rate window, in lines of at most `width` cells (module docstring):
    the utilisations and the bound, then the work achieved and joules per token; a reason for n/a is
    wrapped at word boundaries."""
    wide = width >= 60
    peak = limits.peak
    ceiling: list[Content] = []
    why: str | None = None
    if limits.mfu is not None or limits.mbu is not None:
        of_flops = f" of {_few(peak.tflops)} TF/s {peak.dtype.upper()}" if wide else ""
        of_bytes = f" of {_few(peak.hbm_gb_per_s)} GB/s" if wide else ""
        ceiling = [
            _utilisation("MFU", limits.mfu, of_flops, bound=limits.roofline_bound == "compute"),
            _utilisation("MBU", limits.mbu, of_bytes, bound=limits.roofline_bound == "memory"),
        ]
        if limits.roofline_bound is not None:
            ceiling.append(value(f"{limits.roofline_bound}-bound", "bold $accent"))
    tflops, gb_s = limits.achieved_tflops_per_gpu, limits.achieved_hbm_gb_per_s_per_gpu
    work: list[Content] = []
    if tflops is not None or gb_s is not None:
        work = [
            Content.assemble(label("achieved " if wide else ""), value(_few(tflops)), label(" TF/s")),
            Content.assemble(value(_few(gb_s)), label(" GB/s per GPU" if wide else " GB/s")),
        ]
        if not ceiling:  # the work is known, the ceiling is not: say why
            why = f"MFU, MBU n/a: {peak.source}" if wide else "MFU n/a: no peak (--gpu-peak)"
    elif limits.roofline_note is not None:
        why = f"MFU, MBU {limits.roofline_note}" if wide else "MFU n/a: --enable-mfu-metrics"
    energy, energy_why = _energy(limits, wide)
    lines = [flow(ceiling, width), _sentence(why, width), flow([*work, energy], width), _sentence(energy_why, width)]
    return [line for line in lines if line.plain.strip()]


def _sentence(text: str | None, width: int) -> Content:
    """Words in muted text, wrapped at `width` between words."""
    return flow([label(word) for word in (text or "").split()], width, gap=" ")


def _utilisation(name: str, fraction: float | None, of: str, *, bound: bool) -> Content:
    """`MFU 25%` (wide: `MFU 25% of 989 TF/s BF16`), the figure that binds in bold accent."""
    return Content.assemble(
        label(f"{name} "), value(percent(fraction, 0), "bold $accent" if bound else "bold"), label(of)
    )


def _few(number: float | None) -> str:
    """Three significant digits, K/M for the large (achieved and peak TF/s, GB/s)."""
    return compact(number, 3, sep="", trim=True)


def _energy(limits: LimitsReading, wide: bool) -> tuple[Content, str | None]:
    """Joules per token over the window (wide: and that they are the window's, modelled on the simulator);
    n/a, and (wide) why, where they cannot be known."""
    if limits.joules_per_token is None:
        return label("J/tok n/a"), (limits.energy_note if wide else None)
    words = " J/tok (window, modelled)" if _modelled(limits) else " J/tok (window)"
    return Content.assemble(value(f"{limits.joules_per_token:.2g}"), label(words if wide else " J/tok")), None


def _modelled(limits: LimitsReading) -> bool:
    """Whether the energy is the simulator's power model, not a measurement."""
    return MODELLED_ENERGY in (limits.energy_source or "")
