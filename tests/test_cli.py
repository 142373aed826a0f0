"""The command-line contract (DESIGN §3): --version, --help, usage errors in one sentence, exit 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentx_tui import __version__
from agentx_tui.cli import main, parse_run_config

DESIGN_OPTIONS = [
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
    for option in DESIGN_OPTIONS:
        assert option in result.stdout, option
    for group in ("target", "workload", "cost", "output"):
        assert f"\n{group}" in result.stdout
    for sub in ("replay", "workloads", "sim"):
        assert f"agentx-tui {sub}" in result.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--no-such-flag"], "Unrecognized arguments: --no-such-flag."),
        (["--users", "many"], "invalid int value"),
        (["--attach", "http://x", "--serve", "m"], "--attach and --serve cannot be used together."),
        (["--users", "-3"], "--users must be zero or more"),
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


def test_vllm_args_may_start_with_dashes() -> None:
    config = parse_run_config(["--serve", "m", "--vllm-arg", "--max-num-seqs", "--vllm-arg=16"])
    assert config.vllm_args == ("--max-num-seqs", "16")
    assert config.target == "serve"


def test_api_key_from_environment_never_in_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_API_KEY", "sk-test-distinctive-123")
    config = parse_run_config(["--attach", "http://x"])
    assert config.api_key == "sk-test-distinctive-123"
    assert "sk-test-distinctive-123" not in repr(config)
    assert "sk-test-distinctive-123" not in str(config.settings_for_recording())


def test_default_target_is_the_simulator() -> None:
    assert parse_run_config([]).target == "sim"


def test_main_returns_exit_code_in_process() -> None:
    assert main(["--users", "x"]) == 2
