"""The typed report (report/_model.py): its JSON is the contract, and a file read back and written again
is the same file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from agentx_tui.report import (
    FIGURES,
    REPORT_KEYS,
    Report,
    _builder,
    evaluate_checks,
    parse_check,
    render_json,
    write_report,
)
from agentx_tui.report._keys import SWEEP_KEYS, tier_report_keys
from agentx_tui.snapshot import Figures, PointFigures, Snapshot, TaskReading, TierRead, UserRow
from tests.report._snaps import built, stream
from tests.ui.fakes import make_sweep_snapshot, make_sweep_state


def sweep_snaps() -> list[Snapshot]:
    first = make_sweep_snapshot(1, sweep=make_sweep_state(4))
    last = make_sweep_snapshot(2, sweep=make_sweep_state(5, phase="done", stop_reason="every point measured"))
    return [first, last.model_copy(update={"time": first.time + 600.0, "elapsed_s": first.elapsed_s + 600.0})]


def written(tmp_path: Path, report: Report, *checks: str) -> str:
    path = tmp_path / "r.json"
    results = evaluate_checks([parse_check(c) for c in checks], report)
    write_report(path, report, checks=results)
    return path.read_text(encoding="utf-8")


def test_the_fields_are_the_declared_figures_then_the_sweeps_then_what_the_run_adds() -> None:
    fields = [k for k in Report.model_fields if k not in ("intervals", "read_as")]
    assert fields == [*FIGURES, *SWEEP_KEYS, "server_exit_code", "server_log_tail", "checks"]


def test_building_refuses_a_key_that_is_not_declared_and_reading_drops_it() -> None:
    with pytest.raises(ValidationError, match="e2e_interactivity_p90_tokens_per_sec"):
        Report(e2e_interactivity_p90_tokens_per_sec=42.0)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="ttft_p90"):
        Report.model_validate({"ttft_p90": 0.2})
    assert Report.read({"ttft_p90": 0.2, "ttft_p90_s": 0.3}).model_dump() == {"ttft_p90_s": 0.3}


def test_a_misspelt_key_in_the_builder_fails_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each part of the report is a `Figures` set; a part with a key no figure declares stops the build
    with the key's name, where it used to vanish without a word."""

    def misspelt(tasks: TaskReading) -> Figures:
        return Figures.model_validate({"tasks_complete": tasks.tasks_completed})

    monkeypatch.setattr(_builder, "_task_figures", misspelt)
    snaps = stream()
    snaps[-1] = snaps[-1].model_copy(update={"tasks": TaskReading(tasks_completed=3)})
    with pytest.raises(ValidationError, match="tasks_complete"):
        built(snaps)


@pytest.mark.parametrize("kind", ["run", "sweep", "proxy"])
def test_a_report_of_the_last_release_reads_back_and_writes_out_unchanged(kind: str) -> None:
    """Reports written at stop 31 (a --precision run, a two-point sweep, a --proxy run with --capture),
    before the figures were declared: the same keys in the same order, the same values."""
    text = (Path(__file__).parent / "data" / "stop31" / f"{kind}.json").read_text(encoding="utf-8")
    report = Report.read(json.loads(text))
    assert render_json(report) == text


@pytest.mark.parametrize(
    ("snaps", "checks"),
    [
        (stream(), ("error_rate == 0",)),
        (stream(with_client=False, with_gpus=False, with_price=False), ()),
        ([], ()),
        (sweep_snaps(), ("total_tokens_per_s_per_gpu_at_50 >= 1", "tokens_per_dollar_total_at_100 > 0")),
    ],
    ids=["run", "observing", "no sample", "sweep"],
)
def test_a_written_report_read_back_and_written_again_is_the_same_file(
    tmp_path: Path, snaps: list[Snapshot], checks: tuple[str, ...]
) -> None:
    text = written(tmp_path, built(snaps, "stopped by SIGTERM" if not snaps else None), *checks)
    again = Report.read(json.loads(text))
    assert json.dumps(again.model_dump(), indent=2, ensure_ascii=False) + "\n" == text


def test_a_sweep_keeps_its_rows_typed_and_writes_each_tier_flat() -> None:
    report = built(sweep_snaps())
    assert report.is_sweep and report.points and report.tiers and report.users_detail is not None
    assert all(isinstance(p, PointFigures) for p in report.points)
    assert all(isinstance(u, UserRow) for u in report.users_detail)
    data = report.model_dump()
    flat = tier_report_keys(report.tiers)
    assert {k: data[k] for k in flat} == flat
    keys = list(data)
    assert keys[: len(REPORT_KEYS)] == list(REPORT_KEYS)
    assert keys[len(REPORT_KEYS) :] == [*SWEEP_KEYS, *flat]  # the tiers' keys after the sweep's own


def test_a_single_run_has_no_sweep_keys() -> None:
    data = built(stream()).model_dump()
    assert list(data) == list(REPORT_KEYS)
    assert not built(stream()).is_sweep


def test_an_older_report_loads_with_its_missing_keys_none_and_stays_as_it_was() -> None:
    old = {"agentx_version": "0.0.9", "duration_s": 60, "users": 8, "total_tokens_per_s": 900.0}
    report = Report.read(old)
    assert report.users == 8 and report.interactivity_p90_tokens_per_s is None and report.tiers is None
    assert report.has("users") and not report.has("interactivity_p90_tokens_per_s")
    assert report.model_dump() == old  # 60 == 60.0: the same JSON number
    assert Report.read({**old, "a_key_of_a_newer_version": 1}).model_dump() == old


def test_tier_keys_without_the_tiers_list_make_the_tiers() -> None:
    report = Report.model_validate(
        {
            "total_tokens_per_s_per_gpu_at_100": 9000.0,
            "total_tokens_per_s_per_gpu_at_100_ci_low": 8500.0,
            "tokens_per_dollar_total_at_37.5": None,
        }
    )
    assert report.tiers == [
        TierRead(tier=100.0, total_tokens_per_s_per_gpu=9000.0, total_tokens_per_s_per_gpu_ci_low=8500.0),
        TierRead(tier=37.5),
    ]
    assert report.figure("total_tokens_per_s_per_gpu_at_100_ci_low") == 8500.0
    assert report.figure("usd_per_million_total_tokens_at_37.5") is None


def test_list_entries_this_version_cannot_read_are_kept_as_they_are() -> None:
    data = {"points": [{"users": 1}], "endpoints": [{"url": "http://a", "x": 1}], "frontier": [0]}
    report = Report.read(data)
    assert report.points == [{"users": 1}] and report.endpoints == [{"url": "http://a", "x": 1}]
    assert report.model_dump() == data


def test_figure_is_a_finite_number_or_none() -> None:
    report = Report(users=8, error_rate=float("nan"), model="tiny")
    assert report.figure("users") == 8.0
    assert report.figure("error_rate") is None and report.figure("model") is None
    assert report.figure("no_such_key") is None


def test_a_dead_servers_exit_and_the_checks_come_after_the_tiers(tmp_path: Path) -> None:
    """What the run adds when a launched server died (run/execute.py), then the checks, as they always were."""
    data = built(sweep_snaps()).model_dump()
    died = Report.model_validate({**data, "server_exit_code": -9, "server_log_tail": ["Killed"]})
    text = written(tmp_path, died, "error_rate == 0")
    keys = list(json.loads(text))
    assert keys[-3:] == ["server_exit_code", "server_log_tail", "checks"]
    assert keys[:-3] == list(data)
    assert json.dumps(Report.read(json.loads(text)).model_dump(), indent=2, ensure_ascii=False) + "\n" == text


def test_a_renamed_key_reads_under_its_new_name_and_is_written_back_under_its_own() -> None:
    """`sessions_started` counted the sessions that ended: it is `sessions_ended` now, and a report of
    before reads as such (compare, --check) while its file is written back as it was."""
    old = {"agentx_version": "0.0.9", "duration_s": 60, "sessions_started": 6, "sessions_completed": 6}
    report = Report.read(old)
    assert report.sessions_ended == 6 and report.figure("sessions_ended") == 6
    assert report.model_dump() == old
    assert "sessions_ended" in Report.read({**old, "sessions_ended": 7}).model_dump()  # both: the new one wins
