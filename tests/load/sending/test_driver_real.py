"""The driver against the real vLLM engine (CPU build, tiny model, 4096-token context, 128-token blocks).

One agent workload with 8 users runs for a few seconds, until every user has grown a session to the
context limit; then the driver is drained and the tests read what it recorded, next to the server's own
/metrics counters taken before and after. The run is shared by the tests of this module (about 10 s).

The shared server's prefix cache may hold other runs' text, so the driver's seed (which decides all of
its text) comes from the clock: the cache figures then come from this run's own prompts only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass

import httpx
import pytest

from agentx_tui.engine import probe_server
from agentx_tui.load import Driver, LoadSettings, Workload
from agentx_tui.load.workload.spec import parse_workload
from agentx_tui.measure import RequestRecord
from agentx_tui.snapshot import ClientReading, EndpointTotals
from agentx_tui.telemetry import EndpointMonitor
from tests.helpers.waiting import until

pytestmark = pytest.mark.vllm

MODEL = "agentx-tiny"
MAX_MODEL_LEN = 4096  # the tiny model's context, as `vllm_url` serves it
BLOCK_SIZE = 128  # the CPU build's KV block
USERS = 8
MIN_RUN_S = 4.0
RUN_DEADLINE_S = 60.0  # usually ~10 s; slack for a busy machine
COUNTER_DEADLINE_S = 10.0

# Sessions grow ~300 tokens a step from ~1.2 K, so each reaches the 4096-token context in about ten
# steps (a few seconds) and must end cleanly there. With the tiny model's chat template (a system
# message costs 4 tokens around its content, the next user header 2), a 1019-token shared prompt ends
# the system message one token before the 1024 block boundary, inside the shared user header: the
# ceiling must count that header, or the server's cache beats the "perfect" one.
WORKLOAD = {
    "shared_prefix_tokens": 1019,
    "unique_prefix_tokens": {"dist": "uniform", "min": 20, "max": 80},
    "first_message_tokens": 60,
    "steps": 40,
    "output_tokens": {"dist": "uniform", "min": 16, "max": 48},
    "tool_result_tokens": {"dist": "uniform", "min": 150, "max": 350},
    "tool_latency_s": 0.02,
}


@dataclass(frozen=True)
class Run:
    records: Sequence[RequestRecord]
    figures: ClientReading
    server: EndpointTotals  # counter deltas over the run
    calibration_notes: Sequence[str]
    drained: bool


async def _run(url: str) -> Run:
    workload: Workload = parse_workload(WORKLOAD, source="test_driver_real", default_name="real-agent")
    driver = Driver(
        workload, [await probe_server(url)], LoadSettings(users=USERS, seed=time.time_ns() % (1 << 31))
    )  # max_model_len and block size are read from the server
    async with httpx.AsyncClient() as client:
        monitor = EndpointMonitor(url, client=client, window_s=600, timeout_s=5)
        before = await monitor.sample(0.0)
        assert before.up, before.status
        await driver.start()
        try:
            started = time.monotonic()
            while time.monotonic() - started < RUN_DEADLINE_S:
                totals = driver.figures(time.monotonic()).totals
                if time.monotonic() - started >= MIN_RUN_S and totals.sessions_ended_by_context >= USERS:
                    break
                await asyncio.sleep(0.1)
            drained = await driver.drain(timeout_s=30)
        finally:
            await driver.stop()
        sent = driver.figures(time.monotonic()).totals
        # The engine publishes its counters a moment after the last token: poll until they arrive.
        deadline = time.monotonic() + COUNTER_DEADLINE_S
        while True:
            server = (await monitor.sample(time.monotonic())).totals
            arrived = (
                server.generation_tokens == sent.output_tokens and server.requests_finished == sent.requests_completed
            )
            if arrived or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
    return Run(driver.records(), driver.figures(time.monotonic()), server, driver.calibration_notes, drained)


@pytest.fixture(scope="module")
def run(vllm_url: str) -> Run:
    return asyncio.run(_run(vllm_url))


def test_the_run_sends_load_and_drains(run: Run) -> None:
    totals = run.figures.totals
    assert run.drained
    assert totals.requests_completed == len(run.records) >= 4 * USERS
    assert len({r.user for r in run.records}) == USERS


def test_prompts_hit_the_intended_token_counts(run: Run) -> None:
    for r in run.records:
        assert r.prompt_tokens is not None and r.expected_prompt_tokens is not None
        assert abs(r.prompt_tokens - r.expected_prompt_tokens) <= 0.02 * r.expected_prompt_tokens, r
    # The tiny model's byte-level tokenizer adds up word by word: calibration says exact, and is.
    assert not run.calibration_notes
    assert all(r.prompt_tokens == r.expected_prompt_tokens for r in run.records)


def test_output_lengths_are_exact(run: Run) -> None:
    assert all(r.output_tokens == r.expected_output_tokens for r in run.records)


def test_client_hit_rate_is_high_and_within_the_ceiling(run: Run) -> None:
    totals = run.figures.totals
    assert totals.cached_tokens_reported
    hit_rate = totals.cached_prompt_tokens / totals.prompt_tokens
    ceiling = run.figures.run.prefix_cache_hit_rate_ceiling
    assert ceiling is not None
    assert 0.5 <= hit_rate <= ceiling
    # Request by request too; both sides count whole 128-token blocks (the size read from /metrics).
    for r in run.records:
        assert r.cached_tokens is not None and r.cached_tokens <= r.ceiling_tokens, r
        assert r.ceiling_tokens % BLOCK_SIZE == 0


def test_sessions_end_cleanly_at_the_context_limit(run: Run) -> None:
    totals = run.figures.totals
    assert totals.sessions_ended_by_context >= USERS
    # Each ended at a step that would not fit: never sent, counted as a request over the context.
    assert totals.requests_failed == 0
    assert totals.errors_by_kind == {"agent_step_too_long": totals.sessions_ended_by_context}
    overflow = run.figures.run.context_overflow_requests, run.figures.run.context_overflow_share
    wanted = totals.requests_completed + totals.sessions_ended_by_context
    assert overflow == (totals.sessions_ended_by_context, totals.sessions_ended_by_context / wanted)
    assert all(r.error is None and r.attempts == 1 for r in run.records)
    longest = max((r.prompt_tokens or 0) + r.expected_output_tokens for r in run.records)
    # Sessions went close to the limit (a step adds at most ~400 tokens) and never past it.
    assert MAX_MODEL_LEN - 450 < longest <= MAX_MODEL_LEN


def test_server_counters_match_the_driver_exactly(run: Run) -> None:
    totals, server = run.figures.totals, run.server
    # Another client of a shared server would show up here first (more requests than ours).
    assert server.requests_finished == totals.requests_completed, "the server saw requests of another client"
    assert server.prompt_tokens == totals.prompt_tokens
    assert server.generation_tokens == totals.output_tokens
    assert server.cached_prompt_tokens == totals.cached_prompt_tokens


async def _server_in_flight(monitor: EndpointMonitor) -> float:
    figures = await monitor.sample(time.monotonic())
    assert figures.running is not None and figures.waiting is not None, figures.status
    return figures.running + figures.waiting


async def test_users_go_from_4_to_8_to_2_and_the_server_follows(vllm_url: str) -> None:
    workload = parse_workload(WORKLOAD, source="test_driver_real", default_name="real-agent")
    driver = Driver(workload, [await probe_server(vllm_url)], LoadSettings(users=4, seed=time.time_ns() % (1 << 31)))
    async with httpx.AsyncClient() as client:
        monitor = EndpointMonitor(vllm_url, client=client, window_s=600, timeout_s=5)
        await driver.start()
        try:
            await until(lambda: len({r.user for r in driver.records()}) == 4, 20, what="4 users answered", every_s=0.05)

            driver.set_users(8)
            await until(lambda: len({r.user for r in driver.records()}) == 8, 20, what="8 users answered", every_s=0.05)
            assert [s.user for s in driver.rows()] == list(range(8))
            busiest = 0.0
            deadline = time.monotonic() + 10
            while busiest <= 4 and time.monotonic() < deadline:
                busiest = max(busiest, await _server_in_flight(monitor))
                await asyncio.sleep(0.05)
            assert busiest > 4, "the server never had more requests in flight than the first 4 users send"

            driver.set_users(2)
            assert driver.users == 2
            # Users 2-7 leave after the request they have on the wire; then only 0 and 1 send.
            shrunk_at = time.monotonic()
            await until(lambda: {s.user for s in driver.rows()} == {0, 1}, 20, what="sessions 2-7 ended", every_s=0.05)
            settled = time.monotonic()
            await until(
                lambda: sum(r.sent_at > settled for r in driver.records()) >= 6, 20, what="2 users go on", every_s=0.05
            )
            assert {r.user for r in driver.records() if r.sent_at > shrunk_at} <= {0, 1}
            await asyncio.sleep(0.5)  # the engine publishes its gauges a step later
            assert max([await _server_in_flight(monitor) for _ in range(5)]) <= 2
        finally:
            assert await driver.drain(timeout_s=30)
            await driver.stop()
    assert driver.figures(time.monotonic()).totals.requests_failed == 0
