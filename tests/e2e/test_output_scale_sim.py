"""`--output-scale 0.5` end to end, on the built-in simulated engine: a headless run replaying a trace
asks the server for half of every answer (rounded, at least 1 token) and for exactly the same prompts
as a plain run of the same seed (from worker processes too), as the server's own request log shows;
the reports say which run was which, and `compare` reads them side by side (docs/metrics.md, "What if
the model answered 30% shorter")."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.sim import sim_server

LOGGED_SIM = Path(__file__).with_name("logged_sim.py")
# (input_length, output_length): 7, 5 and 33 halve to 3.5, 2.5 and 16.5 (rounded as `round` does: 4, 2, 16);
# 1 and 0 ask for 1 token either way.
CALLS = ((300, 120), (420, 7), (380, 5), (510, 1), (260, 0), (640, 64), (300, 33), (700, 90))


def logged_sim(log: Path) -> contextlib.AbstractContextManager[str]:
    """The simulator (its GPU 20× real time), logging every completion it is asked for to `log`."""
    return sim_server("--time-scale", "20", program=(str(LOGGED_SIM), str(log)), start_s=30)


def _trace(folder: Path) -> Path:
    path = folder / "trace.jsonl"
    rows = [
        {
            "timestamp": 50 * i,
            "input_length": n,
            "output_length": out,
            "hash_ids": [100 * i + j for j in range(n // 512 + 1)],  # blocks of 512 tokens
        }
        for i, (n, out) in enumerate(CALLS)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run(folder: Path, trace: Path, name: str, *flags: str) -> tuple[dict[str, str], dict[str, Any], str]:
    """One headless run of the trace: {prompt: max_tokens} as the server logged them, the report, stdout."""
    log, report = folder / f"{name}.log", folder / f"{name}.json"
    with logged_sim(log) as url:
        run = subprocess.run(
            [sys.executable, "-m", "agentx_tui", "--attach", url, "-w", str(trace), "-u", "2", "--seed", "7",
             "--headless", "--duration", "60", "--interval", "0.5", "--report", str(report), *flags],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    bodies = [json.loads(line) for line in log.read_text().splitlines()]
    streamed = [b for b in bodies if b.get("stream")]  # not the client's calibration requests
    asked = {json.dumps(b["messages"]): b["max_tokens"] for b in streamed}
    assert len(asked) == len(streamed) == len(CALLS)  # every request once, each prompt its own
    assert all(b["min_tokens"] == b["max_tokens"] for b in streamed)
    return asked, json.loads(report.read_text()), run.stdout


def test_output_scale_halves_every_requested_answer_and_nothing_else(tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    plain, plain_report, plain_out = _run(tmp_path, trace, "plain")
    short, short_report, short_out = _run(tmp_path, trace, "short", "--output-scale", "0.5")
    assert sorted(plain.values()) == sorted(max(1, out) for _, out in CALLS)
    assert set(short) == set(plain)  # the same prompts, byte for byte
    assert {p: max(1, round(n * 0.5)) for p, n in plain.items()} == short
    assert sorted(short.values()) == [1, 1, 2, 4, 16, 32, 45, 60]  # 16.5 and 2.5 round to even

    assert plain_report["output_scale"] == 1.0 and short_report["output_scale"] == 0.5
    assert plain_report["requests_completed"] == short_report["requests_completed"] == len(CALLS)
    assert short_report["output_tokens"] == sum(short.values())
    assert plain_report["prompt_tokens"] == short_report["prompt_tokens"]
    assert "summary, outputs ×0.5" in short_out and "outputs ×" not in plain_out

    compared = subprocess.run(
        [sys.executable, "-m", "agentx_tui", "compare", str(tmp_path / "plain.json"), str(tmp_path / "short.json")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert compared.returncode in (0, 1), compared.stderr  # 1: B's output tokens/s fell, as they should
    assert "outputs ×0.5" in compared.stdout and "output_tokens_per_s" in compared.stdout


@pytest.mark.slow
def test_worker_processes_ask_for_the_scaled_answers_too(tmp_path: Path) -> None:
    # Workers get the prepared workload (load/spreading/protocol.py), its answers already scaled.
    trace = _trace(tmp_path)
    plain, _, _ = _run(tmp_path, trace, "plain")
    short, report, _ = _run(tmp_path, trace, "short", "--output-scale", "0.5", "--workers", "2")
    assert report["workers"] == 2 and report["output_scale"] == 0.5
    assert {p: max(1, round(n * 0.5)) for p, n in plain.items()} == short
