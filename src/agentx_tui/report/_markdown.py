"""The Markdown report, verdict first: what was measured and when, the checks and the AgentX verdict, the
headline figures; then the frontier (a sweep), the cache, the tasks, the figures over time, the endpoints
(a table per kind of figure, so that none is wider than a page), the users; every figure last, as the
JSON has them. Every `n/a` says why (report/_why.py: the reasons the dashboard gives too): beside it in
a list of figures, under its table in a table."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from agentx_tui.report._checks import CheckResult
from agentx_tui.report._format import NA, Format, by_unit, cell, percent, si
from agentx_tui.report._keys import FIGURES, unit
from agentx_tui.report._model import Report
from agentx_tui.report._series import ReportSeries
from agentx_tui.report._time_charts import columns_of, point_splits, split_of
from agentx_tui.report._why import NO_TIER_INTERVAL, why
from agentx_tui.snapshot import (
    AGENTS_GROUP,
    CACHE_CLIENT,
    CACHE_SERVERS,
    FRACTION,
    POINTS_SPEED,
    POINTS_USE,
    SECONDS,
    TIME_SPLIT,
    EndpointRow,
    Figures,
    Place,
    PointFigures,
    TailSplit,
    TierRead,
    UserRow,
    WorkerLossRow,
    declared,
    shown,
    validity_words,
)
from agentx_tui.snapshot.unknown import why_unknown
from agentx_tui.sweep import DECODE, NORTH_STAR, axis_title
from agentx_tui.units import outputs_scaled

_BLOCKS = "▁▂▃▄▅▆▇█"
CHART_WIDTH = 60
_CHARTS = (
    ("output_tokens_per_s", "Output tokens/s", si),
    ("total_tokens_per_s", "Total tokens/s (cache + input + output)", si),
    ("kv_cache_usage", "KV-cache usage", percent),
    ("prefix_cache_hit_rate", "Prefix-cache hit rate (window)", percent),
)
# The tier reads' axis, in the tiers table (a read without one is of before the axis was chosen: decode).
_AXIS_WORDS = {NORTH_STAR: "North Star (E2E)", DECODE: "decode"}
# A time of day is a figure whose unit says so (`started_at`, `ended_at`): the JSON keeps the number.
_UNIX_TIME = "unix time, s"

# The headline figures: those declared for the summary (snapshot/figures.py), the run's, the proxy's when it ran.
_HEADLINE = tuple(k for k, f in FIGURES.items() if f.summary and f.group == "run")
_PROXY_HEADLINE = tuple(k for k, f in FIGURES.items() if f.summary and f.group == "proxy")


def sparkline(values: Sequence[float | None], width: int = CHART_WIDTH) -> str:
    """One line of block characters; a gap (no value) is a space. Scaled from 0 to the maximum."""
    if not values:
        return ""
    if len(values) > width:  # average into `width` columns
        cols: list[float | None] = []
        for i in range(width):
            part = [v for v in values[i * len(values) // width : (i + 1) * len(values) // width] if v is not None]
            cols.append(sum(part) / len(part) if part else None)
        values = cols
    top = max((v for v in values if v is not None), default=None)
    if top is None:
        return " " * len(values)
    out = []
    for v in values:
        if v is None:
            out.append(" ")
        elif not top > 0:
            out.append(_BLOCKS[0])
        else:
            out.append(_BLOCKS[min(len(_BLOCKS) - 1, max(0, int(v / top * (len(_BLOCKS) - 1) + 0.5)))])
    return "".join(out)


def span(data: dict[str, Any], key: str) -> str:
    """A figure's 95% interval as `low–high` (compact), or n/a."""
    low, high = data.get(f"{key}_ci_low"), data.get(f"{key}_ci_high")
    return NA if low is None or high is None else f"{si(low)}–{si(high)}"


# --- tables whose n/a cells say why -----------------------------------------------------------------------

Cell = tuple[str, str | None]  # the text, and why it is n/a (None: it is not)


def _esc(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _grid(head: Sequence[str], rows: Sequence[Sequence[Cell]], row_name: str = "row") -> list[str]:
    """A Markdown table, then one line per column and reason for its n/a cells: which rows, and why."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    reasons: dict[tuple[int, str], list[int]] = {}
    for n, row in enumerate(rows, 1):
        lines.append("| " + " | ".join(_esc(text) for text, _ in row) + " |")
        for col, (_, reason) in enumerate(row):
            if reason is not None:
                reasons.setdefault((col, reason), []).append(n)
    if reasons:
        lines.append("")
        for (col, reason), at in sorted(reasons.items()):
            which = "" if len(at) == len(rows) else f" ({row_name} {', '.join(map(str, at))})"
            lines.append(f"- *{head[col]}* n/a{which}: {_esc(reason)}.")
    return [*lines, ""]


def _cell(value: Any, fmt: Format, reason: str | Callable[[], str]) -> Cell:
    """A value as a table cell; n/a with its reason (a function is asked only when the value is n/a)."""
    text = fmt(value)
    if value is not None and text != NA:
        return text, None
    return text, reason if isinstance(reason, str) else reason()


def _figure_value(key: str, value: Any, report: Report) -> str:
    """A figure as a list of figures shows it: its value (a time of day in UTC), or n/a and why."""
    if value is None or (isinstance(value, float) and cell(value) == NA):
        return f"n/a ({why(key, report)})"
    if unit(key) == _UNIX_TIME:
        return _when(value)
    return cell(value)


def _figure_rows(keys: Sequence[str], data: dict[str, Any], report: Report, *, meaning: bool = True) -> list[str]:
    """Figures as table rows: (what it is,) its key, its value (n/a with why), its unit."""
    rows = []
    for key in keys:
        shown = _esc(_figure_value(key, data.get(key), report))
        words = f"{_esc(FIGURES[key].meaning)} | " if meaning and key in FIGURES else ""
        rows.append(f"| {words}{key} | {shown} | {_unit(key)} |")
    return rows


def _unit(key: str) -> str:
    """A key's unit as the Markdown shows it: a time of day is in UTC here, a number in the JSON."""
    return "UTC" if unit(key) == _UNIX_TIME else unit(key)


# --- the verdict ---------------------------------------------------------------------------------------


def _when(ts: Any) -> str:
    if not isinstance(ts, int | float) or isinstance(ts, bool):
        return NA
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _outputs(report: Report) -> str:
    """`--output-scale`: said beside the workload, so the report is not taken for a plain run."""
    outputs = outputs_scaled(report.output_scale)
    return f" (**{outputs}**)" if outputs else ""


def _duration(report: Report) -> str:
    """How long the run measured, and (when it was stopped) how much of that was the drain."""
    duration = report.duration_s
    if duration is None:
        return "no sample taken"
    text = f"{duration:.1f} s"
    if report.drain_s is not None:
        text += (
            f" from the first sample to the last, the last {report.drain_s:.1f} s finishing the requests in "
            "flight when the run was stopped (`duration_s`, `drain_s`)"
        )
    return text


def _checks_lines(checks: Sequence[CheckResult]) -> list[str]:
    if not checks:
        return ["No `--check` was given: nothing gated this run's exit code.", ""]
    failed = sum(1 for c in checks if not c.passed)
    head = f"**Checks: {len(checks) - failed} of {len(checks)} passed**" + (
        f" ({failed} FAILED: the run exits 1)" if failed else ""
    )
    lines = [head, "", "| check | measured | result |", "|---|---|---|"]
    for c in checks:
        measured = c.shown_value if c.value is not None else "n/a: the figure is unknown, so the check fails"
        result = "PASS" if c.passed else "FAIL" + (f" — {c.note}" if c.note else "")
        lines.append(f"| `{_esc(c.expr)}` | {_esc(measured)} | {_esc(result)} |")
    return [*lines, ""]


def _agentx_lines(report: Report) -> list[str]:
    """AgentX validity (docs/sweeps.md, "AgentX validity"): the verdict, each reason, each rule met."""
    if report.agentx_invalid_reasons is None:  # observing only, no sample, or a report of before the rules
        if not report.has("agentx_invalid_reasons"):
            why_not = "a report of before the AgentX rules"
        elif report.samples == 0:
            why_not = "the run ended before its first sample"
        else:
            why_not = "the run sent no load of its own"
        return [f"AgentX: not judged ({why_not}).", ""]
    lines = [f"**{validity_words(report.agentx_valid)}** by the AgentX rules a client can check:", ""]
    lines += [f"- {_esc(reason)}" for reason in report.agentx_invalid_reasons]
    lines += [f"- meets: {_esc(rule)}" for rule in report.agentx_rules_met or []]
    return [*lines, ""]


def _verdict(report: Report, checks: Sequence[CheckResult]) -> list[str]:
    lines = ["## Verdict", "", *_checks_lines(checks), *_agentx_lines(report)]
    if report.client_saturated:
        why_bound = report.client_saturated_reason or "see the log"
        lines += [
            f"**Client-bound** ({_esc(why_bound)}): the figures measure the load generator as much as the servers.",
            "",
        ]
    return lines


def _headline(report: Report, data: dict[str, Any]) -> list[str]:
    keys = [*_HEADLINE, *(_PROXY_HEADLINE if report.proxied_requests is not None else ())]
    lines = ["## Headline figures", "", "| key | value | unit |", "|---|---|---|"]
    lines += _figure_rows(keys, data, report, meaning=False)
    if report.throughput_source:
        lines += ["", f"Tokens per second are {report.throughput_source}-side (`throughput_source`)."]
    return [*lines, ""]


# --- a sweep ---------------------------------------------------------------------------------------------


def _point_table(
    points: Sequence[PointFigures | dict[str, Any]],
    place: Place,
    *,
    intervals: bool,
    frontier: set[int],
) -> list[str]:
    """One table of the points: each point's users, then the figures declared for `place` (snapshot/figures.py,
    in their order), each interval after its figure (`intervals`)."""
    dumped = [p.model_dump() if isinstance(p, PointFigures) else p for p in points]
    columns = shown(PointFigures, place)
    head = ["point", "users"]
    for fig in columns:
        head.append(fig.head)
        if intervals and fig.interval:
            head.append(f"{fig.head.removesuffix(' tok/s/user').removesuffix(' tok/s/GPU')} 95%")
    if intervals:
        head += ["frontier", "window ended"]
    rows: list[list[Cell]] = []
    for i, (point, d) in enumerate(zip(points, dumped, strict=True)):
        figures = point if isinstance(point, PointFigures) else None
        row: list[Cell] = [(str(i + 1), None), _cell(d.get("users"), cell, partial(_point_why, "users", figures))]
        for fig in columns:
            row.append(_cell(d.get(fig.key), by_unit(fig.unit), partial(_point_why, fig.key, figures)))
            if intervals and fig.interval:
                text = span(d, fig.key)
                row.append((text, _point_why(f"{fig.key}_ci_low", figures) if text == NA else None))
        if intervals:
            ended = ("early: " if d.get("stopped_early") else "") + str(d.get("stop_reason") or "")
            row += [("yes" if i in frontier else "", None), (ended, None)]
        rows.append(row)
    return _grid(head, rows, "point")


def _point_why(key: str, point: Figures | None) -> str:
    return why_unknown(key, point) if point is not None else "the point, of another version, does not have it"


def _points_section(report: Report, data: dict[str, Any]) -> list[str]:
    points = report.points or []
    frontier = set(report.frontier or [])
    lines = ["How fast each point was:", ""]
    lines += _point_table(points, POINTS_SPEED, intervals=True, frontier=frontier)
    lines += ["What each point cost and how it used the servers:", ""]
    lines += _point_table(points, POINTS_USE, intervals=False, frontier=frontier)
    lines += _tiers_table(report)
    methods = [
        f"- point {i + 1}: {_esc(str(p['ci_method']))}"
        for i, p in enumerate(data.get("points") or [])
        if p.get("ci_method")
    ]
    if methods:
        lines += ["How each point's 95% intervals were computed (`ci_method`):", "", *methods, ""]
    gaps = [
        f"- point {i + 1}{' (thin)' if p.get('thin') else ''}: {_esc(str(p['ci_note']))}"
        for i, p in enumerate(data.get("points") or [])
        if p.get("ci_note")
    ]
    if gaps:
        lines += ["Why a point's interval is n/a (`ci_note`):", "", *gaps, ""]
    lines += _warm_ups(data.get("points") or [])
    if report.sweep_stop_reason:
        lines += [f"The sweep ended: {_esc(report.sweep_stop_reason.rstrip('.'))}.", ""]
    lines += _probes_table(data)
    if report.has("sweep_gpu_seconds"):
        gpu_s = report.sweep_gpu_seconds
        took = NA + " (no GPU count)" if gpu_s is None else f"{gpu_s:,.0f} GPU·s ({gpu_s / 3600:.2f} GPU·h)"
        what = "its wall time × GPUs, probes and warm-ups included"
        lines += [f"The sweep's GPU time (`sweep_gpu_seconds`, {what}): {took}.", ""]
    return lines


def _warm_ups(points: Sequence[dict[str, Any]]) -> list[str]:
    """How long the points warmed up, and each one whose load had not settled when its window opened."""
    judged = [p for p in points if p.get("steady") is not None]
    if not judged:
        return []
    waits = [p.get("warmup_s") or 0.0 for p in judged]
    span = cell(min(waits)) if cell(min(waits)) == cell(max(waits)) else f"{cell(min(waits))}–{cell(max(waits))}"
    lines = [
        f"Each point's window opened once its load was steady (MSER-5) and every user had 10 requests done, "
        f'or at `--warmup` (`steady`, `steady_reason`; docs/sweeps.md, "Warm-up by the data"): after {span} s '
        "of warm-up.",
        "",
    ]
    unsteady = [
        f"- point {i + 1} ({p.get('users')} user{'s' if p.get('users') != 1 else ''}), after "
        f"{cell(p.get('warmup_s'))} s: {_esc(str(p.get('steady_reason') or ''))}"
        for i, p in enumerate(points)
        if p.get("steady") is False
    ]
    if unsteady:
        lines += ["Not steady when its window opened:", "", *unsteady, ""]
    return lines


_PROBE_COLUMNS: tuple[tuple[str, str, Format], ...] = (
    ("users", "users", cell),
    ("purpose", "for", str),
    ("warmup_s", "warm-up s", cell),
    ("duration_s", "window s", cell),
    ("requests", "requests", cell),
    ("e2e_interactivity_p90_tokens_per_s", "North Star p90 tok/s/user", si),
    ("interactivity_p90_tokens_per_s", "decode p90 tok/s/user", si),
    ("total_tokens_per_s_per_gpu", "total tok/s/GPU", si),
    ("steady", "steady", cell),
)


def _probes_table(data: dict[str, Any]) -> list[str]:
    """A tier sweep's probes (docs/sweeps.md, "A tier sweep"): apart from the points, never on the frontier."""
    probes = data.get("probes") or []
    if not probes:
        return []
    lines = [
        "The probes (`probes`): short windows that found where p90 interactivity crosses each tier. They are "
        "not points: no frontier or tier read stands on them.",
        "",
    ]
    rows: list[list[Cell]] = [
        [(str(p.get("index", i + 1)), None)]
        + [_cell(p.get(key), fmt, "not measured in its window") for key, _, fmt in _PROBE_COLUMNS]
        for i, p in enumerate(probes)
    ]
    return lines + _grid(["probe", *(title for _, title, _ in _PROBE_COLUMNS)], rows, "probe")


def _tiers_table(report: Report) -> list[str]:
    """The tier reads on both axes (docs/sweeps.md): the frontier's own axis first, with the agents per
    GPU and per MW read there, then the other; every figure a read declares (`TierRead`), each interval
    after its figure. A read of before the axis was chosen is on decode interactivity."""
    primary = report.frontier_axis
    reads = declared(TierRead)
    head = ["tier (tok/s/user, p90)", "read on"]
    for fig in reads.values():
        head += [fig.head, "95% interval"] if fig.interval else [fig.head]
    head.append("note (why a read is n/a)")
    rows: list[list[Cell]] = []
    for tier in report.tiers or []:
        d = tier.model_dump()
        axis = tier.axis
        on_frontier = axis == primary if primary is not None else axis is None
        note = tier.note or ""

        def known(value: Any, fmt: Format, note: str = note) -> Cell:
            """A read's figure; its n/a is said by the row's note when it has one."""
            text, reason = _cell(value, fmt, "not read at this tier")
            return text, None if note else reason

        row: list[Cell] = [
            (cell(tier.tier), None),
            (_AXIS_WORDS.get(axis, "decode") if axis is not None else "decode", None),
        ]
        for key, fig in reads.items():
            if fig.group == AGENTS_GROUP and not (on_frontier and primary is not None):  # read on its axis only
                row.append(("", None))
                continue
            value = getattr(tier, key)
            row.append(known(value, by_unit(fig.unit)))
            if fig.interval:  # n/a with the read's note, or because its points carry none
                interval = span(d, key)
                unread = value is None
                row.append(known(None, cell) if unread else (interval, NO_TIER_INTERVAL if interval == NA else None))
        rows.append([*row, (note, None)])
    return _grid(head, rows, "tier row")


# --- where the time went --------------------------------------------------------------------------------

_NO_PHASES = (
    "The servers export no request phases (vLLM's `vllm:request_queue_time_seconds` and "
    "`vllm:request_prefill_time_seconds`): the first token's share is not cut into queued, prefill and outside "
    "the server."
)
_PHASES = (
    "The first token's share is cut into queued on the server, prefill and outside the server (the network, the "
    "server's frontend, the client) in the proportions of the means over the same window: `server_queue_s_mean`, "
    "`server_prefill_s_mean` and `ttft_outside_server_s_mean` (the client's TTFT mean less those two, 0 when "
    "below). The servers' means are over every request they finished, not the tail's alone: the tail's first "
    "token is cut as the average request's is."
)


def _split_rows(split: TailSplit) -> list[tuple[str, float]]:
    """The run's bar as table rows: the first token (then its phases, indented), decode, the stalls."""
    rows = [("first token", split.first_token)]
    if split.queue is not None and split.prefill is not None and split.outside is not None:
        rows += [("· queued on the server", split.queue), ("· prefill", split.prefill)]
        rows.append(("· outside the server (network, frontend, client)", split.outside))
    rows.append(("decode", split.decode))
    if split.stalls is not None:
        rows.append(("decode stalls", split.stalls))
    return rows


def _speculation(report: Report) -> list[str]:
    """The servers' speculative decoding over the run, a line when they speculate: the acceptance length
    (tokens a verify step emits), the draft length and the accepted share by draft position, against
    AgentX's golden length where one is known (docs/metrics.md, "Where the time went")."""
    length = report.spec_acceptance_length
    if length is None:
        return []
    k = f"k = {report.spec_draft_length} draft tokens" if report.spec_draft_length is not None else "draft length n/a"
    positions = ", ".join(f"{rate:.2f}" for rate in report.spec_acceptance_by_position or ())
    by_position = f"; accepted per draft by position {positions}" if positions else ""
    rate = report.spec_acceptance_rate
    text = (
        f"**Speculative decoding**: acceptance length {length:.2f} tokens per verify step ({k}{by_position}), "
        f"{percent(rate)} of the draft tokens accepted (`spec_acceptance_length`, `spec_acceptance_rate`)"
    )
    golden, source = report.spec_golden_acceptance_length, report.spec_golden_source
    if golden is None:
        text += f"; no golden length to hold it to: {_esc(source or 'none is known')}"
    else:
        ratio = report.spec_acceptance_vs_golden
        shown_ratio = NA if ratio is None else f"{ratio:.3f}"
        text += (
            f"; AgentX's golden length {golden:.2f} ({_esc(source or 'source unknown')}): measured ÷ golden "
            f"{shown_ratio} (AgentX pins it within 2%)"
        )
    return [f"{text}.", ""]


def _time_section(report: Report, data: dict[str, Any], images: Sequence[str]) -> list[str]:
    """Where the North Star's time went (docs/metrics.md, "Where the time went"): its p90 tail as shares of
    the first token (queued, prefill, outside the server where the servers export their phases), decode and
    stalls, the run's or, for a sweep, each point's (a table and a picture); then the figures behind it."""
    lines = [
        "## Where the time went",
        "",
        "The North Star is 1 / p90 of r_i = E2E_i / OSL_i, a request's time per output token, its wait for "
        "the first token included: the requests with r_i at or above that p90 set it. Their time (Σ r_i) is "
        "split into the first token (TTFT_i / OSL_i), decode, and the decode stalls (gaps longer than 3 × their "
        "request's median gap, beyond that median).",
        "",
    ]
    if not report.has("north_star_ttft_share"):
        return [*lines, "Not in this report: it was written before the split was measured.", ""]
    if report.is_sweep:
        rows = point_splits(report)
        splits = [split for _, split in rows]
        parts = columns_of(splits)
        head = ["point", "users", *(part.words for part in parts)]
        cells: list[list[Cell]] = []
        for point, split in rows:
            row: list[Cell] = [(str(point.index + 1), None), (cell(point.users), None)]
            if split is None:
                row += [(NA, _point_why("north_star_ttft_share", point))] * len(parts)
            else:  # a part another point's split has, this one's not (its first token whole or cut): empty
                shares = [part.share(split) for part in parts]
                row += [("", None) if share is None else (percent(share), None) for share in shares]
            cells.append(row)
        lines += ["Each point's own tail (its requests in its window), as shares of its time:", ""]
        lines += _grid(head, cells, "point")
        lines += [line for image in images for line in (image, "")]
    else:
        split = split_of(report)
        splits = [split]
        if split is None:
            lines += [f"No split: {_esc(why('north_star_ttft_share', report))}.", ""]
        else:
            lines += ["| part | share of the tail's time |", "|---|---|"]
            lines += [f"| {words} | {percent(share)} |" for words, share in _split_rows(split)]
            lines.append("")
    if any(split is not None for split in splits):
        lines += [_PHASES if any(s is not None and s.phased for s in splits) else _NO_PHASES, ""]
    lines += _speculation(report)
    keys = [fig.key for fig in shown(Figures, TIME_SPLIT)]
    lines += ["| figure | key | value | unit |", "|---|---|---|---|", *_figure_rows(keys, data, report), ""]
    return lines


# --- the cache and the tasks ---------------------------------------------------------------------------

# The Tasks section (docs/metrics.md, "Tasks"): each figure in words (its declared meaning), then its key.
_TASK_KEYS = tuple(k for k, f in FIGURES.items() if f.group == "tasks" and f.numeric)
_STEP_COLUMNS: tuple[tuple[str, str, Format], ...] = (
    ("requests", "requests", cell),
    ("context_tokens_mean", "mean context tokens", si),
    ("ttft_p50_s", "TTFT p50 s", cell),
    ("ttft_p90_s", "TTFT p90 s", cell),
    ("e2e_p50_s", "E2E p50 s", cell),
    ("e2e_p90_s", "E2E p90 s", cell),
)


def _tasks_section(report: Report, data: dict[str, Any], images: Sequence[str]) -> list[str]:
    """What one agent's piece of work took: the figures, the pictures, the step curve as a table; in
    words when there is nothing to show."""
    lines = ["## Tasks", ""]
    done = data.get("tasks_completed")
    if done is None:
        return [*lines, "No task figures: the run sent no calls of its own (observing only).", ""]
    if not done:
        running, failed = data.get("tasks_running") or 0, data.get("tasks_failed") or 0
        return [
            *lines,
            f"No task completed during the run ({running} still running at its end, {failed} failed): "
            "the per-task figures are unknown. A longer run, or sessions with fewer steps, completes some.",
            "",
        ]
    lines += ["A task is one session tree, first call sent → last call ended.", ""]
    lines += ["| figure | key | value | unit |", "|---|---|---|---|", *_figure_rows(_TASK_KEYS, data, report), ""]
    lines += [line for image in images for line in (image, "")]
    rows = data.get("step_curve") or []
    if rows:
        head = ["step", *(title for _, title, _ in _STEP_COLUMNS)]
        lines += ["Step curve (`step_curve`): the completed calls at each step of their agent's loop.", ""]
        cells: list[list[Cell]] = []
        for row in rows:
            first, last = row.get("step"), row.get("step_last")
            step = cell(first) if last in (None, first) else f"{cell(first)}–{cell(last)}"
            cells.append(
                [
                    (step, None),
                    *(_cell(row.get(key), fmt, "no call of this step measured it") for key, _, fmt in _STEP_COLUMNS),
                ]
            )
        lines += _grid(head, cells, "step row")
    return lines


_RETENTION_COLUMNS: tuple[tuple[str, str, Format], ...] = (
    ("requests", "calls", cell),
    ("reused_tokens", "reused tokens", si),
    ("hit_share", "hit share", percent),
)


def _cache_section(report: Report, data: dict[str, Any], images: Sequence[str]) -> list[str]:
    """The cache as the servers and the client saw it: where the servers' prompt tokens came from, their
    offload tier and KV residency; each prompt's split by the client and the retention curve; the
    pictures; each n/a with its reason."""
    lines = ["## Cache", "", "| figure | key | value | unit |", "|---|---|---|---|"]
    keys = [fig.key for place in (CACHE_SERVERS, CACHE_CLIENT) for fig in shown(Figures, place)]
    lines += _figure_rows(keys, data, report)
    lines.append("")
    if data.get("prompt_share_computed") is None:
        lines += ["Where the servers' prompt tokens came from is unknown: they do not export it.", ""]
    if data.get("prefix_reused_tokens") is None:
        lines += ["No split of the prompts: the run sent no calls whose blocks the client knows.", ""]
    else:
        lines += [
            "Each prompt is split into cold tokens (no earlier call sent them), reused ones the server still "
            "had cached (hit) and reused ones it no longer had (evicted); the retention curve is the hit "
            "share of the reused tokens against how long the session had been idle before the call.",
            "",
        ]
        if data.get("prefix_evicted_share") is None:
            lines += [
                "The hit and evicted shares are unknown: the server reported no cached tokens per request "
                "(vLLM: `--enable-prompt-tokens-details`).",
                "",
            ]
    lines += [line for image in images for line in (image, "")]
    rows = data.get("retention_curve") or []
    if rows:
        head = ["idle s", *(title for _, title, _ in _RETENTION_COLUMNS)]
        lines += ["Retention curve (`retention_curve`): the calls by their session's idle time before them.", ""]
        cells: list[list[Cell]] = []
        for row in rows:
            low, high = row.get("idle_s_low"), row.get("idle_s_high")
            idle = f"{cell(low)}–{cell(high)}" if high is not None else f"> {cell(low)}"
            cells.append(
                [
                    (idle, None),
                    *(
                        _cell(row.get(key), fmt, "no reused tokens after such an idle time")
                        for key, _, fmt in _RETENTION_COLUMNS
                    ),
                ]
            )
        lines += _grid(head, cells, "idle-time row")
    return lines


# --- the endpoints and the users -------------------------------------------------------------------------

# An endpoint's figures in one table per kind (their declarations' units): who it is, its rates, its shares,
# its residency times, its counts. Every table begins with the endpoint's URL.
_ENDPOINT_TABLES: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("Rates", lambda u: u.endswith("/s")),
    ("Shares of 0–1", lambda u: u == FRACTION),
    ("Times (s)", lambda u: u == SECONDS),
    ("Counts and sizes", lambda u: True),
)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _endpoint_why(key: str, report: Report) -> str:
    """Why an endpoint's figure is n/a: a report figure's reason, or (its block size, its GPU blocks, its
    finished requests: read off its page) that its server does not export it."""
    return why(key, report) if key in FIGURES else "the server does not export it"


def _endpoint_tables(report: Report, data: dict[str, Any]) -> list[str]:
    """The endpoints' rows as narrow tables, one per kind of figure; a figure n/a for every endpoint is not
    a column but a line saying why."""
    rows = [r.model_dump() if isinstance(r, EndpointRow) else r for r in data.get("endpoints") or []]
    lines = ["## Endpoints", ""]
    if not rows:
        return [*lines, "(none)", ""]
    columns = list(dict.fromkeys(k for row in rows for k in row if k != "url"))
    unknown = [k for k in columns if all(row.get(k) is None for row in rows)]
    known = [k for k in columns if k not in unknown]
    numeric = [k for k in known if (k in FIGURES and FIGURES[k].numeric) or any(_is_number(r.get(k)) for r in rows)]
    tables: list[tuple[str, list[str]]] = [("Who", [k for k in known if k not in numeric])]
    for title, fits in _ENDPOINT_TABLES:
        taken = [k for k in numeric if fits(unit(k)) and all(k not in keys for _, keys in tables)]
        tables.append((title, taken))
    lines += ["Each endpoint's figures over the run (`endpoints` in the JSON), a table per kind.", ""]
    for title, keys in tables:
        if not keys:
            continue
        cells = [
            [
                (str(row.get("url") or NA), None),
                *(_cell(row.get(k), cell, partial(_endpoint_why, k, report)) for k in keys),
            ]
            for row in rows
        ]
        lines += [f"{title}:", "", *_grid(["url", *keys], cells, "endpoint")]
    if unknown:
        by_reason: dict[str, list[str]] = {}
        for k in unknown:
            by_reason.setdefault(_endpoint_why(k, report), []).append(k)
        lines += ["n/a for every endpoint:", ""]
        lines += [f"- {', '.join(keys)}: {_esc(reason)}." for reason, keys in by_reason.items()]
        lines.append("")
    return lines


# The users table: a row per user (or sub-agent, or real session) with what it did; the columns that say
# nothing for any row (no label, no parent, no real session) are left out.
_USER_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("user", "user", ""),
    ("session", "session", ""),
    ("state", "state at the stop", ""),
    ("step", "step", ""),
    ("context_tokens", "context tokens", ""),
    ("last_ttft_s", "last TTFT s", "no call of its session completed yet"),
    ("decode_tokens_per_s", "decode tok/s", "no call of its session streamed two tokens yet"),
    ("e2e_interactivity_tokens_per_s", "North Star tok/s", "no call of its session completed yet"),
    ("interactivity_tokens_per_s", "decode interactivity tok/s", "no call of its session streamed two tokens yet"),
    ("prefix_hit_share", "hit share", "nothing sent again yet, or no cached_tokens from the server"),
    ("output_tokens", "output tokens", ""),
    ("requests", "requests", ""),
    ("errors", "errors", ""),
    ("endpoint", "endpoint", ""),
    ("label", "label", ""),
    ("parent", "sub-agent of", ""),
    ("real", "real agent", ""),
)


def _users_table(data: dict[str, Any]) -> list[str]:
    rows = [r.model_dump() if isinstance(r, UserRow) else r for r in data.get("users_detail") or []]
    lines = ["## Users", ""]
    if not rows:
        return [*lines, "(none)", ""]
    lines += ["Each user's counts at the end of the run, and what it was doing when the run was stopped.", ""]
    endpoints = {row.get("endpoint") for row in rows}
    shown = [
        c
        for c in _USER_COLUMNS
        if any(c[0] in row for row in rows)
        and not (c[0] == "endpoint" and len(endpoints) <= 1)
        and not (c[0] in ("label", "parent", "real") and not any(row.get(c[0]) for row in rows))
    ]
    head = [title for _, title, _ in shown]
    cells: list[list[Cell]] = []
    for row in rows:
        out: list[Cell] = []
        for key, _, reason in shown:
            value = row.get(key)
            if key == "step" and row.get("steps_total"):
                out.append((f"{cell(value)}/{cell(row.get('steps_total'))}", None))
            elif key in ("label", "parent", "real") and not value:
                out.append(("", None))
            else:
                out.append(_cell(value, cell, reason or "not recorded"))
        cells.append(out)
    return [*lines, *_grid(head, cells, "user row")]


_LOSS_COLUMNS = (
    ("at_s", "at s"),
    ("worker", "worker"),
    ("pid", "pid"),
    ("how", "how"),
    ("users_lost", "users lost"),
    ("users_left", "users left"),
    ("point", "sweep point"),
    ("restarted_at_s", "restarted at s"),
    ("restart_error", "restart error"),
)


def _losses_table(data: dict[str, Any]) -> list[str]:
    """The load workers that died (docs/scale.md): none in most runs, and then no section."""
    rows = [r.model_dump() if isinstance(r, WorkerLossRow) else r for r in data.get("worker_losses") or []]
    if not rows:
        return []
    reasons = {"pid": "a Ray actor's process is not known", "point": "not a sweep", "restarted_at_s": "not restarted"}
    cells = [
        [
            ("", None)
            if key == "restart_error" and not row.get(key)
            else _cell(row.get(key), cell, reasons.get(key, ""))
            for key, _ in _LOSS_COLUMNS
        ]
        for row in rows
    ]
    return ["## Load workers lost", "", *_grid([title for _, title in _LOSS_COLUMNS], cells, "loss")]


# --- the report -------------------------------------------------------------------------------------------


def _over_time(series: ReportSeries) -> list[str]:
    span_s = f"{series.elapsed_s[0]:.1f}–{series.elapsed_s[-1]:.1f} s"
    lines = ["## Over time", "", f"Each column averages the run's ticks; {span_s}, scaled from 0 to the peak.", ""]
    lines.append("```text")
    for name, label, fmt in _CHARTS:
        vals = series.values.get(name, ())
        known = [v for v in vals if v is not None]
        peak = fmt(max(known)) if known else NA
        lines += [f"{label} (peak {peak})", sparkline(vals) or "(no data)", ""]
    lines[-1] = "```"
    return [*lines, ""]


def render_markdown(
    report: Report,
    *,
    series: ReportSeries | None = None,
    checks: Sequence[CheckResult] = (),
    images: Sequence[str] = (),
    task_images: Sequence[str] = (),
    cache_images: Sequence[str] = (),
    time_images: Sequence[str] = (),
) -> str:
    """`images`: the sweep's pictures (its Frontier section); `task_images`: the tasks' (report/_task_charts.py);
    `cache_images`: the Cache section's (report/_cache_charts.py); `time_images`: "Where the time went"'s
    (report/_time_charts.py)."""
    title = "agentx-tui report" + (" (partial)" if report.partial else "")
    lines = [f"# {title}", ""]
    lines.append(
        f"Target **{_esc(cell(report.target))}**, model **{_esc(cell(report.model))}**, "
        f"workload **{_esc(cell(report.workload))}**{_outputs(report)}; started {_when(report.started_at)}, "
        f"ended {_when(report.ended_at)}: {_duration(report)}."
    )
    if report.simulated:
        lines += ["", "**Simulated engine**: the figures come from the built-in simulator, not real hardware."]
    if report.partial:
        lines += ["", f"**Partial run**: {_esc(cell(report.partial_reason))}."]
    lines.append("")
    data = report.model_dump()
    lines += _verdict(report, checks)
    lines += _headline(report, data)
    if report.is_sweep:
        lines += ["## Frontier", "", *(line for image in images for line in (image, ""))]
        lines += [f"Drawn on the frontier's axis: {axis_title(report.frontier_axis)}.", ""]
        lines += _points_section(report, data)
    lines += _time_section(report, data, time_images)
    lines += _cache_section(report, data, cache_images)
    lines += _tasks_section(report, data, task_images)
    if series is not None and len(series):
        lines += _over_time(series)
    lines += _endpoint_tables(report, data)
    lines += _losses_table(data)
    lines += _users_table(data)
    # Every figure as the JSON has it: every key, a sweep's tier keys too, in the file's order; the lists
    # (endpoints, users, points, tiers, the step curve) are the tables above.
    keys = [k for k in data if k != "checks" and not isinstance(data[k], list)]
    lines += [
        "## All figures",
        "",
        "Every key of the JSON report, in its order (`docs/metrics.md` gives each one's formula).",
        "",
    ]
    lines += ["| key | value | unit |", "|---|---|---|", *_figure_rows(keys, data, report, meaning=False), ""]
    return "\n".join(lines)
