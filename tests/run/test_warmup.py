"""A plain run's cold start (docs/metrics.md, "Cold start" and "Warm-up"): against a server whose every
session's first request is slow and the rest fast, the report says that the TTFT p90 is set by those first
requests (and a --check on it names them); `--warmup` leaves them out of the client figures while the
run's totals stay whole."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.load.fake_openai import FakeServer

pytestmark = pytest.mark.slow

COLD_S = 1.5  # a session's first request: a whole prompt to prefill
WARM_S = 0.02  # every later one: its prefix cached
USERS = 6
DURATION = 7.0
WARMUP = 3.0


def _workload(folder: Path) -> Path:
    """Sessions far longer than the run (none ends, so every first request is at the start), and about
    a second of tool time between calls: a user sends ~5 requests, the first one cold: a fifth of them."""
    path = folder / "cold.yaml"
    path.write_text(
        "shared_prefix_tokens: 40\nunique_prefix_tokens: 10\nfirst_message_tokens: 20\nsteps: 200\n"
        "output_tokens: 4\ntool_result_tokens: 10\ntool_latency_s: 1.0\n"
    )
    return path


async def _run(fake: FakeServer, folder: Path, *flags: str) -> tuple[dict[str, Any], str, int]:
    report = folder / f"r{len(list(folder.glob('r*.json')))}.json"
    env = {k: v for k, v in os.environ.items() if k not in ("AGENTX_API_KEY", "VLLM_API_KEY", "OPENAI_API_KEY")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentx_tui", "--attach", fake.url, "-w", str(_workload(folder)), "-u", str(USERS),
        "--scale", "1", "--headless", "--duration", f"{DURATION:g}", "--report", str(report),
        "--check", "ttft_p90_s <= 0.5", *flags, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, cwd=folder, env={**env, "NO_COLOR": "1"},
    )  # fmt: skip
    output, _ = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode is not None
    return json.loads(report.read_text()), output.decode(), proc.returncode


async def test_the_cold_first_requests_are_said_and_the_warmup_leaves_them_out(tmp_path: Path) -> None:
    fake = await FakeServer(prefill_delay_s=WARM_S, first_call_delay_s=COLD_S).start()
    try:
        cold, said, code = await _run(fake, tmp_path)
        before = len(fake.timeline)
        warm, warm_said, warm_code = await _run(fake, tmp_path, "--warmup", f"{WARMUP:g}")
        streamed = len(fake.timeline) - before
    finally:
        await fake.close()

    # Without a warm-up: the first requests, a fifth of the run's, set its TTFT p90, and the report says so.
    assert code == 1, said[-3000:]
    assert cold["ttft_p90_s"] >= COLD_S * 0.9
    assert "ttft_p90_s" in cold["cold_start_figures"]
    assert cold["ttft_p90_s_warm"] < 0.3
    note = cold["cold_start_note"]
    named, why = note.split(" set by ")
    assert named.startswith("ttft_p") and "ttft_p90_s" in named and why.startswith("the sessions' cold first requests")
    assert f"({USERS} of {cold['requests_completed']} requests)" in note and "--warmup" in note
    assert cold["warmup_s"] is None and cold["window_keys"] is None
    # The check's FAIL line says why the figure is what it is; the summary says it in words too.
    fail = next(line for line in said.splitlines() if line.startswith("FAIL ttft_p90_s <= 0.5"))
    assert "set by the sessions' cold first requests; use --warmup" in fail, fail
    assert "cold start: ttft_p" in said

    # With --warmup: the client figures are over the requests sent after it, the first ones left out.
    assert warm_code == 0, warm_said[-3000:]
    assert warm["ttft_p90_s"] < 0.3 and warm["ttft_p90_s"] < cold["ttft_p90_s"] / 5
    assert warm["warmup_s"] == WARMUP and 0 < warm["window_s"] < DURATION - WARMUP + 2
    assert "ttft_p90_s" in warm["window_keys"] and "prompt_tokens" not in warm["window_keys"]
    assert warm["cold_start_figures"] == [] and warm["cold_start_note"] is None
    # The run's totals stay whole: every request of the run, the first ones too, and their tokens.
    assert warm["requests_completed"] == streamed, (warm["requests_completed"], streamed)
    assert warm["prompt_tokens"] > 0 and warm["duration_s"] >= DURATION - 1
    assert "PASS ttft_p90_s <= 0.5" in warm_said
    flat = " ".join(warm_said.split())  # the summary's lines are wrapped at 79 columns
    assert "measured: latency, interactivity, hit rates and rates over the " in flat
    assert f"after a {WARMUP:g} s warm-up" in flat
