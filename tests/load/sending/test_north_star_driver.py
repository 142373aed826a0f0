"""The North Star measured end to end (docs/metrics.md): real requests through the load client's Driver
against a fake upstream whose answers have a fixed shape — the first token D after the request, then
one every G, N in all — give E2E-normalized interactivity N / (D + (N − 1)·G) and decode
interactivity 1 / G."""

from __future__ import annotations

import time

import pytest

from agentx_tui.engine import ServerInfo
from agentx_tui.load import Driver, LoadSettings
from agentx_tui.load.workload.spec import parse_workload
from tests.helpers.waiting import until
from tests.load.fake_openai import FakeServer

D, G, N = 0.8, 0.08, 10  # first token after D s, then one every G s, N tokens
# Long enough that a busy machine's late timers (tens of ms) stay inside the tolerance; a wrong rule
# (E2E without the prefill, or decode's 1 / G) is off by a factor of two.
REL = 0.1


async def test_e2e_normalized_and_decode_interactivity_of_a_fixed_shape(fake: FakeServer) -> None:
    fake.prefill_delay_s, fake.token_delay_s = D, G
    workload = parse_workload(
        {
            "shared_prefix_tokens": 50,
            "first_message_tokens": 20,
            "steps": 3,
            "output_tokens": N,
            "tool_result_tokens": 20,
            "tool_latency_s": 0.01,
        },
        source="test",
        default_name="test",
    )
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len)
    driver = Driver(workload, [info], LoadSettings(users=4, block_size=4))
    await driver.start()
    await until(lambda: driver.figures(time.monotonic()).totals.requests_completed >= 16, timeout=30)
    figures = driver.figures(time.monotonic())
    await driver.stop()
    north_star = N / (D + (N - 1) * G)  # 10 / 1.52 s ≈ 6.6 tok/s/user
    for p in (
        figures.window.e2e_interactivity_p50_tokens_per_s,
        figures.window.e2e_interactivity_p90_tokens_per_s,
        figures.run.e2e_interactivity_p50_tokens_per_s,
        figures.run.e2e_interactivity_p75_tokens_per_s,
        figures.run.e2e_interactivity_p90_tokens_per_s,
    ):
        assert p == pytest.approx(north_star, rel=REL)
    for p in (figures.window.interactivity_p90_tokens_per_s, figures.run.interactivity_p90_tokens_per_s):
        assert p == pytest.approx(1 / G, rel=REL)
    rows = [row for row in driver.rows(100) if row.requests]
    assert rows and all(r.e2e_interactivity_tokens_per_s == pytest.approx(north_star, rel=REL) for r in rows)
