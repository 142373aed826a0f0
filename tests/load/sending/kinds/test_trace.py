"""The loop of `kind: trace` against the fake server: a timed replay's clocks (docs/metrics.md, "Honest
clocks"): TTFT and E2E count from when a request was due, and the lag says how late the users were."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from agentx_tui.engine import ServerInfo
from agentx_tui.load import Driver, LoadSettings, load_workload
from tests.helpers.waiting import until
from tests.load.fake_openai import FakeServer

ANSWER_S = 0.3  # the fake server's time to the first token: what each request holds a user for


def _trace(tmp_path: Path, timestamps_ms: list[int]) -> Path:
    """A Mooncake trace of small requests (4 blocks of 16 tokens, 4 tokens out), at `timestamps_ms`."""
    rows = [
        {"timestamp": ms, "input_length": 64, "output_length": 4, "hash_ids": [i * 10 + b for b in range(4)]}
        for i, ms in enumerate(timestamps_ms)
    ]
    lines = [json.dumps(row) for row in rows]
    (tmp_path / "burst.jsonl").write_text("\n".join(lines) + "\n")
    spec = tmp_path / "trace.yaml"
    spec.write_text(f"kind: trace\ntrace: {{path: {tmp_path / 'burst.jsonl'}, mode: timed, block_tokens: 16}}\n")
    return spec


async def _replay(fake: FakeServer, spec: Path, users: int, *, pause_s: float = 0.0) -> Driver:
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len)
    d = Driver(load_workload(str(spec)), [info], LoadSettings(users=users, block_size=4))
    await d.start()
    if pause_s:
        d.pause()
        await asyncio.sleep(pause_s)
        d.resume()
    await until(lambda: d.finished, timeout=30, what="the trace played to its end")
    await d.stop()
    return d


async def test_a_burst_replayed_by_one_user_counts_from_when_it_was_due(fake: FakeServer, tmp_path: Path) -> None:
    # Ten requests due at the same moment, one user: they go out one after another, an answer apart.
    fake.prefill_delay_s = ANSWER_S
    d = await _replay(fake, _trace(tmp_path, [1000] * 10), users=1)
    late = d.figures(time.monotonic())
    assert late.totals.requests_completed == 10
    # The k-th request waited k answers (k = 0 … 9); the histogram's p90 is the 9th of 10: 8 answers.
    lags = sorted(r.sent_at - r.due_at for r in d.records() if r.due_at is not None)
    assert len(lags) == 10 and lags[8] >= 8 * ANSWER_S
    assert late.run.schedule_lag_p90_s == pytest.approx(lags[8], rel=0.02)
    assert late.run.schedule_lag_p90_s < 8 * ANSWER_S * 1.5  # nothing else held them back for long
    assert late.run.schedule_lag_p50_s is not None and late.run.schedule_lag_p99_s is not None
    # TTFT counts the wait: its p90 is about nine answers, not the one answer the server took.
    assert late.run.ttft_p90_s is not None and late.run.ttft_p90_s >= 8 * ANSWER_S
    assert late.run.e2e_p90_s is not None and late.run.e2e_p90_s >= late.run.ttft_p90_s
    # r_i counts from when it was due as E2E does: every answer has 4 tokens, so 1 / its p90 is E2E's p90 / 4.
    assert late.run.e2e_interactivity_p90_tokens_per_s == pytest.approx(4 / late.run.e2e_p90_s, rel=0.05)
    assert late.run.schedule_behind is True
    # All ten were due at once: the schedule wanted ten users at once (a fifth more for headroom).
    assert late.run.schedule_users_needed is not None and late.run.schedule_users_needed >= 10


async def test_the_same_burst_with_enough_users_goes_out_on_time(fake: FakeServer, tmp_path: Path) -> None:
    # A first request brings the users up; the burst of ten comes half a second later, to ten users.
    fake.prefill_delay_s = ANSWER_S
    d = await _replay(fake, _trace(tmp_path, [0] + [500] * 10), users=10)
    on_time = d.figures(time.monotonic())
    assert on_time.totals.requests_completed == 11
    # Late by less than one answer: no request waited for another's answer (however busy the machine).
    assert on_time.run.schedule_lag_p90_s is not None and on_time.run.schedule_lag_p90_s < ANSWER_S
    assert on_time.run.ttft_p90_s is not None and on_time.run.ttft_p90_s < 2 * ANSWER_S
    assert on_time.run.schedule_behind is False


async def test_time_spent_paused_is_not_lag(fake: FakeServer, tmp_path: Path) -> None:
    # Due 0.2 s apart; the load is paused for a second from the start: the schedule waits with it.
    spec = _trace(tmp_path, [0, 200, 400, 600, 800])
    figures = (await _replay(fake, spec, users=5, pause_s=1.0)).figures(time.monotonic())
    assert figures.totals.requests_completed == 5
    # Had the pause counted, every figure below would be a second or more.
    assert figures.run.schedule_lag_p99_s is not None and figures.run.schedule_lag_p99_s < 0.5
    assert figures.run.ttft_p99_s is not None and figures.run.ttft_p99_s < 0.5


async def test_a_closed_replay_is_not_scheduled(fake: FakeServer, tmp_path: Path) -> None:
    spec = _trace(tmp_path, [0, 0, 0])
    spec.write_text(spec.read_text().replace("mode: timed", "mode: closed"))
    figures = (await _replay(fake, spec, users=1)).figures(time.monotonic())
    assert figures.totals.requests_completed == 3
    assert figures.run.schedule_lag_p90_s is None and figures.run.schedule_users_needed is None
    assert figures.run.schedule_behind is None
