"""Headless output: plain lines for CI logs and pipes, colour only on a terminal."""

from __future__ import annotations

import io
import re

import pytest

from agentx_tui.report import HeadlessPrinter, Report, ReportBuilder, evaluate_checks, parse_check
from agentx_tui.report._headless import limits_lines
from agentx_tui.snapshot import PointFigures, WorkerLossRow
from tests.report._snaps import built, snap, stream
from tests.ui.fakes import make_sweep_snapshot, make_sweep_state

CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # anything but the newline


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_lines_have_a_header_and_the_figures_and_no_control_characters() -> None:
    out = io.StringIO()
    printer = HeadlessPrinter(out)
    assert printer.color is False
    for s in stream(3):
        printer.line(s)
    lines = out.getvalue().splitlines()
    assert len(lines) == 4
    assert lines[0].split() == [
        "elapsed",
        "users",
        "out",
        "tok/s",
        "total",
        "tok/s",
        "TTFT",
        "p90",
        "NS",
        "p90",
        "KV",
        "%",
        "prefix",
        "tok/$",
    ]
    assert all(len(line) < 80 for line in lines), "a line a terminal of 80 columns would wrap"
    # Tick 2: 4.5 s, 3 users, client window 72 / 772 tok/s, TTFT p90 0.25 s, North Star p90 42 tok/s/user,
    # KV (0.3+0.2)/2, prefix hits weighted by prompt tokens/s (0.6·500 + 0.2·250)/750.
    assert lines[3].split() == ["00:04", "3", "72", "772", "0.25s", "42", "25.0%", "46.7%", "1.3B"]
    assert len({len(line) for line in lines}) == 1  # every value right-aligned in its column
    assert not CONTROL.search(out.getvalue())


def test_unknown_figures_show_n_a() -> None:
    out = io.StringIO()
    HeadlessPrinter(out).line(snap(1, with_client=False, with_price=False, two_endpoints=False))
    fields = out.getvalue().splitlines()[1].split()
    # Observe only: server rates 50 / 550 tok/s; no TTFT or North Star in the window; no price.
    assert fields == ["00:02", "2", "50", "550", "n/a", "n/a", "20.0%", "60.0%", "n/a"]


def test_a_state_other_than_running_is_said() -> None:
    out = io.StringIO()
    down = snap(1).model_copy(update={"run": snap(1).run.model_copy(update={"state": "server down"})})
    HeadlessPrinter(out).line(down)
    assert out.getvalue().splitlines()[1].endswith("server down")


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = FakeTty()
    printer = HeadlessPrinter(tty)
    assert printer.color is True
    printer.line(snap(0))
    assert "\x1b[" in tty.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    assert HeadlessPrinter(FakeTty()).color is False
    assert HeadlessPrinter(io.StringIO(), color=True).color is True


def test_summary_lists_the_figures_and_each_check_with_its_value() -> None:
    builder = ReportBuilder()
    for s in stream(with_gpus=False):
        builder.add(s)
    report = builder.build(partial_reason="stopped by SIGTERM")
    checks = evaluate_checks(
        [
            parse_check("output_tokens_per_s > 0"),
            parse_check("error_rate == 0"),
            parse_check("gpu_util_mean > 0"),
        ],
        report,
    )
    out = io.StringIO()
    HeadlessPrinter(out).summary(report, checks)
    text = out.getvalue()
    assert "summary (partial: stopped by SIGTERM)" in text
    assert re.search(r"output_tokens_per_s +75 tokens/s", text)
    assert re.search(r"gpu_util_mean +n/a", text)
    assert "PASS output_tokens_per_s > 0 (measured 75)" in text
    assert "FAIL error_rate == 0 (measured 0.0769231)" in text
    assert "FAIL gpu_util_mean > 0 (the figure is unknown: the run could not measure it, so the check fails)" in text
    assert not CONTROL.search(text)


def test_summary_of_a_run_with_precision_gives_its_intervals_and_why_it_ended() -> None:
    report = Report(
        total_tokens_per_s_per_gpu_ci_low=900.0,
        total_tokens_per_s_per_gpu_ci_high=1100.0,
        stop_reason="precision ±5% reached: throughput ±4.0%, p90 interactivity unknown after 80 requests",
    )
    out = io.StringIO()
    HeadlessPrinter(out).summary(report, [])
    text = out.getvalue()
    assert "total_tokens_per_s_per_gpu 95%: 900–1100 tokens/s/GPU" in text
    assert "interactivity_p90_tokens_per_s 95%: n/a tokens/s/user" in text
    assert "ended: precision ±5% reached" in text


def test_summary_says_what_the_client_cost_and_whether_it_was_the_limit() -> None:
    healthy = Report(client_saturated=False, client_cpu_us_per_token=18.2, client_cpu_cores_mean=0.31)
    why = "its event loop ran 80 ms late (p99)"
    bound = healthy.model_copy(update={"client_saturated": True, "client_saturated_reason": why})
    texts = []
    proxy_only = healthy.model_copy(update={"client_cpu_us_per_token": None})  # no token of its own streamed
    for report in (healthy, bound, Report(client_saturated=None), proxy_only):
        out = io.StringIO()
        HeadlessPrinter(out, color=False).summary(report, [])
        texts.append(out.getvalue())
    assert "client: 18.2 µs of CPU per output token, 0.31 cores on average\n" in texts[0]
    assert "CLIENT-BOUND (its event loop ran 80 ms late (p99)): figures measure the client" in texts[1]
    assert "client:" not in texts[2]  # observing only: no load generator
    assert "client: 0.31 cores on average\n" in texts[3]


def test_summary_says_the_schedule_lag_and_when_the_users_were_too_few() -> None:
    kept = Report(schedule_lag_p50_s=0.001, schedule_lag_p90_s=0.002, schedule_lag_p99_s=0.004, schedule_behind=False)
    behind = kept.model_copy(update={"schedule_lag_p90_s": 2.4, "schedule_behind": True, "schedule_users_needed": 12})
    texts = []
    for report in (Report(), kept, behind):
        out = io.StringIO()
        HeadlessPrinter(out, color=False).summary(report, [])
        texts.append(out.getvalue())
    unscheduled, on_time, late = texts
    assert "schedule lag" not in unscheduled  # nothing was scheduled: no line at all
    assert "schedule lag p50/p90/p99" in on_time and "BEHIND" not in on_time
    assert "BEHIND SCHEDULE: too few users; about 12 users would keep it" in late


def test_the_report_carries_the_schedule_lag_keys_null_when_unscheduled() -> None:
    builder = ReportBuilder()
    for s in stream():
        builder.add(s)
    report = builder.build().model_dump()
    for key in ("schedule_lag_p50_s", "schedule_lag_p90_s", "schedule_lag_p99_s"):
        assert key in report and report[key] is None


def test_summary_says_the_roofline_and_the_energy_or_why_not() -> None:
    report = Report(
        achieved_tflops_per_gpu=250.0,
        achieved_hbm_gb_per_s_per_gpu=650.0,
        peak_tflops_per_gpu=989.4,
        peak_hbm_gb_per_s_per_gpu=3350.0,
        mfu=250 / 989.4,
        mbu=650 / 3350,
        roofline_bound="compute",
        energy_j=6000.0,
        energy_source="NVML total-energy counter",
        gpu_power_w_per_gpu_mean=375.0,
        joules_per_token=0.909,
        joules_per_output_token=10.0,
        tokens_per_joule=1.1,
    )
    assert limits_lines(report) == [
        "  roofline: 250 TFLOP/s of 989.4 peak (MFU 25.3%), 650 GB/s of 3.35K (MBU 19.4%) per GPU: compute-bound",
        "  energy: 0.909 J/token, 10 J/output token, 1.1 tokens/J, 6K J, 375 W per GPU (NVML total-energy counter)",
    ]
    cpu = Report(
        achieved_tflops_per_gpu=0.0012,
        achieved_hbm_gb_per_s_per_gpu=0.073,
        peak_source="no peak: no GPU seen (pass --gpu-peak TFLOPS,TBPS)",
        mfu=None,
        energy_j=None,
    )
    assert limits_lines(cpu) == [
        "  roofline: 0.0012 TFLOP/s, 0.073 GB/s per GPU; MFU, MBU n/a (no peak: no GPU seen (pass --gpu-peak "
        "TFLOPS,TBPS))",
        "  energy: n/a (no GPU energy or power reading)",
    ]
    no_flag = Report(
        mfu=None, achieved_source="n/a: start vLLM with --enable-mfu-metrics (its estimated FLOPs and bytes)"
    )
    assert (
        limits_lines(no_flag)[0]
        == "  roofline: n/a: start vLLM with --enable-mfu-metrics (its estimated FLOPs and bytes)"
    )
    assert limits_lines(Report(ttft_p90_s=0.2)) == []  # a report of before these figures


def _lost(**fields: object) -> WorkerLossRow:
    row: dict[str, object] = {
        "at_s": 15.3, "worker": 2, "workers": 2, "pid": 1234, "how": "SIGKILL", "users": 16, "users_lost": 8,
        "users_left": 8,
    }  # fmt: skip
    return WorkerLossRow.model_validate({**row, **fields})


def test_a_lost_load_worker_is_said_under_the_tick_that_saw_it_and_its_restart_when_it_comes() -> None:
    out = io.StringIO()
    printer = HeadlessPrinter(out)
    ticks = stream(4)
    losses = [(), (_lost(),), (_lost(),), (_lost(restarted_at_s=18.1),)]
    for tick, lost in zip(ticks, losses, strict=True):
        printer.line(tick.model_copy(update={"run": tick.run.model_copy(update={"load_losses": lost})}))
    lines = out.getvalue().splitlines()
    assert lines[3:5] == [
        "  00:15  load worker 2 of 2 (pid 1234) died (SIGKILL): its 8 users are gone; 8",
        "         of 16 remain",
    ]  # under tick 2's row, once, wrapped to 79 columns
    assert lines[6:] == [lines[6], "  00:18  load worker 2 of 2 restarted: its 8 users run again"]
    assert len(lines) == 8 and all(len(line) < 80 for line in lines)


def test_a_sweeps_steps_are_said_under_the_tick_that_saw_them_and_other_events_are_not() -> None:
    out = io.StringIO()
    printer = HeadlessPrinter(out)
    events = [
        ("12:00:01 sweep probe 1 (2 users, bracketing tiers 30 50): warm-up until steady, at most 40 s",),
        ("12:00:02 users set to 4", "12:00:02 windows reset"),
        ("12:00:03 sweep probe 1 done: 2 users (bracketing tiers 30 50), North Star 93.8 tok/s/user, 17K tok/s/GPU",),
    ]
    for tick, said in zip(stream(3), events, strict=True):
        printer.line(tick.model_copy(update={"events": said}))
    lines = out.getvalue().splitlines()
    assert lines[2:4] == [
        "  00:00  sweep probe 1 (2 users, bracketing tiers 30 50): warm-up until steady,",
        "         at most 40 s",
    ]  # under tick 1's row, wrapped to 79 columns
    assert "users set to" not in out.getvalue() and "windows reset" not in out.getvalue()
    assert lines[6].split()[1:5] == ["sweep", "probe", "1", "done:"] and len(lines) == 8
    assert all(len(line) < 80 for line in lines)


def test_a_restart_that_failed_is_said_once() -> None:
    out = io.StringIO()
    printer = HeadlessPrinter(out)
    failed = (_lost(restart_error="Load worker 1 did not start within 60 s"),)
    for tick in stream(3):
        printer.line(tick.model_copy(update={"run": tick.run.model_copy(update={"load_losses": failed})}))
    text = out.getvalue()
    assert text.count("died (SIGKILL)") == 1 and text.count("could not be restarted") == 1
    assert "load worker 2 of 2 could not be restarted: Load worker 1 did not start within 60 s" in " ".join(
        text.split()
    )


def test_summary_lists_the_lost_load_workers() -> None:
    rows = [_lost(point=2, restarted_at_s=18.1), _lost(at_s=75.0, pid=999, users_lost=4, users=8, users_left=4)]
    report = Report(worker_losses=rows, users_lost=12)
    out = io.StringIO()
    HeadlessPrinter(out).summary(report, [])
    text = out.getvalue()
    assert "  load workers lost: 2, 12 users in all\n" in text
    assert "\n    worker 2 of 2 at 00:15 in sweep point 2 (SIGKILL): 8 of 16 users; restarted\n      at 00:18\n" in text
    assert "\n    worker 2 of 2 at 01:15 (SIGKILL): 4 of 8 users; not restarted\n" in text
    assert all(len(line) < 80 for line in text.splitlines()[-3:])
    out = io.StringIO()
    HeadlessPrinter(out).summary(Report(worker_losses=[], users_lost=0), [])
    assert "load workers lost" not in out.getvalue()


def test_summary_of_a_sweep_prints_its_points_and_its_tier_reads() -> None:
    """The summary of a sweep said nothing of its points or tiers: a CI log had to open the report."""
    builder = ReportBuilder()
    builder.add(make_sweep_snapshot(1, sweep=make_sweep_state(4)))
    builder.add(make_sweep_snapshot(2, sweep=make_sweep_state(5, phase="done", stop_reason="every point measured")))
    report = builder.build()
    out = io.StringIO()
    HeadlessPrinter(out).summary(report, [])
    lines = out.getvalue().splitlines()
    at = lines.index("  points (p90 interactivity in tok/s/user):")
    head = ["users", "total", "tok/s/GPU", "North", "Star", "p90", "decode", "p90", "requests", "frontier"]
    assert lines[at + 1].split() == head
    assert len([line for line in lines[at + 2 :] if line.startswith("    ") and line.split()[0].isdigit()]) >= 5
    tiers = lines.index("  tiers (where the frontier crosses p90 interactivity T tok/s/user):")
    assert lines[tiers + 1].split()[:5] == ["tier", "read", "on", "total", "tok/s/GPU"]
    assert any("n/a: " in line for line in lines[tiers:])  # a tier outside the frontier says why
    # The requests each point's latency figures are over (`requests`), each in its row.
    counted = report.model_copy(
        update={"points": [p.model_dump() | {"requests": 40 + i} for i, p in enumerate(report.points or ())]}
    )
    out = io.StringIO()
    HeadlessPrinter(out).summary(counted, [])
    text = out.getvalue().splitlines()
    at = text.index("  points (p90 interactivity in tok/s/user):")
    rows = [line.split() for line in text[at + 2 : at + 2 + len(report.points or ())]]
    assert [row[-2] if row[-1] == "yes" else row[-1] for row in rows] == [str(40 + i) for i in range(len(rows))]


def test_summary_says_what_duration_covers_and_why_a_figure_is_na() -> None:
    report = built(stream(with_gpus=False)).updated(drain_s=3.4)
    out = io.StringIO()
    HeadlessPrinter(out).summary(report, [])
    text = out.getvalue()
    assert "(first sample to last: the last 3.4 s finished the requests in flight when the run was stopped" in text
    assert re.search(r"gpu_util_mean +n/a \(no GPU reading", text)


def test_summary_says_the_warm_up_s_window_the_cold_start_and_the_thin_points() -> None:
    thin = PointFigures(index=0, users=4, warmup_s=3, duration_s=12, window_start_s=3, requests=7, thin=True)
    empty = PointFigures(index=1, users=64, warmup_s=3, duration_s=12, window_start_s=18, requests=0, thin=True)
    full = PointFigures(index=2, users=8, warmup_s=3, duration_s=12, window_start_s=33, requests=90, thin=False)
    report = Report(
        warmup_s=10.0,
        window_s=24.0,
        cold_start_note="ttft_p90_s 0.9 s (0.14 s without them) is set by the sessions' cold first requests",
        points=[thin, empty, full],
    )
    out = io.StringIO()
    HeadlessPrinter(out).summary(report, [])
    text = out.getvalue()
    flat = " ".join(text.split())  # the lines are wrapped at 79 columns
    assert "measured: latency, interactivity, hit rates and rates over the 24 s after a 10 s warm-up" in flat
    assert "cold start: ttft_p90_s 0.9 s (0.14 s without them) is set by" in flat
    assert "  thin points: 4 users (20 requests give an interval)" in text
    assert "  not measured: 64 users (no request counted in the window)" in text
    assert all(len(line) <= 79 for line in text.splitlines() if "measured" in line or "cold start" in line)
    out = io.StringIO()
    HeadlessPrinter(out).summary(Report(), [])
    assert "measured:" not in out.getvalue() and "cold start" not in out.getvalue()
