"""Live rates that keep up with the server (docs/metrics.md §4, "Tokens in time"), against the built-in
simulated engine's own counters over loopback: a 60-s headless `coding-agent` run whose answers take
seconds each. The per-second lines count tokens as they stream, so their mean total tok/s is the
report's rate (once they lagged it by a third: a request's tokens came into the window only when it
completed), and the report's totals are the server's counter deltas."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.helpers.sim import sim_server

pytestmark = [pytest.mark.slow, pytest.mark.long]

_LINE = re.compile(r"^\s+\d\d:\d\d\s")  # a per-second line: elapsed mm:ss first
_SI = {"K": 1e3, "M": 1e6, "B": 1e9}


def _tokens_counted(url: str) -> tuple[float, float]:
    """The server's own prompt and generation token counters (every label set summed)."""
    text = urllib.request.urlopen(f"{url}/metrics", timeout=10).read().decode()
    sums = {"vllm:prompt_tokens_total": 0.0, "vllm:generation_tokens_total": 0.0}
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in sums:
            sums[name] += float(line.rsplit(" ", 1)[1])
    return sums["vllm:prompt_tokens_total"], sums["vllm:generation_tokens_total"]


def _number(cell: str) -> float:
    return float(cell[:-1]) * _SI[cell[-1]] if cell[-1] in _SI else float(cell)


def test_the_per_second_lines_keep_up_with_the_servers_counters(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    with sim_server() as url:
        prompt_before, generated_before = _tokens_counted(url)
        run = subprocess.run(
            [sys.executable, "-m", "agentx_tui", "--attach", url, "-w", "coding-agent", "-u", "8", "--seed", "1",
             "--headless", "--duration", "60", "--report", str(report)],
            capture_output=True, text=True, timeout=240,
        )  # fmt: skip
        prompt_after, generated_after = _tokens_counted(url)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    r = json.loads(report.read_text())

    # The report's totals are what the server counted (the run drains its requests before it ends).
    assert r["prompt_tokens"] == pytest.approx(prompt_after - prompt_before, rel=0.01)
    assert r["output_tokens"] == pytest.approx(generated_after - generated_before, rel=0.01)

    header = next(line for line in run.stdout.splitlines() if line.startswith("elapsed"))
    assert header.split()[:7] == ["elapsed", "users", "out", "tok/s", "total", "tok/s", "TTFT"]
    lines = [line.split() for line in run.stdout.splitlines() if _LINE.match(line)]
    assert len(lines) >= 55  # one a second
    output = statistics.fmean(_number(cells[2]) for cells in lines)
    total = statistics.fmean(_number(cells[3]) for cells in lines)
    assert total == pytest.approx(r["total_tokens_per_s"], rel=0.10)
    # Output alone too, though a tenth of it is first counted at an estimate of the tokens an event holds.
    assert output == pytest.approx(r["output_tokens_per_s"], rel=0.15)
