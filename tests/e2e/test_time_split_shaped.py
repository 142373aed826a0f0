"""Where the time went, end to end (docs/metrics.md, "Where the time went"): a headless run of the real
command line attached to a server whose every answer has a known shape (tests/helpers/shaped_server.py)
reports the client's split of the North Star and the server's own phases and speculative decoding, each
the number the shape makes it.

The shape: the first token 0.4 s after the request (0.1 s of it queued, 0.3 s prefill, as the server's
histograms say), then 19 gaps of 20 ms but one of 0.2 s. So r_i = 0.96 s / 20 tokens, 0.417 of it before
the first token; the long gap is 0.18 s over the median gap of a 0.56 s decode span: 0.321. The server's
speculative counters: per answer 10 drafts of 3 tokens, accepted at positions 0, 1, 2 with rates 0.8, 0.5,
0.2: acceptance length 2.5, rate 0.5. The same shape without the long gap and without speculation:
no stall, and no acceptance figure at all (null, never 0 or 1)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.shaped_server import AnswerShape, ShapedServer, SpecRates

# A busy machine's late timers move an event by a few ms (the shape's deadlines are absolute): the
# client's shares stay within these, while a wrong rule is further off (tests/load/sending/
# test_time_split_driver.py lists how far). The server's figures are its own counts: exact.
SHARE_ABS = 0.03
STALL_ABS = 0.025


async def _run(shape: AnswerShape, spec: SpecRates | None, tmp_path: Path) -> dict[str, Any]:
    """A 6-second headless run of 4 users against a server answering `shape` (speculating at `spec`);
    its JSON report."""
    server = await ShapedServer(shape=shape, spec=spec).start()
    try:
        return await _report(server, tmp_path)
    finally:
        await server.close()


async def _report(server: ShapedServer, tmp_path: Path) -> dict[str, Any]:
    workload = tmp_path / "w.yaml"
    workload.write_text(
        "kind: agent\nname: shaped\nshared_prefix_tokens: 50\nfirst_message_tokens: 20\nsteps: 3\n"
        "output_tokens: 20\ntool_result_tokens: 20\ntool_latency_s: 0.01\n"
    )
    report = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if k not in ("AGENTX_API_KEY", "VLLM_API_KEY", "OPENAI_API_KEY")}
    # The CLI runs as its own process while the shaped server answers on this test's event loop.
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentx_tui", "--attach", server.url, "-w", str(workload), "-u", "4",
        "--duration", "6", "--headless", "--report", str(report), "--scale", "1",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        cwd=tmp_path, env={**env, "NO_COLOR": "1"},
    )  # fmt: skip
    output, _ = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode == 0, output.decode()[-3000:]
    data: dict[str, Any] = json.loads(report.read_text())
    return data


@pytest.mark.slow
async def test_a_known_shape_gives_the_split_the_phases_and_the_acceptance(tmp_path: Path) -> None:
    r = await _run(AnswerShape.stalled(), SpecRates(by_position=(0.8, 0.5, 0.2), drafts=10), tmp_path)
    assert r["requests_completed"] >= 8
    assert r["output_tokens_p50"] == 20
    assert r["north_star_ttft_share"] == pytest.approx(0.4 / 0.96, abs=SHARE_ABS)
    assert r["decode_stall_share"] == pytest.approx(0.18 / 0.56, abs=STALL_ABS)
    # One stall a request as served; a busy host can stretch one more gap past 3x its median now and then.
    assert 1.0 <= r["decode_stalls_per_request"] <= 1.2
    # The server's own histograms and counters: what it served, exactly.
    assert r["server_queue_s_mean"] == pytest.approx(0.1)
    assert r["server_prefill_s_mean"] == pytest.approx(0.3)
    assert r["server_decode_s_mean"] == pytest.approx(0.56)
    assert r["spec_acceptance_length"] == pytest.approx(2.5)
    assert r["spec_acceptance_rate"] == pytest.approx(0.5)
    assert r["spec_acceptance_by_position"] == pytest.approx([0.8, 0.5, 0.2])
    assert r["spec_draft_length"] == 3
    # The client waited for its first token longer than the server counts (loopback, the client's own
    # loop): never less.
    assert r["ttft_outside_server_s_mean"] >= -0.01


@pytest.mark.slow
async def test_the_same_shape_without_stalls_or_speculation(tmp_path: Path) -> None:
    r = await _run(AnswerShape(), None, tmp_path)  # 19 gaps of 20 ms
    assert r["decode_stall_share"] == pytest.approx(0.0, abs=STALL_ABS)
    for key in ("spec_acceptance_length", "spec_acceptance_rate", "spec_acceptance_by_position", "spec_draft_length"):
        assert r.get(key) is None, key
    assert r["server_decode_s_mean"] == pytest.approx(0.38)
