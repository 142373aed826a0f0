"""`output_scale` in the report (1.0 for a plain run and for recordings made before it existed), and
every place a run with `--output-scale` could be taken for a plain one says "outputs ×F"."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from agentx_tui.report import HeadlessPrinter, Report, ReportBuilder, render_csv, render_markdown
from agentx_tui.report._compare_cli import compare_main
from agentx_tui.snapshot import Snapshot
from agentx_tui.units import outputs_scaled
from tests.report._snaps import stream
from tests.report.test_compare import RUN, write


def _built(output_scale: float | None) -> Report:
    builder = ReportBuilder()
    for s in stream():
        if output_scale is not None:
            s = s.model_copy(update={"run": s.run.model_copy(update={"output_scale": output_scale})})
        builder.add(s)
    return builder.build()


def _report(output_scale: float | None) -> dict[str, Any]:
    return _built(output_scale).model_dump()


def test_the_report_says_the_output_scale_and_one_for_a_plain_run() -> None:
    assert _report(0.7)["output_scale"] == 0.7
    assert _report(None)["output_scale"] == 1.0


def test_a_recording_made_before_the_output_scale_loads_as_a_plain_run() -> None:
    data = json.loads(stream(1)[0].to_json())
    del data["run"]["output_scale"]
    assert Snapshot.from_json(json.dumps(data)).run.output_scale == 1.0


def test_the_label_is_said_only_for_a_scaled_run() -> None:
    assert outputs_scaled(0.7) == "outputs ×0.7"
    assert outputs_scaled(1.0) is None and outputs_scaled(None) is None


def test_markdown_csv_and_the_headless_summary_say_it() -> None:
    short, plain = _built(0.7), _built(None)
    assert "workload **chat** (**outputs ×0.7**)" in render_markdown(short)
    assert "outputs ×" not in render_markdown(plain)
    header, values = csv.reader(io.StringIO(render_csv(short)))
    assert dict(zip(header, values, strict=True))["output_scale"] == "0.7"
    out = io.StringIO()
    HeadlessPrinter(out).summary(short, [])
    assert "summary, outputs ×0.7" in out.getvalue()
    out = io.StringIO()
    HeadlessPrinter(out).summary(plain, [])
    assert "outputs ×" not in out.getvalue()


def test_compare_names_the_scaled_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shorter = {**RUN, "output_scale": 0.7, "output_tokens_per_s": 315.0}
    compare_main([write(tmp_path, "a.json", {**RUN, "output_scale": 1.0}), write(tmp_path, "b.json", shorter)])
    out = capsys.readouterr().out
    assert "coding-agent · outputs ×0.7 · 8 users" in out
    assert out.count("outputs ×") == 1
