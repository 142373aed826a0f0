"""The proof of the capture: an agent loop on the official `openai` client, driven through the proxy
against the real tiny vLLM and captured, then replayed with `agentx-tui --attach <a fresh tiny vLLM>
-w DIR`, puts the same load on the server: prompt, cached and generated tokens within 2% of the
capture's totals, and the server's hit rate within 3 points of the capture's cached share.

What a replay cannot reproduce, measured here and printed:
- sharing below a 64-token block: a prompt that shares 150 tokens with an earlier one is recorded as
  sharing 2 blocks (128 tokens). The CPU build caches 128-token blocks, a multiple of 64, so it loses
  nothing of it; a server with 16-token blocks (vLLM's GPU default) would lose what is printed;
- sharing through generated tokens: the original server also caches the blocks that the model's own
  reply filled, which the next prompt repeats; a replay generates other text. That costs about one
  reply's tokens per call, so this agent keeps replies short against its prompts (~200:1, the AgentX
  corpus runs ~360:1) to fit the tiny model's 4,096-token context.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import aiohttp
import pytest

from agentx_tui.load.sending.calibrate import _common_prefix
from agentx_tui.load.workload.sessions import load_session_set
from agentx_tui.proxy import LiveProxy
from tests.proxy.agent import CallUsage, coding_agent

KEY = "sk-roundtrip-KEY-42424242"


async def _token_ids(url: str, calls: list[CallUsage]) -> list[list[int]]:
    async with aiohttp.ClientSession() as http:
        out = []
        for call in calls:
            async with http.post(f"{url}/tokenize", json={"messages": call.prompt}) as resp:
                out.append((await resp.json())["tokens"])
        return out


def _sharing(ids: list[list[int]]) -> list[int]:
    """Per call, the longest token prefix it shares with an earlier prompt of the tree."""
    return [max((_common_prefix(p, q) for q in ids[:i]), default=0) for i, p in enumerate(ids)]


@pytest.mark.vllm
@pytest.mark.slow
async def test_a_captured_agent_replays_with_the_same_server_load(
    tmp_path: Path, vllm_url: str, fresh_vllm_url: str
) -> None:
    folder = tmp_path / "capture"
    marker = f"mk{uuid.uuid4().hex[:10]}"
    proxy = LiveProxy(vllm_url, capture_dir=folder, model="agentx-tiny")
    await proxy.start()
    try:
        calls = await coding_agent(proxy.url, marker=marker, api_key=KEY)
    finally:
        await proxy.close()
    assert proxy.capture is not None
    capture_figures = proxy.capture.figures()
    # vLLM's /tokenize renders the chat template as its chat endpoint does: same count as the usage.
    assert capture_figures.tokenize_mismatches == 0 and capture_figures.calls_without_hash_ids == 0
    (path,) = folder.glob("*.json")
    blob = path.read_bytes()
    assert marker.encode() not in blob and KEY.encode() not in blob
    data = json.loads(blob)
    (tree,) = load_session_set(folder).trees
    assert tree.call_count == len(calls) and tree.subagent_count == 1
    totals = data["totals"]
    captured_in = totals["combined_tokens"]["input"]
    captured_out = totals["combined_tokens"]["output"]
    captured_cached = totals["cached_tokens"]
    assert captured_in == sum(c.prompt_tokens for c in calls)
    assert captured_cached == sum(c.cached_tokens or 0 for c in calls) and captured_cached > 0

    report = tmp_path / "replay.json"
    replay = subprocess.run(
        [sys.executable, "-m", "agentx_tui", "--attach", fresh_vllm_url, "-w", str(folder), "--headless",
         "--report", str(report), "-u", "1", "--sessions", "1", "--duration", "240"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stdout[-2000:] + replay.stderr[-2000:]
    endpoint = json.loads(report.read_text())["endpoints"][0]
    prompt, generated = endpoint["prompt_tokens"], endpoint["generation_tokens"]
    cached, hits = endpoint["cached_prompt_tokens"], endpoint["prefix_cache_hits"]
    queries = endpoint["prefix_cache_queries"]

    # How much prompt sharing whole 64-token blocks cannot express (from the prompts as sent).
    shared = _sharing(await _token_ids(vllm_url, calls))
    below_64 = sum(s - s // 64 * 64 for s in shared)
    lost_at_16 = sum(s // 16 * 16 - s // 64 * 64 for s in shared)
    lost_at_128 = sum(s // 128 * 128 - s // 64 * 64 // 128 * 128 for s in shared)
    print(
        f"\ncapture: {len(calls)} calls, in {captured_in}, out {captured_out}, cached {captured_cached} "
        f"({captured_cached / captured_in:.1%})\n"
        f"replay (server counters): prompt {prompt:.0f}, generated {generated:.0f}, cached {cached:.0f}, "
        f"hit rate {hits / queries:.1%}\n"
        f"shared prompt tokens below a 64-token block: {below_64} ({below_64 / captured_in:.2%} of the prompt "
        f"tokens); lost at the server's 128-token blocks: {lost_at_128}; a 16-token-block server would lose "
        f"{lost_at_16} ({lost_at_16 / captured_in:.2%}); cached lost in all: {captured_cached - cached:.0f}"
    )
    assert prompt == pytest.approx(captured_in, rel=0.02)
    assert generated == pytest.approx(captured_out, rel=0.02)
    assert cached == pytest.approx(captured_cached, rel=0.02)
    assert abs(hits / queries - captured_cached / captured_in) <= 0.03
    assert lost_at_128 == 0  # 128 is a multiple of 64
