"""`agentx-tui --proxy PORT -w none --capture DIR`, the real command against the built-in simulator: a
real agent's calls (the official `openai` client) show in the report, the users table and the capture,
and a SIGTERM mid-session leaves a readable capture with every completed call, no text and no key."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from openai import AsyncOpenAI

from agentx_tui.load import load_session_set
from tests.reliability._run import clean_env

CANARY = "canary-7d1e-never-on-disk"
KEY = "sk-proxy-run-key-5b2f90"
STEPS = 3


async def _agent(base_url: str) -> list[int]:
    """A session named by its header; returns each call's prompt tokens as the server counted them."""
    client = AsyncOpenAI(base_url=base_url, api_key=KEY)
    model = (await client.models.list()).data[0].id
    messages: list[dict[str, str]] = [{"role": "system", "content": f"{CANARY} you fix failing tests. " * 15}]
    prompts = []
    for step in range(STEPS):
        messages.append({"role": "user", "content": f"step {step}: the test output {CANARY} " * 12})
        stream = await client.chat.completions.create(
            model=model,
            messages=messages,  # type: ignore[arg-type]
            max_tokens=16,
            stream=True,
            stream_options={"include_usage": True},
            extra_headers={"X-Session-ID": "team-agent-1"},
        )
        text = []
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                text.append(chunk.choices[0].delta.content)
            if chunk.usage is not None:
                prompts.append(chunk.usage.prompt_tokens)
        messages.append({"role": "assistant", "content": "".join(text)})
    await client.close()
    return prompts


def _read_url(proc: subprocess.Popen[str]) -> str:
    assert proc.stderr is not None
    for line in proc.stderr:
        if "agents' base URL:" in line:
            return line.split("agents' base URL:", 1)[1].split()[0]
    raise AssertionError(f"the run never said where the proxy listens (exit {proc.wait()})")


@pytest.mark.slow
async def test_a_real_agent_through_the_proxy_is_reported_captured_and_flushed_on_sigterm(tmp_path: Path) -> None:
    capture, report, record = tmp_path / "capture", tmp_path / "r.json", tmp_path / "run.jsonl"
    argv = ["--proxy", "0", "-w", "none", "--headless", "--duration", "120", "--interval", "0.5"]
    argv += ["--capture", str(capture), "--report", str(report), "--record", str(record)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentx_tui", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(AGENTX_API_KEY=KEY),
        start_new_session=True,
    )
    try:
        url = await asyncio.to_thread(_read_url, proc)
        prompts = await _agent(url)
        await asyncio.sleep(1.2)  # two ticks: the report's last snapshot sees the calls
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 128 + signal.SIGTERM
    r = json.loads(report.read_text())
    assert r["partial"] is True and r["proxied_requests"] == STEPS and r["proxied_sessions"] == 1
    assert r["requests_completed"] == STEPS and r["captured_sessions"] == 1 and r["capture_dir"] == str(capture)
    assert r["proxy_added_ttft_p50_s"] is not None
    # Each prompt's split, known once the server tokenized it: the later calls resend the earlier ones,
    # which the simulator still holds (its cache is far larger than three short calls).
    assert r["prefix_reused_tokens"] > 0 and r["prefix_evicted_share"] == 0
    assert r["prefix_cache_hit_rate_ceiling"] > 0 and r["think_s_p50"] is not None
    assert r["client_cpu_us_per_token"] is None  # the client streamed no token of its own
    (row,) = [u for u in r["users_detail"] if u["real"]]
    assert row["requests"] == STEPS and row["label"] and row["prefix_hit_share"] == 1
    (path,) = capture.glob("*.json")
    assert path.stat().st_mode & 0o777 == 0o600
    data = json.loads(path.read_bytes())
    assert [c["in"] for c in data["requests"]] == prompts  # every completed call, as the server counted it
    assert load_session_set(capture).trees[0].call_count == STEPS  # `-w DIR` replays it
    for written in (*capture.iterdir(), report, record):
        text = written.read_text()
        assert CANARY not in text and KEY not in text and "team-agent-1" not in text, written
