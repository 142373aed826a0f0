"""Agents, not requests, by arithmetic (docs/metrics.md, "Tasks"): a headless run attached to the fake
server, whose every answer takes a fixed time, replays one session tree of a known shape, and the
report's task figures are what the shape and the replay rules (workloads/README.md) say they must be."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.load.fake_openai import FakeServer

ANSWER_S = 0.4  # every call's fixed answer time: the fake server waits this long before its first token
PRICE = 2.0  # USD per GPU-hour


def _call(ins: int, out: int, blocks: list[int]) -> dict[str, object]:
    return {"t": 0.0, "type": "n", "in": ins, "out": out, "hash_ids": blocks, "think_time": 0.0, "api_time": 0.1}


def _tree(folder: Path) -> list[dict[str, object]]:
    """A parent call P0, a sub-agent S (S0 then S1) spawned after it, then P1 (which joins S) and P2;
    every think time 0. Returns the five calls."""
    p0, s0, s1 = _call(300, 11, [1, 2, 3, 4]), _call(140, 21, [9, 10]), _call(200, 22, [9, 10, 11])
    p1, p2 = _call(340, 12, [1, 2, 3, 4, 5]), _call(400, 13, [1, 2, 3, 4, 5, 6])
    p1["t"], p2["t"] = 3.0, 4.0
    s1["t"] = 1.0
    sub = {"type": "subagent", "t": 2.5, "agent_id": "agent_001", "subagent_type": "Explore",
           "duration_ms": 2000, "requests": [s0, s1]}  # fmt: skip
    data = {"id": "shape", "block_size": 64, "hash_id_scope": "local", "requests": [p0, sub, p1, p2]}
    (folder / "shape.json").write_text(json.dumps(data))
    return [p0, s0, s1, p1, p2]


async def test_a_tree_of_known_shape_gives_the_task_arithmetic(fake: FakeServer, tmp_path: Path) -> None:
    fake.prefill_delay_s = ANSWER_S
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    calls = _tree(sessions)
    report = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if k not in ("AGENTX_API_KEY", "VLLM_API_KEY", "OPENAI_API_KEY")}
    # The CLI runs as its own process while the fake server answers on this test's event loop.
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentx_tui", "--attach", fake.url, "-w", str(sessions), "--sessions", "1",
        "-u", "1", "--scale", "1", "--headless", "--report", str(report), "--gpu-price", str(PRICE),
        "--gpus", "1", stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, cwd=tmp_path, env={**env, "NO_COLOR": "1"},
    )  # fmt: skip
    output, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, output.decode()[-3000:]
    r = json.loads(report.read_text())

    ins = sum(int(str(c["in"])) for c in calls)
    outs = sum(int(str(c["out"])) for c in calls)
    assert r["tasks_completed"] == 1 and r["tasks_failed"] == 0
    assert r["steps_per_task_mean"] == 5
    assert r["output_tokens_per_task_mean"] == outs
    # The prompts are token-exact, so the server counted each call's `in`; its totals hold this tree only.
    streamed = sorted(out for _, _, out in fake.timeline)
    assert streamed == sorted(int(str(c["out"])) for c in calls)
    assert fake.prompt_tokens_total == ins and fake.generation_tokens_total == outs
    assert r["tokens_per_task_mean"] == ins + outs
    # The replay rules: S starts after P0 has ended, S1 after S0, P1 waits for S to end, P2 follows P1;
    # with no think time the five calls run one after another, each taking the fixed answer time.
    # Bounds: the log-bucketed percentile is within 2% of the exact time; the client's own work between
    # calls is milliseconds, far less than the one answer time a sixth call (or a skipped wait) would make.
    assert 5 * ANSWER_S * 0.98 <= r["task_s_p50"] < 5 * ANSWER_S + 0.3
    assert r["task_model_share"] > 0.9
    assert r["usd_per_task"] * r["tokens_per_dollar_total"] == pytest.approx(r["tokens_per_task_mean"], rel=1e-6)
