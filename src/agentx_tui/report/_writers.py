"""Writing the report as JSON, Markdown or CSV (chosen by the file's extension), atomically.

The file is written to a temporary file in the same folder and renamed over the target, so a run
killed mid-write leaves either the previous file or the complete new one, never half a report.

CSV is one header row and one value row. Lists and mappings are flattened into columns:
``endpoints[0].url``, ``users_detail[3].output_tokens``, ``errors_by_kind.timeout``,
``checks[0].passed``, ``step_curve[2].ttft_p90_s``. A null is an empty cell; floats are written at full
precision.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from agentx_tui.errors import UsageError
from agentx_tui.report._cache_charts import cache_markdown_images, write_cache_charts
from agentx_tui.report._charts import markdown_images, write_sweep_charts
from agentx_tui.report._checks import CheckResult
from agentx_tui.report._markdown import render_markdown
from agentx_tui.report._model import Report
from agentx_tui.report._series import ReportSeries
from agentx_tui.report._task_charts import task_markdown_images, write_task_charts
from agentx_tui.report._time_charts import time_markdown_images, write_time_charts

REPORT_EXTENSIONS = (".json", ".md", ".csv")


def check_report_paths(paths: Sequence[Path]) -> tuple[Path, ...]:
    """Every `--report` path vetted before the run (`check_report_path`), each file named once: the run
    writes them all at its end, each in the format its extension names."""
    seen: dict[Path, Path] = {}
    for path in paths:
        check_report_path(path)
        same = seen.get(path.resolve())
        if same is not None:
            said = (
                f"--report {path} is given twice"
                if str(same) == str(path)
                else (f"--report {same} and --report {path} are the same file")
            )
            raise UsageError(f"{said}.", "Give each report a file of its own.")
        seen[path.resolve()] = path
    return tuple(paths)


def check_report_path(path: Path) -> None:
    """Refuse, before the run, a report path that could not be written at its end."""
    suffix = path.suffix.lower()
    if suffix not in REPORT_EXTENSIONS:
        shown = f"extension {suffix!r}" if suffix else "no extension"
        raise UsageError(f"--report {path} has {shown}.", "Use a name ending in .json, .md or .csv.")
    if path.is_dir():
        raise UsageError(f"--report {path} is a directory.", "Give a file name such as report.json.")
    parent = path.parent
    if parent.exists() and not parent.is_dir():
        raise UsageError(f"--report {path}: {parent} is a file, not a folder.")
    if not parent.is_dir():
        raise UsageError(f"--report {path}: the folder {parent} does not exist.", "Create it first.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--report {path}: the folder {parent} is not writable.")
    # os.access says yes to root and knows nothing of read-only mounts or quotas: make the temporary
    # file the writer will make, so a report that cannot be written is refused before the run.
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".check", dir=parent)
    except OSError as exc:
        raise UsageError(
            f"--report {path}: files cannot be created in {parent} ({exc.strerror or exc}).",
            "Choose a writable folder.",
        ) from exc
    os.close(fd)
    os.unlink(probe)
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"--report {path} exists and is not writable.")


def _clean(value: Any) -> Any:
    """JSON has no NaN or infinity: an unusable figure is null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def _flatten(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _flatten(f"{prefix}.{k}" if prefix else str(k), v)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from _flatten(f"{prefix}[{i}]", v)
    else:
        yield prefix, value


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def render_csv(report: Report) -> str:
    """One row for the run; a sweep adds one row per point (`row` says which), same columns."""
    return _csv(_clean(report.model_dump()))


def _csv(report: dict[str, Any]) -> str:
    points = report.get("points") or []
    run = {k: v for k, v in report.items() if k not in ("points", "frontier", "tiers")}
    rows = [{"row": "run", **dict(_flatten("", run))}]
    frontier = set(report.get("frontier") or [])
    for i, point in enumerate(points):
        rows.append({"row": f"point {i + 1}", "on_frontier": i in frontier, **dict(_flatten("", point))})
    columns = list(dict.fromkeys(key for row in rows for key in row))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_cell(row.get(c)) for c in columns])
    return buf.getvalue()


def render_json(report: Report) -> str:
    return json.dumps(_clean(report.model_dump()), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def _mode_for(path: Path) -> int:
    """The permissions a plain `open(path, "w")` would give (mkstemp makes the file private)."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_text_atomic(path: Path, text: str) -> None:
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_report(
    path: Path,
    report: Report,
    *,
    series: ReportSeries | None = None,
    checks: Sequence[CheckResult] = (),
) -> None:
    """Write `report` to `path` (.json, .md or .csv); `checks`, when given, are written with it."""
    suffix = path.suffix.lower()
    if checks:
        report = report.model_copy(update={"checks": list(checks)})
    if suffix == ".json":
        text = render_json(report)
    elif suffix == ".md":
        try:
            charts = write_sweep_charts(path, report)
            task_charts = write_task_charts(path, report)
            cache_charts = write_cache_charts(path, report)
            time_charts = write_time_charts(path, report)
        except OSError as exc:
            raise UsageError(f"--report {path}: its charts could not be written: {exc.strerror or exc}.") from exc
        text = render_markdown(
            report,
            series=series,
            checks=checks,
            images=markdown_images(charts),
            task_images=task_markdown_images(task_charts),
            cache_images=cache_markdown_images(cache_charts),
            time_images=time_markdown_images(time_charts),
        )
    elif suffix == ".csv":
        text = render_csv(report)
    else:
        raise UsageError(f"--report {path} has an unknown extension.", "Use .json, .md or .csv.")
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise UsageError(f"--report {path} could not be written: {exc.strerror or exc}.") from exc


def write_reports(
    paths: Sequence[Path],
    report: Report,
    *,
    series: ReportSeries | None = None,
    checks: Sequence[CheckResult] = (),
) -> None:
    """`write_report` to each of `paths` (`--report`, repeatable): one that cannot be written does not
    keep the others from being written; the first failure is raised once all were tried."""
    failed: UsageError | None = None
    for path in paths:
        try:
            write_report(path, report, series=series, checks=checks)
        except UsageError as exc:
            failed = failed or exc
    if failed is not None:
        raise failed
