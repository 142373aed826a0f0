"""The Markdown report: a header, every figure with its unit, the checks, the tasks, and inline text charts."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from agentx_tui.report._cache_charts import SERVER_CACHE_KEYS
from agentx_tui.report._checks import CheckResult
from agentx_tui.report._format import NA, cell, percent, si
from agentx_tui.report._keys import FIGURES, unit
from agentx_tui.report._model import Report
from agentx_tui.report._series import ReportSeries
from agentx_tui.snapshot import validity_words
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
# A sweep's points as a table: the figures a reader compares from point to point.
_POINT_COLUMNS = (
    ("users", "users", cell),
    ("total_tokens_per_s_per_gpu", "total tok/s/GPU", si),
    ("e2e_interactivity_p90_tokens_per_s", "North Star p90 tok/s/user", si),
    ("interactivity_p90_tokens_per_s", "decode p90 tok/s/user", si),
    ("ttft_p90_s", "TTFT p90 s", cell),
    ("prefix_cache_hit_rate_client", "client hit", percent),
    ("prefix_evicted_share", "evicted", percent),  # of the reused prompt tokens (docs/metrics.md, "Cache")
    ("tokens_per_dollar_total", "tokens/$", si),
    ("mean_prompt_tokens", "mean prompt", si),
    ("peak_in_flight", "peak in flight", cell),
    ("client_saturated", "client-bound", cell),
    ("tasks_completed", "tasks", cell),  # begun and ended inside the point's window (docs/metrics.md, "Tasks")
    ("usd_per_task", "USD/task", cell),
    ("mfu", "MFU", percent),  # how close to the limit (docs/metrics.md, "Roofline", "Energy")
    ("mbu", "MBU", percent),
    ("joules_per_token", "J/token", cell),
)


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


def _points_table(report: dict[str, Any]) -> list[str]:
    points = report.get("points") or []
    frontier = set(report.get("frontier") or [])
    # A point's intervals beside their figures, and how its window ended.
    intervals = (  # (where the column goes, once the ones before it are in; title; figure)
        (3, "tok/s/GPU 95%", "total_tokens_per_s_per_gpu"),
        (5, "North Star p90 95%", "e2e_interactivity_p90_tokens_per_s"),
        (7, "decode p90 95%", "interactivity_p90_tokens_per_s"),
    )
    head = ["point", *(title for _, title, _ in _POINT_COLUMNS), "frontier"]
    for at, title, _ in intervals:
        head.insert(at, title)
    head.append("window ended")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for i, point in enumerate(points):
        cells = [str(i + 1), *(_esc(fmt(point.get(key))) for key, _, fmt in _POINT_COLUMNS)]
        for at, _, key in intervals:
            cells.insert(at, span(point, key))
        ended = ("early: " if point.get("stopped_early") else "") + str(point.get("stop_reason") or "")
        lines.append("| " + " | ".join([*cells, "yes" if i in frontier else "", _esc(ended)]) + " |")
    lines += ["", *_tiers_table(report)]
    methods = [f"- point {i + 1}: {_esc(str(p['ci_method']))}" for i, p in enumerate(points) if p.get("ci_method")]
    if methods:
        lines += ["", "How each point's 95% intervals were computed (`ci_method`):", "", *methods]
    gaps = [
        f"- point {i + 1}{' (thin)' if p.get('thin') else ''}: {_esc(str(p['ci_note']))}"
        for i, p in enumerate(points)
        if p.get("ci_note")
    ]
    if gaps:
        lines += ["", "Why a point's interval is n/a (`ci_note`):", "", *gaps]
    if report.get("sweep_stop_reason"):
        lines += ["", f"The sweep ended: {_esc(str(report['sweep_stop_reason']).rstrip('.'))}."]
    return [*lines, ""]


# The Tasks section (docs/metrics.md, "Tasks"): each figure in words (its declared meaning), then its key.
_TASK_ROWS = tuple((f.meaning, k) for k, f in FIGURES.items() if f.group == "tasks" and f.numeric)
_STEP_COLUMNS = (
    ("requests", "requests", cell),
    ("context_tokens_mean", "mean context tokens", si),
    ("ttft_p50_s", "TTFT p50 s", cell),
    ("ttft_p90_s", "TTFT p90 s", cell),
    ("e2e_p50_s", "E2E p50 s", cell),
    ("e2e_p90_s", "E2E p90 s", cell),
)


def _tasks_section(data: dict[str, Any], images: Sequence[str]) -> list[str]:
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
    lines += ["| figure | key | value | unit |", "|---|---|---|---|"]
    for words, key in _TASK_ROWS:
        lines.append(f"| {words} | {key} | {_esc(cell(data.get(key)))} | {unit(key)} |")
    lines.append("")
    lines += [line for image in images for line in (image, "")]
    rows = data.get("step_curve") or []
    if rows:
        head = ["step", *(title for _, title, _ in _STEP_COLUMNS)]
        lines += ["Step curve (`step_curve`): the completed calls at each step of their agent's loop.", ""]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in rows:
            first, last = row.get("step"), row.get("step_last")
            step = cell(first) if last in (None, first) else f"{cell(first)}–{cell(last)}"
            cells = [step, *(_esc(fmt(row.get(key))) for key, _, fmt in _STEP_COLUMNS)]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines


# The Cache section (docs/metrics.md §4, "Where the prefix went"): the client's split of its prompts.
_CLIENT_CACHE_KEYS = (
    "prefix_cache_hit_rate_client",
    "prefix_cache_hit_rate_ceiling",
    "prefix_reused_tokens",
    "prefix_evicted_share",
    "think_s_p50",
    "think_s_p90",
)
_RETENTION_COLUMNS = (
    ("requests", "calls", cell),
    ("reused_tokens", "reused tokens", si),
    ("hit_share", "hit share", percent),
)


def _cache_section(data: dict[str, Any], images: Sequence[str]) -> list[str]:
    """The cache as the servers and the client saw it: where the servers' prompt tokens came from, their
    offload tier and KV residency; each prompt's split by the client and the retention curve; the
    pictures; in words when a figure cannot be known."""
    lines = ["## Cache", "", "| figure | key | value | unit |", "|---|---|---|---|"]
    for key in (*SERVER_CACHE_KEYS, *_CLIENT_CACHE_KEYS):
        lines.append(f"| {_esc(FIGURES[key].meaning)} | {key} | {_esc(cell(data.get(key)))} | {unit(key)} |")
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
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in rows:
            low, high = row.get("idle_s_low"), row.get("idle_s_high")
            idle = f"{cell(low)}–{cell(high)}" if high is not None else f"> {cell(low)}"
            cells = [idle, *(_esc(fmt(row.get(key))) for key, _, fmt in _RETENTION_COLUMNS)]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def _tiers_table(report: dict[str, Any]) -> list[str]:
    """The tier reads on both axes (docs/sweeps.md): the frontier's own axis first, with the agents per
    GPU and per MW read there, then the other. A read of before the axis was chosen is on decode interactivity."""
    primary = report.get("frontier_axis")
    lines = [
        "| tier (tok/s/user, p90) | read on | total tok/s/GPU | 95% interval | tokens/$ | $/M tokens "
        "| agents/GPU | agents/MW | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for tier in report.get("tiers") or []:
        axis = tier.get("axis")
        on_frontier = axis == primary if primary is not None else axis is None
        agents = si(tier.get("agents_per_gpu")) if on_frontier and primary is not None else ""
        per_mw = si(tier.get("agents_per_mw")) if on_frontier and primary is not None else ""
        lines.append(
            f"| {cell(tier.get('tier'))} | {_AXIS_WORDS.get(axis, 'decode')} | "
            f"{si(tier.get('total_tokens_per_s_per_gpu'))} | {span(tier, 'total_tokens_per_s_per_gpu')} | "
            f"{si(tier.get('tokens_per_dollar_total'))} | {cell(tier.get('usd_per_million_total_tokens'))} | "
            f"{agents} | {per_mw} | {_esc(tier.get('note') or '')} |"
        )
    return lines


def _esc(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(rows: Sequence[dict[str, Any]]) -> list[str]:
    if not rows:
        return ["(none)", ""]
    cols = list(dict.fromkeys(k for row in rows for k in row))
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_esc(cell(row.get(c))) for c in cols) + " |" for row in rows]
    return [*lines, ""]


def _when(ts: Any) -> str:
    if not isinstance(ts, int | float):
        return NA
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _outputs(report: Report) -> str:
    """`--output-scale`: said beside the workload, so the report is not taken for a plain run."""
    outputs = outputs_scaled(report.output_scale)
    return f" (**{outputs}**)" if outputs else ""


def _agentx_lines(report: Report) -> list[str]:
    """AgentX validity (docs/sweeps.md, "AgentX validity"): the verdict, each reason, each rule met."""
    if report.agentx_invalid_reasons is None:  # observing only, or a report of before the rules
        return []
    lines = ["", f"**{validity_words(report.agentx_valid)}** by the AgentX rules a client can check:", ""]
    lines += [f"- {_esc(reason)}" for reason in report.agentx_invalid_reasons]
    lines += [f"- meets: {_esc(rule)}" for rule in report.agentx_rules_met or []]
    return lines


def render_markdown(
    report: Report,
    *,
    series: ReportSeries | None = None,
    checks: Sequence[CheckResult] = (),
    images: Sequence[str] = (),
    task_images: Sequence[str] = (),
    cache_images: Sequence[str] = (),
) -> str:
    """`images`: the sweep's pictures (its Frontier section); `task_images`: the tasks' (report/_task_charts.py);
    `cache_images`: the Cache section's (report/_cache_charts.py)."""
    title = "agentx-tui report" + (" (partial)" if report.partial else "")
    lines = [f"# {title}", ""]
    lines.append(
        f"Target **{_esc(cell(report.target))}**, model **{_esc(cell(report.model))}**, "
        f"workload **{_esc(cell(report.workload))}**{_outputs(report)}, started {_when(report.started_at)}, "
        f"{cell(report.duration_s)} s."
    )
    if report.simulated:
        lines += [
            "",
            "**Simulated engine**: the figures come from the built-in simulator, not real hardware.",
        ]
    if report.partial:
        lines += ["", f"**Partial run**: {_esc(cell(report.partial_reason))}."]
    lines += _agentx_lines(report)
    lines += ["", "## Figures", "", "| key | value | unit |", "|---|---|---|"]
    # The figures as the JSON has them: every key, a sweep's tier keys too, in the file's order; lists
    # (endpoints, users, points, tiers, the step curve) have tables of their own below.
    data = report.model_dump()
    keys = [k for k in data if k != "checks" and not isinstance(data[k], list)]
    for key in keys:
        lines.append(f"| {key} | {_esc(cell(data.get(key)))} | {unit(key)} |")
    lines.append("")
    if checks:
        lines += ["## Checks", "", "| check | measured | result |", "|---|---|---|"]
        for c in checks:
            result = "PASS" if c.passed else "FAIL" + (f" — {_esc(c.note)}" if c.note else "")
            lines.append(f"| `{_esc(c.expr)}` | {c.shown_value} | {result} |")
        lines.append("")
    if images:
        lines += ["## Frontier", "", *(line for image in images for line in (image, ""))]
        lines += [f"Drawn on the frontier's axis: {axis_title(report.frontier_axis)}.", ""]
        lines += _points_table(data)
    lines += _cache_section(data, cache_images)
    lines += _tasks_section(data, task_images)
    if series is not None and len(series):
        span = f"{series.elapsed_s[0]:.1f}–{series.elapsed_s[-1]:.1f} s"
        lines += [
            "## Over time",
            "",
            f"Each column averages the run's ticks; {span}, scaled from 0 to the peak.",
            "",
        ]
        lines.append("```text")
        for name, label, fmt in _CHARTS:
            vals = series.values.get(name, ())
            known = [v for v in vals if v is not None]
            peak = fmt(max(known)) if known else NA
            lines += [f"{label} (peak {peak})", sparkline(vals) or "(no data)", ""]
        lines[-1] = "```"
        lines.append("")
    lines += ["## Endpoints", "", *_table(data.get("endpoints") or [])]
    lines += ["## Users", "", *_table(data.get("users_detail") or [])]
    return "\n".join(lines)
