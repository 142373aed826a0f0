"""A SIGTERM (or SIGHUP) mid-session leaves a readable session file with every completed call."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from agentx_tui.load.workload.sessions import load_session_set
from tests.proxy.calls import SYSTEM, assistant, tool, user
from tests.proxy.upstream import Upstream, chat_ids


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
async def test_a_signal_mid_session_leaves_every_completed_call_on_disk(
    tmp_path: Path, upstream: Upstream, sig: signal.Signals
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.proxy.proxy_process", upstream.url, str(tmp_path)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://")
        history = [SYSTEM, user("fix the build " * 20)]
        sent = []
        async with aiohttp.ClientSession() as http:
            for step in range(3):
                body = {"messages": history, "stream": True, "stream_options": {"include_usage": True}}
                async with http.post(f"{url}/v1/chat/completions", json=body) as resp:
                    assert b"[DONE]" in await resp.read()
                sent.append(list(history))
                history += [assistant(f"step {step}"), tool("ok " * 30)]
            # A long call is still streaming when the signal comes, and outlasts the proxy's grace.
            upstream.gap_s, upstream.tokens = 1.0, 30
            body = {"messages": history, "stream": True}
            async with http.post(f"{url}/v1/chat/completions", json=body) as resp:
                await resp.content.readany()
                started = time.monotonic()
                proc.send_signal(sig)
                code = await asyncio.to_thread(proc.wait, 20)
        assert code == 128 + sig
        assert time.monotonic() - started < 10  # close() is quick: a grace for open answers, then out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    (path,) = tmp_path.glob("*.json")
    data = json.loads(path.read_bytes())
    assert [r["in"] for r in data["requests"]] == [len(chat_ids(m)) for m in sent]
    assert all(r["hash_ids"] for r in data["requests"][1:])
    assert data["totals"]["failed_calls_left_out"] == 1  # the call cut after the grace
    assert load_session_set(tmp_path).trees[0].call_count == 3
