"""Headless output (`--headless`): one compact line per tick, then a summary with the checks.

Made for CI logs, pipes and `nohup`: plain ASCII columns and no escape sequences unless the stream
is a terminal (and NO_COLOR is unset); every line is flushed so a log shows progress as it happens.
Each line shows window figures: tokens/s and TTFT p90 are client-side when a load driver ran, else the
servers' own; NS p90 is the North Star, the window's p90 E2E-normalized interactivity (tok/s/user,
docs/metrics.md; n/a when observing only); KV % is the aggregate endpoint's; prefix is the servers'
window hit rate (the client's when the servers expose none); tok/$ is total tokens per dollar at the
window's rate. The columns fit in 79 (a terminal of 80 never wraps a line); the task count and the
AgentX verdict are in the summary, not on each line. A load worker that dies is said under the tick
that saw it (docs/scale.md), and its restart when a sweep restarts it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TextIO

from agentx_tui.report._checks import CheckResult
from agentx_tui.report._format import NA, by_unit, cell, elapsed, percent, si
from agentx_tui.report._keys import AGENTS_FIGURES, FIGURES, unit
from agentx_tui.report._model import Report
from agentx_tui.report._why import why
from agentx_tui.snapshot import (
    SUMMARY_TABLE,
    Figure,
    PointFigures,
    ProbeRow,
    RetentionRow,
    Snapshot,
    TierRead,
    WorkerLossRow,
    restarted_worker_words,
    shown,
    validity_words,
)
from agentx_tui.snapshot.rates import rates
from agentx_tui.sweep import DECODE, MIN_REQUESTS, NORTH_STAR, measured, point_x
from agentx_tui.terminal import wants_color
from agentx_tui.units import outputs_scaled

_COLUMNS = (
    ("elapsed", 7),
    ("users", 5),
    ("out tok/s", 9),
    ("total tok/s", 11),
    ("TTFT p90", 8),
    ("NS p90", 6),
    ("KV %", 5),
    ("prefix", 6),
    ("tok/$", 6),
)
# The summary: the figures declared for it (snapshot/figures.py), the run's always, the proxy's when it ran.
SUMMARY_KEYS = tuple(k for k, f in FIGURES.items() if f.summary and f.group == "run")
PROXY_SUMMARY_KEYS = tuple(k for k, f in FIGURES.items() if f.summary and f.group == "proxy")
# The figures whose 95% interval a --precision run states.
_INTERVAL_KEYS = tuple(k for k, f in FIGURES.items() if f.interval)
_BOLD, _RED, _GREEN, _RESET = "\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[0m"


def _seconds(value: float | None) -> str:
    return NA if value is None else f"{value:.3g}s"


def _shown(key: str, report: Report) -> str:
    """A summary figure with its unit, or n/a and why (report/_why.py)."""
    value = getattr(report, key)
    if value is None:
        return f"n/a ({why(key, report)})"
    return f"{cell(value)} {unit(key)}"


def duration_words(report: Report) -> str | None:
    """What `duration_s` covers (docs/metrics.md, "Report keys"): first sample to last, the drain included."""
    if report.duration_s is None:
        return None
    if report.drain_s is None:
        return "first sample to last"
    return (
        f"first sample to last: the last {report.drain_s:.1f} s finished the requests in flight when the run "
        "was stopped (drain_s)"
    )


def _head(fig: Figure) -> str:
    """A figure's column head in the summary's tables: the unit their headings state is left out."""
    return fig.head.removesuffix(" tok/s/user")


def _interval(low: float | None, high: float | None) -> str:
    return f"{si(low)}-{si(high)}" if low is not None and high is not None else "n/a"


def sweep_lines(report: Report) -> list[str]:
    """A sweep's points (their users, the figures declared for the summary's tables, whether on the
    frontier) and its tier reads (the figures declared for them, each interval after its
    figure, the agents' on the frontier's axis only; or why not read); none for a plain run."""
    if not report.is_sweep:
        return []
    points = [p.model_dump() if isinstance(p, PointFigures) else p for p in report.points or ()]
    frontier = set(report.frontier or ())
    columns = shown(PointFigures, SUMMARY_TABLE)
    head = ["users", *map(_head, columns), "frontier"]
    rows = []
    for i, p in enumerate(points):
        values = (by_unit(f.unit)(p.get(f.key)) for f in columns)
        rows.append([cell(p.get("users")), *values, "yes" if i in frontier else ""])
    lines = ["  points (p90 interactivity in tok/s/user):", *_columns(head, rows)]
    reads = shown(TierRead, SUMMARY_TABLE)
    tier_head = ["tier", "read on"]
    for f in reads:
        tier_head += [_head(f), "95% interval"] if f.interval else [_head(f)]
    tiers = []
    primary = report.frontier_axis
    for t in report.tiers or ():
        on_frontier = t.axis == primary if primary is not None else t.axis is None
        d = t.model_dump()
        if t.total_tokens_per_s_per_gpu is None:
            read = [f"n/a: {t.note or 'not read'}"]
        else:
            read = []
            for f in reads:
                if f.key in AGENTS_FIGURES and not (on_frontier and primary is not None):  # on its axis only
                    read.append("")
                    continue
                read.append(by_unit(f.unit)(d.get(f.key)))
                if f.interval:
                    read.append(_interval(*(d.get(k) for k in f.interval_keys)))
        axis = "North Star" if t.axis == NORTH_STAR else "decode"
        tiers.append([cell(t.tier), axis, *read])
    if tiers:
        lines += ["  tiers (where the frontier crosses p90 interactivity T tok/s/user):", *_columns(tier_head, tiers)]
        if not any(p.get("total_tokens_per_s_per_gpu_ci_low") is not None for p in points):
            lines.append("    (no point carries a 95% interval: too few requests in each)")
    return lines + probe_lines(report) + gpu_time_lines(report)


_PROBE_HEAD = ("users", "for", "window", "tok/s/GPU", "North Star p90", "decode p90")


def probe_lines(report: Report) -> list[str]:
    """A tier sweep's probes (docs/sweeps.md, "A tier sweep"): short windows, never points."""
    probes = [p.model_dump() if isinstance(p, ProbeRow) else p for p in report.probes or ()]
    if not probes:
        return []
    rows = [
        [
            cell(p.get("users")),
            str(p.get("purpose") or ""),
            _seconds(p.get("duration_s")),
            si(p.get("total_tokens_per_s_per_gpu")),
            si(p.get("e2e_interactivity_p90_tokens_per_s")),
            si(p.get("interactivity_p90_tokens_per_s")),
        ]
        for p in probes
    ]
    return ["  probes (short windows that found where the tiers cross; not points):", *_columns(_PROBE_HEAD, rows)]


def gpu_time_lines(report: Report) -> list[str]:
    """The sweep's GPU time: its wall time, probes and warm-ups included, × its GPUs."""
    if report.sweep_gpu_seconds is None:
        return ["  sweep GPU time: n/a (no GPU count)"] if report.has("sweep_gpu_seconds") else []
    hours = report.sweep_gpu_seconds / 3600
    return [
        f"  sweep GPU time: {report.sweep_gpu_seconds:,.0f} GPU·s ({hours:.2f} GPU·h), probes and warm-ups included"
    ]


def _columns(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows under their heads, right-aligned, indented 4; a last cell wider than its column (a tier's reason
    for n/a) runs on."""
    widths = [len(h) for h in head]
    for row in rows:
        for i, text in enumerate(row[: len(head)]):
            if not text.startswith("n/a:"):
                widths[i] = max(widths[i], len(text))
    out = ["    " + "  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True))]
    for row in rows:
        cells = [text if text.startswith("n/a:") else text.rjust(widths[i]) for i, text in enumerate(row)]
        out.append(("    " + "  ".join(cells)).rstrip())
    return out


def task_lines(report: Report) -> list[str]:
    """The summary's task figures (docs/metrics.md, "Tasks"), a few lines of words."""
    done, running, failed = report.tasks_completed or 0, report.tasks_running or 0, report.tasks_failed or 0
    lines = [f"  tasks: {done} completed, {running} still running, {failed} failed"]
    if not done:
        return [*lines, "    no task completed: the per-task figures are unknown"]
    share = report.task_model_share
    in_model = "" if share is None else f", {percent(share)} of it in the model"
    lines += [
        f"    task time p50 {_seconds(report.task_s_p50)}, p90 {_seconds(report.task_s_p90)}{in_model}",
        f"    per task: {cell(report.steps_per_task_mean)} calls, {si(report.tokens_per_task_mean)} tokens "
        f"({si(report.output_tokens_per_task_mean)} output)",
        f"    {cell(report.usd_per_task)} USD per task, {cell(report.tasks_per_hour_per_gpu)} tasks/hour/GPU",
    ]
    return lines


def agentx_lines(report: Report) -> list[str]:
    """AgentX validity (docs/sweeps.md): the verdict with its first reason, the other reasons, the rules met."""
    reasons, met = report.agentx_invalid_reasons or [], report.agentx_rules_met or []
    lines = [f"  AgentX: {validity_words(report.agentx_valid, reasons[0] if reasons else None)}"]
    lines += [f"    and: {reason}" for reason in reasons[1:]]
    lines += [f"    meets: {rule}" for rule in met]
    return lines


def limits_lines(report: Report) -> list[str]:
    """The summary's roofline and energy (docs/metrics.md, "Roofline", "Energy"), a line each, saying why
    a figure is n/a; none for a report of before them (a replayed older recording)."""
    if not report.has("mfu"):
        return []
    tflops, gb_s = report.achieved_tflops_per_gpu, report.achieved_hbm_gb_per_s_per_gpu
    if tflops is None and gb_s is None:
        note = report.achieved_source or ""
        roofline = note if note.startswith("n/a") else "n/a (no estimate of the work done)"
    elif report.mfu is None and report.mbu is None:  # the work is known, the ceiling is not
        roofline = f"{cell(tflops)} TFLOP/s, {si(gb_s)} GB/s per GPU; MFU, MBU n/a ({report.peak_source})"
    else:
        roofline = (
            f"{cell(tflops)} TFLOP/s of {cell(report.peak_tflops_per_gpu)} peak (MFU {percent(report.mfu)}), "
            f"{si(gb_s)} GB/s of {si(report.peak_hbm_gb_per_s_per_gpu)} (MBU {percent(report.mbu)}) per GPU"
        )
        roofline += f": {report.roofline_bound}-bound" if report.roofline_bound else ""
    if report.energy_j is None:
        energy = "n/a (no GPU energy or power reading)"
    else:
        energy = (
            f"{cell(report.joules_per_token)} J/token, {cell(report.joules_per_output_token)} J/output token, "
            f"{cell(report.tokens_per_joule)} tokens/J, {si(report.energy_j)} J, "
            f"{cell(report.gpu_power_w_per_gpu_mean)} W per GPU ({report.energy_source})"
        )
    return [f"  roofline: {roofline}", f"  energy: {energy}"]


def retention_lines(report: Report) -> list[str]:
    """The retention curve in words (docs/metrics.md §4): each idle-time bucket's hit share of the reused
    tokens, wrapped to 79 columns like the rest of the summary; none when no call came after an idle time."""
    rows = [row for row in report.retention_curve or () if isinstance(row, RetentionRow)]
    if not rows:
        return []
    parts = []
    for row in rows:
        idle = f"{row.idle_s_low:g}-{row.idle_s_high:g}s" if row.idle_s_high is not None else f">{row.idle_s_low:g}s"
        parts.append(f"{idle} {percent(row.hit_share)}")
    body = textwrap.wrap(", ".join(parts), 79, initial_indent="    ", subsequent_indent="    ")
    return ["  retention (hit share of reused tokens, by idle time before the call):", *body]


def loss_lines(report: Report) -> list[str]:
    """The summary's lost load workers (docs/scale.md), one line each: when, how, the users they took, and
    whether a fresh worker took them again; none when no worker died."""
    rows = [row for row in report.worker_losses or () if isinstance(row, WorkerLossRow)]
    if not rows:
        return []
    lines = [f"  load workers lost: {len(rows)}, {report.users_lost} users in all"]
    for row in rows:
        point = f" in sweep point {row.point}" if row.point is not None else ""
        if row.restarted_at_s is not None:
            fate = f"restarted at {elapsed(row.restarted_at_s)}"
        elif row.restart_error is not None:
            fate = f"not restarted: {row.restart_error}"
        else:
            fate = "not restarted"
        text = (
            f"worker {row.worker} of {row.workers} at {elapsed(row.at_s)}{point} ({row.how}): "
            f"{row.users_lost} of {row.users} users; {fate}"
        )
        lines += textwrap.wrap(text, 79, initial_indent="    ", subsequent_indent="      ")
    return lines


def _wrapped(head: str, text: str) -> list[str]:
    """`head` then `text`, wrapped to 79 columns like the rest of the summary."""
    return textwrap.wrap(f"{head}{text}", 79, initial_indent="  ", subsequent_indent="    ")


def measured_lines(report: Report) -> list[str]:
    """What the figures are over, and whether a few requests set them (docs/metrics.md, "Warm-up" and
    "Cold start"; docs/sweeps.md, thin points): a line each, none when there is nothing to say."""
    lines = []
    if report.warmup_s:
        window = NA if report.window_s is None else f"{report.window_s:.3g} s"
        lines += _wrapped(
            "measured: ",
            f"latency, interactivity, hit rates and rates over the {window} after a {report.warmup_s:g} s "
            "warm-up (the requests sent after it); totals over the whole run (window_keys)",
        )
    if report.cold_start_note:
        lines += _wrapped("cold start: ", report.cold_start_note)
    points = [p for p in report.points or () if isinstance(p, PointFigures)]
    unmeasured = [str(p.users) for p in points if not measured(p)]
    thin = [str(p.users) for p in points if p.thin and measured(p)]
    if thin:
        lines += _wrapped("thin points: ", f"{', '.join(thin)} users ({MIN_REQUESTS} requests give an interval)")
    if unmeasured:
        lines += _wrapped("not measured: ", f"{', '.join(unmeasured)} users (no request counted in the window)")
    unsteady = [str(p.users) for p in points if p.steady is False]
    if unsteady:
        lines += _wrapped(
            "not steady: ",
            f"{', '.join(unsteady)} users (--warmup ran out before MSER-5 found their load steady: steady_reason)",
        )
    return lines


class HeadlessPrinter:
    def __init__(self, stream: TextIO, *, color: bool | None = None) -> None:
        self.stream = stream
        self.color = wants_color(stream) if color is None else color
        self._header_done = False
        # The lost load workers already said, and those whose restart (or its failure) was said.
        self._losses_said = 0
        self._restarts_said: set[int] = set()

    def _style(self, text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if self.color else text

    def _write(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def header(self) -> None:
        self._header_done = True
        self._write(self._style("  ".join(name.rjust(width) for name, width in _COLUMNS), _BOLD))

    def publish(self, snap: Snapshot) -> None:
        """One line per tick (the run's tick loop calls this; errors writing are the caller's)."""
        self.line(snap)

    def close(self) -> None:
        """Nothing to release: the summary is written by the run when its report is ready."""

    def line(self, snap: Snapshot) -> None:
        if not self._header_done:
            self.header()
        agg = snap.aggregate
        now = rates(snap)
        values = (
            elapsed(snap.elapsed_s),
            str(snap.run.users),
            si(now.output),
            si(now.total),
            _seconds(now.ttft.p90),
            si(point_x(snap.client.window, NORTH_STAR) if snap.client else None),
            percent(agg.kv_cache_usage if agg else None),
            percent(now.prefix_hit_rate),
            si(snap.cost.tokens_per_dollar_total_window),
        )
        text = "  ".join(v.rjust(width) for v, (_, width) in zip(values, _COLUMNS, strict=True))
        if snap.run.state not in ("running", "starting"):
            text += "  " + self._style(snap.run.state, _RED if snap.run.state == "server down" else _BOLD)
        self._write(text)
        self._losses(snap)
        self._sweep_steps(snap)

    def _sweep_steps(self, snap: Snapshot) -> None:
        """A sweep's steps as they happen (a probe or point begun, done, its window dropped; the sweep's
        end), said under the tick that saw them: hours of headless sweep are not a wall of rows."""
        for event in snap.events:
            words = event.partition(" ")[2]  # after its clock stamp
            if words.startswith("sweep "):
                self._say(snap.elapsed_s, words, _BOLD)

    def _losses(self, snap: Snapshot) -> None:
        """A load worker that died, said under the tick that saw it (the users column shows the rest);
        and when a fresh worker took its users again, or could not."""
        losses = snap.run.load_losses
        for row in losses[self._losses_said :]:
            self._say(row.at_s, row.words, _RED)
        self._losses_said = len(losses)
        for i, row in enumerate(losses):
            if i in self._restarts_said:
                continue
            if row.restarted_at_s is not None:
                words = restarted_worker_words(row.worker, row.workers, None, row.users_lost)
                self._say(row.restarted_at_s, words, _BOLD)
            elif row.restart_error is not None:
                words = f"load worker {row.worker} of {row.workers} could not be restarted: {row.restart_error}"
                self._say(snap.elapsed_s, words, _RED)
            else:
                continue
            self._restarts_said.add(i)

    def _say(self, at_s: float, words: str, code: str) -> None:
        """An event's sentence under the tick rows, stamped like them and wrapped to 79 columns."""
        for line in textwrap.wrap(words, 79, initial_indent=f"{elapsed(at_s):>7}  ", subsequent_indent=" " * 9):
            self._write(self._style(line, code))

    def _client(self, report: Report) -> str:
        us, cores = report.client_cpu_us_per_token, report.client_cpu_cores_mean
        # No figure per token when the client streamed none of its own (a proxy-only run: docs/metrics.md).
        per_token = f"{cell(us)} µs of CPU per output token, " if us is not None else ""
        text = f"  client: {per_token}{cell(cores)} cores on average"
        if report.client_saturated:
            why = report.client_saturated_reason or "see the log"
            text += "; " + self._style(f"CLIENT-BOUND ({why}): figures measure the client", _RED)
        return text

    def _schedule(self, report: Report) -> str:
        lags = "/".join(
            cell(v) for v in (report.schedule_lag_p50_s, report.schedule_lag_p90_s, report.schedule_lag_p99_s)
        )
        text = f"  schedule lag p50/p90/p99: {lags} s (latency counts from when a request was due)"
        if report.schedule_behind:
            needed = report.schedule_users_needed
            more = f"; about {needed} users would keep it" if needed else ""
            text += "; " + self._style(f"BEHIND SCHEDULE: too few users{more}", _RED)
        return text

    def _interactivity(self, report: Report) -> str:
        """The North Star beside decode interactivity (docs/metrics.md): a gap is the prefill and queueing."""
        north_star, decode = point_x(report, NORTH_STAR), point_x(report, DECODE)
        return (
            f"  p90 interactivity: {cell(north_star)} E2E-normalized (North Star), {cell(decode)} decode "
            f"{unit('interactivity_p50_tokens_per_s')}"
        )

    def summary(self, report: Report, checks: Sequence[CheckResult]) -> None:
        title = "summary" + (f" (partial: {report.partial_reason})" if report.partial else "")
        if outputs := outputs_scaled(report.output_scale):  # not to be taken for a plain run
            title += f", {outputs}"
        self._write("")
        self._write(self._style(title, _BOLD))
        width = max(len(k) for k in SUMMARY_KEYS)
        for key in SUMMARY_KEYS:
            self._write(f"  {key.ljust(width)}  {_shown(key, report)}".rstrip())
            if key == "duration_s" and (said := duration_words(report)):
                self._write(f"  {'':{width}}  ({said})")
        if report.throughput_source:
            self._write(f"  (tokens/s are {report.throughput_source}-side)")
        for line in measured_lines(report):  # the warm-up's window, the cold start, thin points
            self._write(line)
        if report.proxied_requests is not None:  # --proxy: the real agents' part of it
            for key in PROXY_SUMMARY_KEYS:
                self._write(f"  {key.ljust(width)}  {_shown(key, report)}".rstrip())
        for line in sweep_lines(report):  # a sweep: its points and where the frontier crossed each tier
            self._write(line)
        for line in limits_lines(report):
            self._write(line)
        for line in retention_lines(report):  # where the cache stopped holding idle agents' contexts
            self._write(line)
        for line in loss_lines(report):  # load workers that died, and whether their users ran again
            self._write(line)
        if report.tasks_completed is not None:  # the run sent calls of its own: what its agents' tasks took
            for line in task_lines(report):
                self._write(line)
        if report.client_saturated is not None:  # a load generator ran: its cost, and was it the limit
            self._write(self._client(report))
        if report.schedule_lag_p90_s is not None:  # a timed replay: did the users keep its schedule
            self._write(self._schedule(report))
        if point_x(report, NORTH_STAR) is not None or point_x(report, DECODE) is not None:
            self._write(self._interactivity(report))
        if report.stop_reason:  # a plain run with --precision: how sure, and why it ended
            for key in _INTERVAL_KEYS:
                low, high = report.interval(key)
                span = NA if low is None or high is None else f"{cell(low)}–{cell(high)}"
                self._write(f"  {key} 95%: {span} {unit(key)}".rstrip())
            self._write(f"  ended: {report.stop_reason}")
        if report.agentx_invalid_reasons is not None:  # the run sent load of its own: was it an AgentX point
            first, *rest = agentx_lines(report)
            colour = _GREEN if report.agentx_valid else _RED if report.agentx_valid is False else _BOLD
            self._write(self._style(first, colour))
            for line in rest:
                self._write(line)
        for c in checks:
            verdict = self._style("PASS", _GREEN) if c.passed else self._style("FAIL", _RED)
            self._write(f"{verdict} {c.expr} ({c.verdict_detail})")
