"""JSON, Markdown and CSV carry the same figures; writes are atomic; bad paths are refused early."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from agentx_tui.errors import UsageError
from agentx_tui.report import (
    REPORT_KEYS,
    Report,
    ReportBuilder,
    check_report_path,
    evaluate_checks,
    parse_check,
    sparkline,
    write_report,
)
from agentx_tui.report._format import cell
from agentx_tui.report._keys import unit
from agentx_tui.snapshot import PointFigures, SweepState
from tests.report._snaps import stream

LISTS = ("endpoints", "users_detail", "step_curve", "task_s_histogram")  # tables of their own


@pytest.fixture
def built() -> tuple[Report, ReportBuilder]:
    builder = ReportBuilder()
    for s in stream(with_gpus=False):  # some nulls among the figures
        builder.add(s)
    return builder.build(partial_reason="stopped by SIGTERM"), builder


def test_json_holds_every_key_and_the_checks(tmp_path: Path, built: tuple[Report, ReportBuilder]) -> None:
    model, builder = built
    report = model.model_dump()
    results = evaluate_checks([parse_check("error_rate == 0")], model)
    path = tmp_path / "r.json"
    write_report(path, model, series=builder.series(), checks=results)
    data = json.loads(path.read_text())
    assert {k: data[k] for k in REPORT_KEYS} == report
    assert data["gpu_util_mean"] is None
    assert data["checks"] == [
        {
            "expr": "error_rate == 0",
            "key": "error_rate",
            "op": "==",
            "threshold": 0.0,
            "value": pytest.approx(1 / 13),
            "passed": False,
        }
    ]


def test_csv_is_one_header_row_and_one_value_row_with_the_same_figures(
    tmp_path: Path, built: tuple[Report, ReportBuilder]
) -> None:
    model, _ = built
    report = model.model_dump()
    path = tmp_path / "r.csv"
    write_report(path, model)
    rows = list(csv.reader(path.open()))
    assert len(rows) == 2
    row = dict(zip(rows[0], rows[1], strict=True))
    for key in REPORT_KEYS:
        if key in LISTS or key == "errors_by_kind":
            continue
        value = report[key]
        if value is None:
            assert row[key] == "", key
        elif isinstance(value, bool):
            assert row[key] == ("true" if value else "false")
        elif isinstance(value, int | float):
            assert float(row[key]) == value, key  # full precision
        else:
            assert row[key] == value
    assert float(row["endpoints[1].prompt_tokens_per_s"]) == report["endpoints"][1]["prompt_tokens_per_s"]
    assert row["users_detail[1].user"] == "1"
    assert row["errors_by_kind.timeout"] == "1"


def test_markdown_has_every_figure_with_its_unit_the_checks_and_charts(
    tmp_path: Path, built: tuple[Report, ReportBuilder]
) -> None:
    model, builder = built
    report = model.model_dump()
    results = evaluate_checks([parse_check("output_tokens_per_s >= 50"), parse_check("gpu_util_mean > 0")], model)
    path = tmp_path / "r.md"
    write_report(path, model, series=builder.series(), checks=results)
    text = path.read_text()
    assert text.startswith("# agentx-tui report (partial)")
    assert "stopped by SIGTERM" in text
    every = text.split("## All figures", 1)[1]
    for key in REPORT_KEYS:
        if key in LISTS or report[key] is None or unit(key) == "unix time, s":
            continue
        assert f"| {key} | {cell(report[key])} |" in every, key
    assert "| started_at | 1970-01-01 00:16:39 UTC | UTC |" in every  # a time of day, not a bare number
    assert "| output_tokens_per_s | 75 | tokens/s |" in text
    assert "| kv_cache_usage_mean | 0.25 | fraction 0–1 |" in text
    assert "| gpu_util_mean | n/a (no GPU reading: NVML sees none here" in text
    assert "| `output_tokens_per_s >= 50` | 75 | PASS |" in text
    assert "| `gpu_util_mean > 0` | n/a: the figure is unknown, so the check fails | FAIL |" in text
    assert "KV-cache usage (peak 35.0%)" in text
    assert any(ch in text for ch in "▁▂▃▄▅▆▇█")
    assert "## Endpoints" in text and "http://10.0.0.2:8000" in text


def test_markdown_opens_with_its_verdict_and_ends_with_every_figure(
    tmp_path: Path, built: tuple[Report, ReportBuilder]
) -> None:
    """The checks and the AgentX verdict within the first 40 lines, the headline figures next, the figure
    table last (it used to open with ~150 rows, the checks after them)."""
    model, builder = built
    judged = model.updated(agentx_valid=False, agentx_invalid_reasons=["points shorter than 900 s"])
    results = evaluate_checks([parse_check("output_tokens_per_s >= 50"), parse_check("ttft_p90_s <= 0.1")], judged)
    path = tmp_path / "r.md"
    write_report(path, judged, series=builder.series(), checks=results)
    lines = path.read_text().splitlines()
    head = "\n".join(lines[:40])
    assert "**Checks: 1 of 2 passed** (1 FAILED: the run exits 1)" in head
    assert "| `ttft_p90_s <= 0.1` | 0.2 | FAIL |" in head
    assert "**not AgentX-valid** by the AgentX rules a client can check:" in head
    assert "- points shorter than 900 s" in head
    sections = [line for line in lines if line.startswith("## ")]
    assert sections[:2] == ["## Verdict", "## Headline figures"] and sections[-1] == "## All figures"
    assert "started 1970-01-01 00:16:39 UTC, ended 1970-01-01 00:16:48 UTC" in lines[2]


def test_every_na_in_the_markdown_says_why(tmp_path: Path, built: tuple[Report, ReportBuilder]) -> None:
    """In a list of figures an n/a carries its reason; in a table, a line under it gives it; a figure n/a
    for every endpoint is a line of its own."""
    model, builder = built
    path = tmp_path / "r.md"
    write_report(path, model, series=builder.series())
    lines = path.read_text().splitlines()
    for n, line in enumerate(lines):
        if "n/a" not in line or not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if any(c.startswith("n/a (") for c in cells):
            continue  # said beside it
        table_end = next(i for i in range(n, len(lines)) if not lines[i].startswith("|"))
        notes = lines[table_end + 1 : table_end + 12]
        assert any(note.startswith("- *") and " n/a" in note for note in notes), line
    assert "n/a for every endpoint:" in lines
    assert not any("not measured in this run" in line for line in lines)


def test_sparkline_scales_to_the_peak_and_shows_gaps() -> None:
    assert sparkline([0.0, 0.5, 1.0, None]) == "▁▅█ "
    assert sparkline([None, None]) == "  "
    assert sparkline([]) == ""
    assert len(sparkline([float(i) for i in range(500)], width=60)) == 60


def test_an_interrupted_write_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, built: tuple[Report, ReportBuilder]
) -> None:
    report, _ = built
    path = tmp_path / "r.json"
    path.write_text('{"old": true}')

    def boom(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(UsageError, match="No space left"):
        write_report(path, report)
    assert json.loads(path.read_text()) == {"old": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # no temporary file left behind


def test_non_finite_figures_are_written_as_null(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    write_report(path, Report.model_validate({"output_tokens_per_s": float("nan"), "endpoints": [{"x": float("inf")}]}))
    assert json.loads(path.read_text()) == {"output_tokens_per_s": None, "endpoints": [{"x": None}]}


@pytest.mark.parametrize("name", ["r.json", "r.md", "r.csv", "R.JSON"])
def test_good_report_paths_pass(tmp_path: Path, name: str) -> None:
    check_report_path(tmp_path / name)
    assert not (tmp_path / name).exists()  # checking creates nothing


def test_bad_report_paths_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"extension '\.txt'") as err:
        check_report_path(tmp_path / "r.txt")
    assert err.value.exit_code == 2 and ".json, .md or .csv" in str(err.value)
    with pytest.raises(UsageError, match="no extension"):
        check_report_path(tmp_path / "report")
    (tmp_path / "d.json").mkdir()
    with pytest.raises(UsageError, match="is a directory"):
        check_report_path(tmp_path / "d.json")
    with pytest.raises(UsageError, match="does not exist"):
        check_report_path(tmp_path / "missing" / "r.json")
    with pytest.raises(UsageError, match="unknown extension"):
        write_report(tmp_path / "r.yaml", Report())


def test_a_file_in_place_of_the_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(UsageError, match="is a file, not a folder"):
        check_report_path(tmp_path / "f" / "r.json")


def test_an_unwritable_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() == 0:  # root may write anywhere: let access() answer as it would for a user
        monkeypatch.setattr(os, "access", lambda p, mode: Path(p) != folder)
    folder.chmod(0o500)
    try:
        with pytest.raises(UsageError, match="not writable"):
            check_report_path(folder / "r.json")
    finally:
        folder.chmod(0o700)


def test_the_report_gets_ordinary_permissions_not_the_temp_files(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        path = tmp_path / "r.json"
        write_report(path, Report(users=1))
        assert path.stat().st_mode & 0o777 == 0o644
        path.chmod(0o640)
        write_report(path, Report(users=2))  # an existing file keeps its mode
        assert path.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(umask)


def test_cells_keep_large_figures_whole_and_round_the_rest() -> None:
    assert cell(1.3e9) == "1300000000"
    assert cell(1796237876.4) == "1796237876"
    assert cell(0.123456789) == "0.123457"
    assert cell(75.0) == "75"
    assert (cell(None), cell(True), cell(float("nan")), cell({"a": 1})) == ("n/a", "true", "n/a", '{"a": 1}')


def test_markdown_lists_the_lost_load_workers_and_says_why_a_cell_is_na(
    tmp_path: Path, built: tuple[Report, ReportBuilder]
) -> None:
    """A run that lost a load worker has a table of the losses; a run that lost none has no such section."""
    model, builder = built
    path = tmp_path / "r.md"
    write_report(path, model, series=builder.series())
    assert "## Load workers lost" not in path.read_text()
    loss = {"at_s": 15.3, "worker": 2, "workers": 2, "pid": 1234, "how": "SIGKILL", "users": 16, "users_lost": 8}
    lost = model.updated(worker_losses=[{**loss, "users_left": 8}], users_lost=8)
    write_report(path, lost, series=builder.series())
    lines = path.read_text().splitlines()
    at = lines.index("## Load workers lost")
    assert lines[at + 2].split("|")[1:-1] == [
        " at s ", " worker ", " pid ", " how ", " users lost ", " users left ", " sweep point ", " restarted at s ",
        " restart error ",
    ]  # fmt: skip
    assert "| 15.3 | 2 | 1234 | SIGKILL | 8 | 8 | n/a | n/a |  |" in lines[at + 4]
    assert "- *sweep point* n/a: not a sweep." in lines[at + 5 : at + 9]


def test_the_markdown_says_why_a_points_interval_is_n_a(tmp_path: Path) -> None:
    thin = PointFigures(
        index=0, users=4, warmup_s=3.0, duration_s=12.0, window_start_s=3.0, requests=7, thin=True,
        ci_note="7 requests: an interval needs 20",
    )  # fmt: skip
    full = PointFigures(index=1, users=8, warmup_s=3.0, duration_s=12.0, window_start_s=18.0, requests=90, thin=False)
    snaps = stream()
    snaps[-1] = snaps[-1].model_copy(update={"sweep": SweepState(points=(thin, full), frontier=(0, 1))})
    builder = ReportBuilder()
    for s in snaps:
        builder.add(s)
    path = tmp_path / "sweep.md"
    write_report(path, builder.build())
    text = path.read_text()
    assert "Why a point's interval is n/a (`ci_note`):\n\n- point 1 (thin): 7 requests: an interval needs 20\n" in text
    assert "- point 2" not in text.split("(`ci_note`)")[1]
