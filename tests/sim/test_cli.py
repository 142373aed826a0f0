"""The simulator's one command line: `agentx-tui sim` and `python -m agentx_tui.sim` parse the same options
and hand them all to `serve`; usage errors are one sentence and exit 2."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from agentx_tui import cli
from agentx_tui.sim import DEFAULT_PROFILE, SpecDecoding, server
from agentx_tui.sim import cli as sim_cli


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What `serve` was called with, instead of serving."""
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(server, "serve", lambda **options: calls.append(options))
    return calls


def test_every_option_but_the_listing_is_a_keyword_of_serve() -> None:
    options = {a.dest for a in sim_cli.build_parser()._actions} - {"help", "list_profiles"}
    assert options <= set(inspect.signature(server.serve).parameters)


def test_agentx_tui_sim_hands_every_option_to_serve(served: list[dict[str, Any]]) -> None:
    argv = ["--port", "0", "--num-gpu-blocks-override", "48", "--max-num-seqs", "16", "--time-scale", "2.5"]
    tier = ["--cpu-kv-gb", "500", "--cpu-kv-gbps", "450"]
    step = ["--max-num-batched-tokens", "512", "--spec", "3:2.5"]
    assert cli.main(["sim", *argv, *step, *tier, "--ready-fd", "9"]) == 0
    assert served == [
        {
            "host": "127.0.0.1",
            "port": 0,
            "profile": DEFAULT_PROFILE,
            "num_gpu_blocks": 48,
            "max_num_seqs": 16,
            "max_num_batched_tokens": 512,
            "spec": SpecDecoding(3, 2.5),
            "cpu_kv_gb": 500.0,
            "cpu_kv_gbps": 450.0,
            "time_scale": 2.5,
            "ready_fd": 9,
        }
    ]


def test_the_module_entry_point_is_the_same_command_line(served: list[dict[str, Any]]) -> None:
    assert sim_cli.main(["--host", "::1", "--profile", "b200"]) == 0
    assert cli.main(["sim", "--host", "::1", "--profile", "b200"]) == 0
    assert served[0] == served[1] and served[0]["profile"] == "b200"


def test_the_launchers_descriptor_is_not_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["sim", "--help"])
    out = capsys.readouterr().out
    assert "--max-num-batched-tokens" in out and "--ready-fd" not in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--max-num-seqs", "0"], "--max-num-seqs: '0' is out of range"),
        (["--num-gpu-blocks-override", "1"], "--num-gpu-blocks-override: '1' is out of range"),
        (["--time-scale", "0"], "--time-scale: '0' is out of range"),
        (["--time-scale", "inf"], "--time-scale: 'inf' is not a finite number."),
        (["--cpu-kv-gb", "-1"], "--cpu-kv-gb: '-1' is out of range"),
        (["--cpu-kv-gbps", "0"], "--cpu-kv-gbps: '0' is out of range"),
        (["--max-num-batched-tokens", "0"], "--max-num-batched-tokens: '0' is out of range"),
        (["--spec", "0:1"], "--spec: '0:1' is out of range: K, the draft tokens per step, must be from 1 to 64."),
        (["--spec", "2:3.5"], "--spec: '2:3.5' is out of range: the acceptance length must be at least 1 and at most"),
        (["--spec", "3:0.9"], "--spec: '3:0.9' is out of range"),
        (["--spec", "3-2.5"], "--spec: '3-2.5' is not K:AL"),
        (["--port", "x"], "--port: 'x' is not a whole number."),
        (["--no-such-flag"], "Unrecognized arguments: --no-such-flag."),
    ],
)
def test_usage_errors_are_one_sentence_and_exit_2_from_both_entry_points(
    argv: list[str], needle: str, served: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    for run in (lambda: cli.main(["sim", *argv]), lambda: sim_cli.main(argv)):
        assert run() == 2
        err = capsys.readouterr().err
        assert needle in err and len(err.strip().splitlines()) == 1 and "usage:" not in err
    assert served == []
