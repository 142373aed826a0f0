"""Speculative decoding end to end, on the built-in simulated engine (docs/sim.md, "Speculative
decoding"): `agentx-tui --sim-spec 3:2.5` on the chat preset with 8 users. The acceptance length read
off the simulator's own /metrics over the run is the one asked, and decode interactivity p90 (the
report's) is well above the same run's without speculation; without `--sim-spec` the page has no spec
series at all. Each run is a few seconds of real time."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from agentx_tui.engine import free_port

pytestmark = [pytest.mark.slow]

DURATION_S = 8  # 8 chat users answer ~350 tokens each in 1-2 s: a dozen requests or more a run


@dataclass(frozen=True)
class Run:
    report: dict[str, object]
    pages: list[str]  # the simulator's /metrics, scraped every 0.2 s while it ran

    def counter(self, page: str, name: str) -> float:
        return sum(
            s.value
            for f in text_string_to_metric_families(page)
            if f.name == name
            for s in f.samples
            if s.name == f"{name}_total"
        )

    def acceptance_length(self) -> float:
        """1 + Δaccepted ÷ Δdrafts between the first and the last page scraped."""
        first, last = self.pages[0], self.pages[-1]
        drafts = self.counter(last, "vllm:spec_decode_num_drafts") - self.counter(first, "vllm:spec_decode_num_drafts")
        accepted = self.counter(last, "vllm:spec_decode_num_accepted_tokens") - self.counter(
            first, "vllm:spec_decode_num_accepted_tokens"
        )
        assert drafts > 1000, "too few drafts to read an acceptance length"
        return 1 + accepted / drafts


def chat_run(tmp_path: Path, name: str, *flags: str) -> Run:
    """A headless run on the simulator (its port chosen here, so that its page can be read meanwhile)."""
    port, report = free_port(), tmp_path / f"{name}.json"
    cmd = [
        sys.executable, "-m", "agentx_tui", "--sim", "--port", str(port), "-w", "chat", "-u", "8", "--seed", "3",
        "--headless", "--interval", "0.5", "--duration", str(DURATION_S), "--report", str(report), *flags,
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    pages: list[str] = []
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=2) as client:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):  # not listening yet, or already stopped
                pages.append(client.get("/metrics").text)
            time.sleep(0.2)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert len(pages) >= 2, "the simulator's page was never read"
    return Run(json.loads(report.read_text()), pages)


@pytest.mark.long
def test_the_simulator_speculates_at_the_acceptance_length_asked(tmp_path: Path) -> None:
    plain = chat_run(tmp_path, "plain")
    spec = chat_run(tmp_path, "spec", "--sim-spec", "3:2.5")
    assert spec.acceptance_length() == pytest.approx(2.5, abs=0.1)
    assert "vllm:spec_decode" not in plain.pages[-1] and "vllm:spec_decode" in spec.pages[-1]
    fast, slow = spec.report["interactivity_p90_tokens_per_s"], plain.report["interactivity_p90_tokens_per_s"]
    assert isinstance(fast, float) and isinstance(slow, float)
    assert fast >= 1.5 * slow, (fast, slow)
    assert spec.report["requests_completed"] and plain.report["requests_completed"]
