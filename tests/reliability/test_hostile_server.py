"""A hostile server (tests/reliability/hostile.py): HTTP 500/429/400 bursts, malformed SSE lines,
streams that stop mid-way (cleanly, or by a cut connection), and a /metrics page of garbage or of
50 MB. agentx-tui counts every kind, keeps ticking every second, holds no 50 MB page in memory, and
recovers its figures when the page is sane again.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agentx_tui.recording import read_recording
from agentx_tui.telemetry._fetch import MAX_PAGE_BYTES
from agentx_tui.telemetry._parse import MAX_RELEVANT_LINES
from agentx_tui.telemetry.endpoint import MetricsReader
from tests.reliability._run import CliRun, max_gap, write_workload
from tests.reliability.hostile import HostileServer

SCRIPT = ("ok", "500", "500", "500", "ok", "429", "ok", "400", "malformed", "truncated", "ok", "dropped", "ok")
# A headless agentx-tui holds ~70 MiB; reading one 50 MB page whole (as bytes, then as text) would
# at least double that.
MAX_PEAK_RSS_MIB = 140


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def _kv(line: str) -> str:
    return line.split()[6]  # the KV % column


@pytest.mark.slow
def test_bad_answers_and_bad_metrics_are_counted_and_survived(tmp_path: Path) -> None:
    report, record = tmp_path / "r.json", tmp_path / "rec.jsonl"
    # 50 MB /metrics from the start: the attach probe reads it too (once: the driver shares its result).
    with HostileServer(chat_script=SCRIPT, metrics_mode="huge") as server:
        args = ("--attach", server.url, "-w", str(write_workload(tmp_path)), "-u", "4", "--headless")
        args += ("--duration", "11", "--report", str(report), "--record", str(record))
        with CliRun(*args, stderr_path=tmp_path / "err.txt") as run:
            run.wait_ticks(2, 60)
            server.metrics_mode = "garbage"
            switched = time.monotonic()
            run.wait_for(lambda s: _kv(s) == "n/a", 5, after=switched + 1.0)
            run.wait_ticks(2, 5, lambda s: _kv(s) == "n/a")
            server.use_huge_metrics()
            run.wait_ticks(4, 8, lambda s: _kv(s) == "n/a")
            server.metrics_mode = "normal"
            run.wait_for(lambda s: _kv(s) == "25.0%", 5, after=time.monotonic())  # figures are back
            peak = _peak_rss_mib(run.pid)
            rc = run.wait(30)
            ticks = run.ticks()
    assert rc == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    assert max_gap(ticks) < 2.5, f"a tick stalled for {max_gap(ticks):.1f} s"
    assert peak < MAX_PEAK_RSS_MIB, f"agentx-tui peaked at {peak:.0f} MiB reading a 50 MB page"
    assert server.scrapes_by_mode["huge"] >= 3 and server.scrapes_by_mode["garbage"] >= 2
    assert set(server.chat_by_behaviour) == set(SCRIPT), server.chat_by_behaviour

    data = json.loads(report.read_text())
    errors = data["errors_by_kind"]
    for kind in ("http_500", "rate_limited", "http_400", "malformed_sse_line", "incomplete_stream", "connection"):
        assert errors.get(kind, 0) > 0, f"{kind} was not counted: {errors}"
    assert data["requests_completed"] > 0 and data["requests_failed"] > 0
    assert 0 < data["error_rate"] < 1

    statuses = {e.status for s in read_recording(record).snapshots for e in s.endpoints}
    assert any("MiB cap" in s for s in statuses), statuses  # the huge page was refused unread
    assert any(s.startswith("no metrics: unparseable") or "no vLLM" in s for s in statuses), statuses
    assert "up" in statuses


def test_a_page_of_endless_metric_lines_is_refused_not_parsed() -> None:
    # Just under the byte cap, every line one the scraper reads: parsing it all would hold the tick
    # for seconds (the parser is pure Python), so the page is refused once it passes the line cap.
    line = 'vllm:num_requests_running{engine="%d",model_name="m"} 1.0\n'
    page = "".join(line % i for i in range(130_000))
    assert len(page) < MAX_PAGE_BYTES
    reader = MetricsReader("http://x")
    started = time.thread_time()  # CPU time: what the parser spent, however busy the machine
    figures = reader.read(page, 1.0)
    took = time.thread_time() - started
    assert not figures.kv_cache_usage and figures.status.startswith("no metrics:")
    assert f"over {MAX_RELEVANT_LINES} metric lines" in figures.status
    assert took < 1.0, f"refusing the page took {took:.2f} s"
    # A real page of many engines still parses.
    many = "".join(line % i for i in range(MAX_RELEVANT_LINES // 2))
    assert reader.read(many, 2.0).running == MAX_RELEVANT_LINES // 2
