"""The Markdown report, verdict first: what was measured and when, the checks and the AgentX verdict, the
headline figures; then the frontier (a sweep), the cache, the tasks, the figures over time, the endpoints
(a table per kind of figure, so that none is wider than a page), the users; every figure last, as the
JSON has them. Every `n/a` says why (report/_why.py: the reasons the dashboard gives too): beside it in
a list of figures, under its table in a table."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from agentx_tui.report._checks import CheckResult
from agentx_tui.report._format import NA, Format, cell, percent, si
from agentx_tui.report._keys import FIGURES, unit
from agentx_tui.report._md_sweep import point_why, points_section
from agentx_tui.report._md_table import Cell, escape, figure_rows, grid, table_cell, when
from agentx_tui.report._model import Report
from agentx_tui.report._series import ReportSeries
from agentx_tui.report._time_charts import columns_of, point_splits, split_of
from agentx_tui.report._why import why
from agentx_tui.snapshot import (
    CACHE_CLIENT,
    CACHE_SERVERS,
    FRACTION,
    SECONDS,
    TIME_SPLIT,
    EndpointRow,
    Figures,
    TailSplit,
    UserRow,
    WorkerLossRow,
    shown,
    validity_words,
)
from agentx_tui.sweep import axis_title
from agentx_tui.units import outputs_scaled

_BLOCKS = "▁▂▃▄▅▆▇█"
CHART_WIDTH = 60
_CHARTS = (
    ("output_tokens_per_s", "Output tokens/s", si),
    ("total_tokens_per_s", "Total tokens/s (cache + input + output)", si),
    ("kv_cache_usage", "KV-cache usage", percent),
    ("prefix_cache_hit_rate", "Prefix-cache hit rate (window)", percent),
)

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


# --- the verdict ---------------------------------------------------------------------------------------


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
        lines.append(f"| `{escape(c.expr)}` | {escape(measured)} | {escape(result)} |")
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
    lines += [f"- {escape(reason)}" for reason in report.agentx_invalid_reasons]
    lines += [f"- meets: {escape(rule)}" for rule in report.agentx_rules_met or []]
    return [*lines, ""]


def _verdict(report: Report, checks: Sequence[CheckResult]) -> list[str]:
    lines = ["## Verdict", "", *_checks_lines(checks), *_agentx_lines(report)]
    if report.client_saturated:
        why_bound = report.client_saturated_reason or "see the log"
        lines += [
            f"**Client-bound** ({escape(why_bound)}): the figures measure the load generator as much as the servers.",
            "",
        ]
    return lines


def _headline(report: Report, data: dict[str, Any]) -> list[str]:
    keys = [*_HEADLINE, *(_PROXY_HEADLINE if report.proxied_requests is not None else ())]
    lines = ["## Headline figures", "", "| key | value | unit |", "|---|---|---|"]
    lines += figure_rows(keys, data, report, meaning=False)
    if report.throughput_source:
        lines += ["", f"Tokens per second are {report.throughput_source}-side (`throughput_source`)."]
    return [*lines, ""]


# --- a sweep ---------------------------------------------------------------------------------------------


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
        text += f"; no golden length to hold it to: {escape(source or 'none is known')}"
    else:
        ratio = report.spec_acceptance_vs_golden
        shown_ratio = NA if ratio is None else f"{ratio:.3f}"
        text += (
            f"; AgentX's golden length {golden:.2f} ({escape(source or 'source unknown')}): measured ÷ golden "
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
                row += [(NA, point_why("north_star_ttft_share", point))] * len(parts)
            else:  # a part another point's split has, this one's not (its first token whole or cut): empty
                shares = [part.share(split) for part in parts]
                row += [("", None) if share is None else (percent(share), None) for share in shares]
            cells.append(row)
        lines += ["Each point's own tail (its requests in its window), as shares of its time:", ""]
        lines += grid(head, cells, "point")
        lines += [line for image in images for line in (image, "")]
    else:
        split = split_of(report)
        splits = [split]
        if split is None:
            lines += [f"No split: {escape(why('north_star_ttft_share', report))}.", ""]
        else:
            lines += ["| part | share of the tail's time |", "|---|---|"]
            lines += [f"| {words} | {percent(share)} |" for words, share in _split_rows(split)]
            lines.append("")
    if any(split is not None for split in splits):
        lines += [_PHASES if any(s is not None and s.phased for s in splits) else _NO_PHASES, ""]
    lines += _speculation(report)
    keys = [fig.key for fig in shown(Figures, TIME_SPLIT)]
    lines += ["| figure | key | value | unit |", "|---|---|---|---|", *figure_rows(keys, data, report), ""]
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
    lines += ["| figure | key | value | unit |", "|---|---|---|---|", *figure_rows(_TASK_KEYS, data, report), ""]
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
                    *(
                        table_cell(row.get(key), fmt, "no call of this step measured it")
                        for key, _, fmt in _STEP_COLUMNS
                    ),
                ]
            )
        lines += grid(head, cells, "step row")
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
    lines += figure_rows(keys, data, report)
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
                        table_cell(row.get(key), fmt, "no reused tokens after such an idle time")
                        for key, _, fmt in _RETENTION_COLUMNS
                    ),
                ]
            )
        lines += grid(head, cells, "idle-time row")
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
                *(table_cell(row.get(k), cell, partial(_endpoint_why, k, report)) for k in keys),
            ]
            for row in rows
        ]
        lines += [f"{title}:", "", *grid(["url", *keys], cells, "endpoint")]
    if unknown:
        by_reason: dict[str, list[str]] = {}
        for k in unknown:
            by_reason.setdefault(_endpoint_why(k, report), []).append(k)
        lines += ["n/a for every endpoint:", ""]
        lines += [f"- {', '.join(keys)}: {escape(reason)}." for reason, keys in by_reason.items()]
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
                out.append(table_cell(value, cell, reason or "not recorded"))
        cells.append(out)
    return [*lines, *grid(head, cells, "user row")]


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
            else table_cell(row.get(key), cell, reasons.get(key, ""))
            for key, _ in _LOSS_COLUMNS
        ]
        for row in rows
    ]
    return ["## Load workers lost", "", *grid([title for _, title in _LOSS_COLUMNS], cells, "loss")]


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
        f"Target **{escape(cell(report.target))}**, model **{escape(cell(report.model))}**, "
        f"workload **{escape(cell(report.workload))}**{_outputs(report)}; started {when(report.started_at)}, "
        f"ended {when(report.ended_at)}: {_duration(report)}."
    )
    if report.simulated:
        lines += ["", "**Simulated engine**: the figures come from the built-in simulator, not real hardware."]
    if report.partial:
        lines += ["", f"**Partial run**: {escape(cell(report.partial_reason))}."]
    lines.append("")
    data = report.model_dump()
    lines += _verdict(report, checks)
    lines += _headline(report, data)
    if report.is_sweep:
        lines += ["## Frontier", "", *(line for image in images for line in (image, ""))]
        lines += [f"Drawn on the frontier's axis: {axis_title(report.frontier_axis)}.", ""]
        lines += points_section(report, data)
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
    lines += ["| key | value | unit |", "|---|---|---|", *figure_rows(keys, data, report, meaning=False), ""]
    return "\n".join(lines)
