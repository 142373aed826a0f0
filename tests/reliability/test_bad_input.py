"""Bad input: one clear sentence on stderr, exit code 2, no traceback, and no load sent.

Every case attaches to a witness server (the hostile server behaving well) so that "no load sent"
is observed, not assumed: it must not receive a single chat completion. A workload that does not fit
the model's context is also refused against the real engine.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentx_tui.cli import main
from tests.reliability._run import clean_env
from tests.reliability.hostile import HostileServer

Case = Callable[[Path], list[str]]  # (a scratch folder) -> the arguments after --attach URL


def _file(folder: Path, name: str, text: str | bytes) -> str:
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


_HELD: list[socket.socket] = []


def _taken_port() -> int:
    """A loopback port something is listening on (held for the whole session)."""
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    _HELD.append(held)
    return int(held.getsockname()[1])


def _folder(folder: Path, name: str) -> str:
    (folder / name).mkdir()
    return str(folder / name)


CASES: dict[str, tuple[Case, str]] = {
    "malformed YAML": (
        lambda d: ["-w", _file(d, "w.yaml", "steps: [1, 2\noutput_tokens: 3\n")],
        "is not valid YAML at line 2, column 14",
    ),
    "a workload that is not text": (lambda d: ["-w", _file(d, "w.yaml", b"\xff\xfe\x00\x01")], "is not a text"),
    "unknown key": (lambda d: ["-w", _file(d, "w.yaml", "stepz: 3\n")], "unknown field 'stepz'"),
    "negative length": (
        lambda d: ["-w", _file(d, "w.yaml", "output_tokens: -5\n")],
        "field 'output_tokens.value' is invalid",
    ),
    "negative bound of a distribution": (
        lambda d: ["-w", _file(d, "w.yaml", "shared_prefix_tokens: {dist: uniform, min: -10, max: 5}\n")],
        "field 'shared_prefix_tokens.min' is invalid",
    ),
    "shared prefix longer than the context": (
        lambda d: ["-w", _file(d, "w.yaml", "shared_prefix_tokens: 5000\nsteps: 2\n"), "--scale", "1"],
        "has a shared prefix of about 5000 tokens at --scale 1, more than the model's context of 4096 tokens",
    ),
    "unknown preset": (lambda d: ["-w", "no-such-preset"], "No workload preset or file named 'no-such-preset'"),
    "missing trace of a trace workload": (
        lambda d: ["-w", _file(d, "t.yaml", "kind: trace\ntrace: {path: gone.jsonl}\n")],
        "Cannot read the trace",
    ),
    "bad --check expression": (lambda d: ["--check", "ttft_p90_s <<= 2"], "is not KEY OP NUMBER"),
    "--check on an unknown key": (lambda d: ["--check", "ttft_p95_s <= 2"], "'ttft_p95_s' is not a report key"),
    "--check with no number": (lambda d: ["--check", "ttft_p90_s <= soon"], "is not a finite number"),
    "a folder with no session file": (lambda d: ["-w", _folder(d, "presets")], "holds no agent-session files"),
    "a broken session file": (
        lambda d: ["-w", _file(d, "s.json", '{"block_size": 64, "requests": [{"t": 0, "in": "x"}]}')],
        "requests[0]",
    ),
    "a directory as the report": (lambda d: ["--report", _folder(d, "r.json")], "is a directory"),
    "a directory as the recording": (lambda d: ["--record", _folder(d, "rec")], "is a directory"),
    # /proc takes no new files even for root (os.access would say yes to root for a chmod-ed folder).
    "an unwritable report path": (lambda d: ["--report", "/proc/agentx-report.json"], "files cannot be created"),
    "an unwritable recording path": (lambda d: ["--record", "/proc/agentx-rec.jsonl"], "cannot be written"),
    "a report path in a missing folder": (
        lambda d: ["--report", str(d / "missing" / "r.json")],
        "does not exist",
    ),
    "a report with an unknown extension": (lambda d: ["--report", str(d / "r.txt")], "has extension '.txt'"),
    "--capture without --proxy": (lambda d: ["--capture", str(d / "cap")], "--capture only applies with --proxy"),
    "--session-header without --proxy": (lambda d: ["--session-header", "X-Run"], "only applies with --proxy"),
    "a bad --proxy address": (lambda d: ["--proxy", "localhost:http"], "--proxy takes [HOST:]PORT"),
    "a --session-header that is no header name": (
        lambda d: ["--proxy", "0", "--session-header", "X Session"],
        "is not a header name",
    ),
    "a file as the capture folder": (
        lambda d: ["--proxy", "0", "--capture", _file(d, "cap", "x")],
        "is a file, not a folder",
    ),
    "a --proxy port already taken": (lambda d: ["--proxy", str(_taken_port())], "The proxy cannot listen on"),
}


@pytest.fixture(scope="module")
def witness() -> Iterator[HostileServer]:
    with HostileServer() as server:
        yield server


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_one_sentence_exit_2_before_any_load(
    name: str, witness: HostileServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_args, needle = CASES[name]
    sent_before = sum(witness.chat_by_behaviour.values())
    code = main(["--attach", witness.url, "--headless", "--duration", "2", *make_args(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert needle in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert sum(witness.chat_by_behaviour.values()) == sent_before, "load was sent before the error"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--attach", "notaurl::"], "has an invalid port"),
        (["--gpu-metrics", "ftp://dcgm"], "is not an http(s) URL"),
        (["--sim", "b300/nope"], "Unknown simulator profile 'b300/nope'"),
        (["replay", "{dir}"], "is a directory, not a recording"),
    ],
)
def test_bad_targets_and_files_are_usage_errors(
    args: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([a.replace("{dir}", str(tmp_path)) for a in args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert needle in err and len(err.strip().splitlines()) == 1


@pytest.mark.vllm
def test_a_workload_too_long_for_the_real_model_is_refused_by_the_real_process(vllm_url: str, tmp_path: Path) -> None:
    # As a process, against the real engine: the error comes after the probe (it needs the model's
    # context length), from inside the event loop, and must still be one line with exit code 2.
    workload = _file(tmp_path, "w.yaml", "shared_prefix_tokens: 8000\nsteps: 2\n")
    result = subprocess.run(
        [sys.executable, "-m", "agentx_tui", "--attach", vllm_url, "-w", workload, "--scale", "1", "--headless"],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
    )
    assert result.returncode == 2, result.stderr
    assert "more than the model's context of 4096 tokens" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert result.stdout == ""  # not one tick: nothing ran


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--scale", "nan"], "--scale: 'nan' is not a finite number."),
        (["--scale", "0"], "--scale: '0' is out of range: the scale must be more than 0 and at most 100."),
        (["--duration", "-5"], "--duration: '-5' is out of range: seconds must be more than 0"),
        (["--duration", "inf"], "--duration: 'inf' is not a finite number."),
        (["--duration", "1e12"], "is out of range: seconds must be more than 0 and at most 2,592,000"),
        (
            ["-u", "1000000000"],
            "-u/--users: '1000000000' is out of range: users must be at least 0 and at most 200,000.",
        ),
        (["--interval", "0"], "--interval: '0' is out of range"),
        (["--refresh", "nan"], "--refresh: 'nan' is not a finite number."),
        (["--gpu-price", "-1"], "--gpu-price: '-1' is out of range"),
        (["--gpus", "0"], "--gpus: '0' is out of range"),
        (["--warmup", "-1"], "--warmup: '-1' is out of range"),
        (["--point-duration", "nan"], "--point-duration: 'nan' is not a finite number."),
        (["--max-think", "-0.5"], "--max-think: '-0.5' is out of range"),
        (["--tiers", "50,nan"], "--tiers: 'nan' is not a finite number."),
        (["--sweep", "users=0,4"], "--sweep: '0' is out of range"),
        (["--sessions", "0"], "--sessions: '0' is out of range"),
        (["--workers", "-2"], "--workers: '-2' is out of range"),
        (["--startup-timeout", "0"], "--startup-timeout: '0' is out of range"),
        (["--port", "70000"], "--port: '70000' is out of range"),
        (["replay", "x.jsonl", "--speed", "0"], "--speed: '0' is out of range"),
        (["replay", "x.jsonl", "--speed", "nan"], "--speed: 'nan' is not a finite number."),
        (["sim", "--port", "-1"], "--port: '-1' is out of range"),
        (["compare", "a.json", "b.json", "--tolerance", "nan"], "--tolerance"),
    ],
)
def test_bad_numbers_are_one_sentence_exit_2_in_every_subcommand(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert needle in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
