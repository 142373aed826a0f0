"""The command-line contract (docs/architecture.md): --version, --help, usage errors in one sentence, exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentx_tui import __version__
from agentx_tui.cli import main, parse_args
from agentx_tui.run import RunPlan, build_plan

CONTRACT_OPTIONS = [
    "--attach",
    "--serve",
    "--vllm-arg",
    "--sim",
    "--port",
    "--vllm-cmd",
    "--api-key",
    "--workload",
    "--users",
    "--scale",
    "--duration",
    "--seed",
    "--gpu-price",
    "--cost-profile",
    "--headless",
    "--report",
    "--record",
    "--check",
    "--gpu-metrics",
    "--refresh",
]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentx_tui", *args], capture_output=True, text=True, timeout=60)


def test_version() -> None:
    result = _cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"agentx-tui {__version__}"


def test_help_lists_every_design_option_grouped() -> None:
    result = _cli("--help")
    assert result.returncode == 0
    for option in CONTRACT_OPTIONS:
        assert option in result.stdout, option
    for group in ("target", "workload", "cost", "output"):
        assert f"\n{group}" in result.stdout
    for sub in ("replay", "workloads", "sim"):
        assert f"agentx-tui {sub}" in result.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--no-such-flag"], "Unrecognized arguments: --no-such-flag."),
        (["--users", "many"], "-u/--users: 'many' is not a whole number."),
        (["--attach", "http://x", "--serve", "m"], "--attach and --serve cannot be used together."),
        (["--users", "-3"], "-u/--users: '-3' is out of range: users must be at least 0 and at most 200,000."),
        (["--attach", "http://x", "--port", "9"], "--port is for a launched or simulated server"),
        (["--vllm-arg"], "--vllm-arg needs a value."),
        (["--gpu-price", "2", "--cost-profile", "h200"], "cannot be used together"),
    ],
)
def test_usage_errors_are_one_sentence_exit_2(args: list[str], needle: str) -> None:
    result = _cli(*args)
    assert result.returncode == 2
    assert needle in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_bad_frontier_axis_is_one_sentence_exit_2() -> None:
    result = _cli("--sweep", "auto", "--frontier-axis", "ttft")
    assert result.returncode == 2
    assert "--frontier-axis 'ttft' is not one of e2e, decode." in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_the_frontier_axis_is_the_north_star_unless_decode_is_asked_for() -> None:
    assert _plan("--sweep", "auto").frontier_axis == "e2e_interactivity"
    decode = _plan("--sweep", "auto", "--frontier-axis", "decode")
    assert decode.frontier_axis == "decode_interactivity"
    assert decode.recorded_settings().frontier_axis == "decode_interactivity"


def _plan(*argv: str) -> RunPlan:
    return build_plan(parse_args(argv))


def test_vllm_args_may_start_with_dashes() -> None:
    plan = _plan("--serve", "m", "--vllm-arg", "--max-num-seqs", "--vllm-arg=16")
    assert plan.target.vllm_args == ("--max-num-seqs", "16")
    assert plan.target.kind == "serve"


def test_api_key_from_environment_never_in_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_API_KEY", "sk-test-distinctive-123")
    plan = _plan("--attach", "http://x")
    assert plan.api_key == "sk-test-distinctive-123"
    assert "sk-test-distinctive-123" not in repr(plan)
    assert "sk-test-distinctive-123" not in plan.recorded_settings().model_dump_json()


def test_default_target_is_the_simulator() -> None:
    assert _plan().target.kind == "sim"


def test_main_returns_exit_code_in_process() -> None:
    assert main(["--users", "x"]) == 2


def test_every_report_given_is_planned_and_one_file_named_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    json_path, md_path = tmp_path / "r.json", tmp_path / "r.md"
    plan = _plan("--report", str(json_path), "--report", str(md_path), "--report", str(tmp_path / "r.csv"))
    assert plan.output.reports == (json_path, md_path, tmp_path / "r.csv")
    assert _plan().output.reports == ()
    (tmp_path / "sub").mkdir()
    assert main(["--report", str(json_path), "--report", str(tmp_path / "sub" / ".." / "r.json")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.endswith("are the same file. Give each report a file of its own.") and "\n" not in error
    assert main(["--report", str(md_path), "--report", str(md_path)]) == 2
    assert f"--report {md_path} is given twice." in capsys.readouterr().err


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("0", "--output-scale: '0' is out of range: the output scale must be more than 0 and at most 100."),
        ("-0.5", "--output-scale: '-0.5' is out of range"),
        ("101", "--output-scale: '101' is out of range"),
        ("nan", "--output-scale: 'nan' is not a finite number."),
        ("inf", "--output-scale: 'inf' is not a finite number."),
        ("30%", "--output-scale: '30%' is not a number."),
    ],
)
def test_a_bad_output_scale_is_one_sentence_exit_2(value: str, needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--output-scale", value, "--headless", "--duration", "1"]) == 2  # before anything starts
    err = capsys.readouterr().err
    assert needle in err
    assert len(err.strip().splitlines()) == 1


def test_output_scale_goes_into_the_plan_its_workload_and_its_recorded_settings() -> None:
    plan = _plan("--output-scale", "0.7", "-w", "chat")
    assert plan.load.output_scale == 0.7
    assert plan.load.workload.spec.output_scale == 0.7
    assert plan.recorded_settings().output_scale == 0.7
    plain = _plan("-w", "chat")
    assert plain.load.output_scale == 1.0 and plain.load.workload.spec.output_scale == 1.0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--proxy", "0", "--session-idle", "0"], "--session-idle: '0' is out of range: seconds must be more than 0"),
        (["--proxy", "0", "--session-idle", "-5"], "--session-idle: '-5' is out of range"),
        (["--proxy", "0", "--session-idle", "nan"], "--session-idle: 'nan' is not a finite number."),
        (["--proxy", "0", "--session-idle", "inf"], "--session-idle: 'inf' is not a finite number."),
        (["--proxy", "0", "--session-idle", "soon"], "--session-idle: 'soon' is not a number."),
        (["--session-idle", "30"], "--session-idle only applies with --proxy [HOST:]PORT."),
    ],
)
def test_a_bad_session_idle_is_one_sentence_exit_2(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*args, "-w", "none", "--headless", "--duration", "1"]) == 2  # before anything starts
    err = capsys.readouterr().err
    assert needle in err
    assert len(err.strip().splitlines()) == 1


def test_session_idle_goes_into_the_proxy_plan_and_its_recorded_settings() -> None:
    plan = _plan("--proxy", "0", "--session-idle", "0.5", "-w", "none")
    assert plan.proxy is not None and plan.proxy.session_idle_s == 0.5
    recorded = plan.recorded_settings().proxy
    assert recorded is not None and recorded.session_idle_s == 0.5
    default = _plan("--proxy", "0", "-w", "none").proxy
    assert default is not None and default.session_idle_s == 120.0


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("989", "--gpu-peak: '989' is not TFLOPS,TBPS: two numbers, e.g. 989,3.35."),
        ("989,3.35,1", "--gpu-peak: '989,3.35,1' is not TFLOPS,TBPS"),
        ("0,3.35", "--gpu-peak: '0' is out of range: the peak TFLOP/s must be more than 0"),
        ("989,-1", "--gpu-peak: '-1' is out of range: the peak TB/s must be more than 0 and at most 1,000."),
        ("989,nan", "--gpu-peak: 'nan' is not a finite number."),
        ("fast,3", "--gpu-peak: 'fast' is not a number."),
    ],
)
def test_a_bad_gpu_peak_is_one_sentence_exit_2(value: str, needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--gpu-peak", value, "--headless", "--duration", "1"]) == 2  # before anything starts
    err = capsys.readouterr().err
    assert needle in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        (
            "0.9",
            "--spec-golden: '0.9' is out of range: the golden acceptance length must be at least 1 and at most 100.",
        ),
        ("inf", "--spec-golden: 'inf' is not a finite number."),
        ("two", "--spec-golden: 'two' is not a number."),
    ],
)
def test_a_bad_spec_golden_is_one_sentence_exit_2(value: str, needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--spec-golden", value, "--headless", "--duration", "1"]) == 2  # before anything starts
    err = capsys.readouterr().err
    assert needle in err
    assert len(err.strip().splitlines()) == 1


def test_a_bad_golden_lengths_file_is_said_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    user = tmp_path / "agentx-tui" / "golden-acceptance.yaml"
    user.parent.mkdir()
    user.write_text("thinking: sometimes\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert main(["--headless", "--duration", "1"]) == 2
    err = capsys.readouterr().err
    assert f"The golden acceptance lengths file {user} has a bad field `thinking`" in err
    assert len(err.strip().splitlines()) == 1


def test_spec_golden_goes_into_the_plan_and_its_recorded_settings() -> None:
    plan = _plan("--spec-golden", "2.49", "-w", "chat")
    assert plan.agentx.spec_golden == 2.49 and plan.recorded_settings().spec_golden == 2.49
    assert _plan("-w", "chat").agentx.spec_golden is None


def test_gpu_peak_goes_into_the_plan_and_its_recorded_settings() -> None:
    plan = _plan("--gpu-peak", "989.4, 3.35", "-w", "chat")
    assert plan.price.gpu_peak == (989.4, 3.35)
    assert plan.recorded_settings().gpu_peak == (989.4, 3.35)
    assert _plan("-w", "chat").price.gpu_peak is None


def test_keys_lists_every_report_key_with_its_unit_and_a_bad_check_points_there(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An error said "`--help` lists the report keys" while `--help` did not (error_rate was absent)."""
    from agentx_tui.report import FIGURES, NUMERIC_KEYS

    assert main(["keys"]) == 0
    listing = capsys.readouterr().out
    lines = listing.splitlines()
    for key, fig in FIGURES.items():
        line = next(line for line in lines if line[2:].split(" ", 1)[0] == key)
        assert line.startswith("* " if key in NUMERIC_KEYS else "  ") and fig.meaning in line, key
    assert any(line.split()[:3] == ["*", "error_rate", "fraction"] for line in lines)
    assert "* total_tokens_per_s_per_gpu_at_T_ci_low, _ci_high" in listing and "agents_per_gpu_at_T" in listing
    assert "sessions_started: the earlier name of sessions_ended" in listing
    assert main(["--check", "error_rat < 0.1"]) == 2
    error = capsys.readouterr().err
    assert "Did you mean error_rate?" in error and "`agentx-tui keys` lists the report keys." in error
    assert "--help" not in error
    assert "agentx-tui keys" in _cli("--help").stdout
