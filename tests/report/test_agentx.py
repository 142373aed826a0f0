"""AgentX validity in the report (docs/sweeps.md, "AgentX validity"): its keys, the headless summary, the
Markdown header, and compare, which shows it without gating on it."""

from __future__ import annotations

import io
import json

from agentx_tui.report import FIGURES, REPORT_KEYS, HeadlessPrinter, Report, ReportBuilder, render_markdown
from agentx_tui.report._compare import compare_reports
from agentx_tui.report._compare_text import render_comparison
from agentx_tui.snapshot import AgentXRule, AgentXVerdict
from tests.report._snaps import stream

SHORT = AgentXRule(
    rule="point_length", state="broken", head="points shorter than 900 s", detail="the run's one point, --duration 20 s"
)
OFFLOAD = AgentXRule(
    rule="kv_offload",
    state="unknown",
    head="KV offload unknown",
    detail="the simulated engine does not say whether it offloads KV to CPU memory",
)
ERRORS = AgentXRule(rule="error_rate", state="met", head="error rate at most 10%", detail="the highest was 0.0%")
INVALID = AgentXVerdict(rules=(SHORT, OFFLOAD, ERRORS), final=True)
VALID = AgentXVerdict(rules=(ERRORS,), final=True)


def built(verdict: AgentXVerdict | None) -> Report:
    builder = ReportBuilder()
    snaps = stream()
    for s in snaps[:-1]:
        builder.add(s)
    builder.add(snaps[-1].model_copy(update={"agentx": verdict}))
    return builder.build()


def test_the_report_says_whether_the_run_is_agentx_valid_why_not_and_what_holds() -> None:
    report = built(INVALID)
    assert report.agentx_valid is False
    assert report.agentx_invalid_reasons == [
        "points shorter than 900 s: the run's one point, --duration 20 s",
        "KV offload unknown: the simulated engine does not say whether it offloads KV to CPU memory",
    ]
    assert report.agentx_rules_met == ["error rate at most 10%: the highest was 0.0%"]
    data = json.loads(json.dumps(report.model_dump()))
    assert Report.read(data).agentx_invalid_reasons == report.agentx_invalid_reasons
    # their own group, the last of the figures
    keys = list(REPORT_KEYS)
    assert keys[-3:] == ["agentx_valid", "agentx_invalid_reasons", "agentx_rules_met"]
    assert {FIGURES[k].group for k in keys[-3:]} == {"agentx"}


def test_a_run_not_judged_has_null_keys_and_its_report_says_it_was_not_judged() -> None:
    report = built(None)
    assert (report.agentx_valid, report.agentx_invalid_reasons, report.agentx_rules_met) == (None, None, None)
    out = io.StringIO()
    HeadlessPrinter(out).summary(report, [])
    assert "AgentX" not in out.getvalue()
    verdict = render_markdown(report).split("## Verdict")[1].split("\n## ")[0]
    assert "AgentX: not judged (the run sent no load of its own)." in verdict
    assert "valid" not in verdict


def test_the_headless_summary_gives_the_verdict_then_every_reason_and_rule_met() -> None:
    out = io.StringIO()
    HeadlessPrinter(out).summary(built(INVALID), [])
    lines = out.getvalue().splitlines()
    at = lines.index("  AgentX: not AgentX-valid: points shorter than 900 s: the run's one point, --duration 20 s")
    assert lines[at + 1 : at + 3] == [
        "    and: KV offload unknown: the simulated engine does not say whether it offloads KV to CPU memory",
        "    meets: error rate at most 10%: the highest was 0.0%",
    ]
    out = io.StringIO()
    HeadlessPrinter(out).summary(built(VALID), [])
    assert "  AgentX: AgentX-valid\n    meets: error rate at most 10%" in out.getvalue()


def test_the_markdown_report_says_it_under_its_title() -> None:
    head = render_markdown(built(INVALID)).split("## Headline figures")[0]
    assert "**not AgentX-valid** by the AgentX rules a client can check:" in head
    assert "- points shorter than 900 s: the run's one point, --duration 20 s" in head
    assert "- meets: error rate at most 10%: the highest was 0.0%" in head


def test_compare_shows_each_sides_validity_and_reasons_without_gating_on_them() -> None:
    valid, invalid = built(VALID), built(INVALID)
    comparison = compare_reports(valid, invalid)
    assert [key for key, _, _ in comparison.words] == ["agentx_valid", "agentx_invalid_reasons"]
    assert all(row.key not in ("agentx_valid", "agentx_invalid_reasons") for row in comparison.rows)
    text = render_comparison(comparison, a_name="a.json", b_name="b.json")
    assert "agentx_valid: A true | B false" in text
    assert (
        "agentx_invalid_reasons: A (none) | B points shorter than 900 s: the run's one point, --duration 20 s; "
        "KV offload unknown: the simulated engine does not say whether it offloads KV to CPU memory"
    ) in text
    assert not comparison.regressions
