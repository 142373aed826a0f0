"""Reports, SLO checks, headless output and report comparison: sinks and readers of the Snapshot stream.

- `ReportBuilder` turns the stream into the report of docs/metrics.md (`Report`, its keys `REPORT_KEYS`),
  and `write_report` writes it as JSON, Markdown or CSV (`check_report_paths` vets the paths up front);
- `parse_check` / `evaluate_checks` are the `--check` SLO assertions;
- `HeadlessPrinter` is `--headless` output;
- `compare_main` is `agentx-tui compare A.json B.json`; `keys_listing` is `agentx-tui keys`.

Recordings (the other sink that keeps a run) live in `agentx_tui.recording`.
"""

from agentx_tui.report._builder import POWER_SOURCE, SERVER_HIT_RATE_SOURCE, ReportBuilder
from agentx_tui.report._charts import markdown_images, write_sweep_charts
from agentx_tui.report._checks import OPERATORS, Check, CheckResult, evaluate_checks, parse_check
from agentx_tui.report._compare_cli import compare_main
from agentx_tui.report._headless import HeadlessPrinter
from agentx_tui.report._keys import (
    FIGURES,
    KEY_TABLE_END,
    KEY_TABLE_START,
    NUMERIC_KEYS,
    REPORT_KEYS,
    key_table,
    keys_listing,
    unit,
)
from agentx_tui.report._markdown import render_markdown, sparkline
from agentx_tui.report._model import CheckRow, Report
from agentx_tui.report._series import SERIES_NAMES, ReportSeries
from agentx_tui.report._writers import (
    REPORT_EXTENSIONS,
    check_report_path,
    check_report_paths,
    render_csv,
    render_json,
    write_report,
    write_reports,
)

__all__ = [
    "FIGURES",
    "KEY_TABLE_END",
    "KEY_TABLE_START",
    "NUMERIC_KEYS",
    "OPERATORS",
    "POWER_SOURCE",
    "REPORT_EXTENSIONS",
    "REPORT_KEYS",
    "SERIES_NAMES",
    "SERVER_HIT_RATE_SOURCE",
    "Check",
    "CheckResult",
    "CheckRow",
    "HeadlessPrinter",
    "Report",
    "ReportBuilder",
    "ReportSeries",
    "check_report_path",
    "check_report_paths",
    "compare_main",
    "evaluate_checks",
    "key_table",
    "keys_listing",
    "markdown_images",
    "parse_check",
    "render_csv",
    "render_json",
    "render_markdown",
    "sparkline",
    "unit",
    "write_report",
    "write_reports",
    "write_sweep_charts",
]
