"""Where the North Star's time went, measured end to end (docs/metrics.md, "Where the time went"):
real requests through the load client's Driver over loopback HTTP against a server whose every answer
has a known shape (tests/helpers/shaped_server.py), read as the live window, the run and the report
(with `--check`) read them.

The shape of the figures' own example: the first token 0.4 s after the request, then 19 gaps of
20 ms but one of 0.2 s: 20 tokens, so r_i = 0.96 s / 20, of which 0.4 / 0.96 = 0.417 came before the
first token; the long gap is 0.18 s over its request's median gap, of a 0.56 s decode span: 0.321.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from agentx_tui.engine import ServerInfo
from agentx_tui.load import Driver, LoadSettings
from agentx_tui.load.workload.spec import parse_workload
from agentx_tui.report import Report, ReportBuilder, evaluate_checks, parse_check
from agentx_tui.snapshot import ClientReading, Figures, RunInfo, Snapshot
from tests.helpers.shaped_server import AnswerShape, ShapedServer
from tests.helpers.waiting import until

# A busy machine's late timers move an event by a few ms (the shape's deadlines are absolute, so they
# do not add up): the shares stay within these. A wrong rule is further off: TTFT over the decode part
# 0.71, stalls over E2E 0.19, a whole stalled gap 0.36, every gap 1, the first byte as TTFT ~0.
SHARE_ABS = 0.03
STALL_ABS = 0.025
REQUESTS = 12


@pytest.fixture
async def shaped() -> AsyncIterator[ShapedServer]:
    server = await ShapedServer().start()
    yield server
    await server.close()


async def _measure(server: ShapedServer, shape: AnswerShape) -> ClientReading:
    """`REQUESTS` answers of `shape` through the Driver (4 users); the client's figures then."""
    server.shape = shape
    workload = parse_workload(
        {
            "shared_prefix_tokens": 50,
            "first_message_tokens": 20,
            "steps": 3,
            "output_tokens": 20,
            "tool_result_tokens": 20,
            "tool_latency_s": 0.01,
        },
        source="test",
        default_name="test",
    )
    info = ServerInfo(server.url, "fake", max_model_len=server.max_model_len)
    driver = Driver(workload, [info], LoadSettings(users=4))
    await driver.start()
    try:
        await until(lambda: driver.figures(time.monotonic()).totals.requests_completed >= REQUESTS, timeout=60)
        return driver.figures(time.monotonic())
    finally:
        await driver.stop()


def _both(figures: ClientReading) -> tuple[Figures, Figures]:
    return figures.window, figures.run


async def test_the_first_token_share_and_the_stall_share_of_a_known_shape(shaped: ShapedServer) -> None:
    figures = await _measure(shaped, AnswerShape.stalled())
    for part in _both(figures):
        assert part.north_star_ttft_share == pytest.approx(0.4 / 0.96, abs=SHARE_ABS)
        assert part.median_ttft_share == pytest.approx(0.4 / 0.96, abs=SHARE_ABS)
        assert part.north_star_stall_share == pytest.approx(0.18 / 0.96, abs=STALL_ABS)
        assert part.decode_stall_share == pytest.approx(0.18 / 0.56, abs=STALL_ABS)
        assert part.decode_stalls_per_request == pytest.approx(1.0, abs=0.5)
        assert part.output_tokens_p50 == 20
        assert part.ttft_s_mean is not None and 0.4 <= part.ttft_s_mean < 0.4 + SHARE_ABS
    # The report carries them, and `--check` reads them.
    report = _report(figures)
    assert report.decode_stall_share == figures.run.decode_stall_share
    assert report.north_star_ttft_share == figures.run.north_star_ttft_share
    (result,) = evaluate_checks([parse_check("decode_stall_share <= 0.1")], report)
    assert not result.passed


async def test_the_same_shape_without_the_long_gap_has_no_stall(shaped: ShapedServer) -> None:
    figures = await _measure(shaped, AnswerShape(gaps_s=(0.02,) * 19))
    for part in _both(figures):
        assert part.decode_stall_share is not None and part.decode_stall_share < STALL_ABS
        assert part.north_star_ttft_share == pytest.approx(0.4 / 0.78, abs=SHARE_ABS)
    (result,) = evaluate_checks([parse_check("decode_stall_share <= 0.1")], _report(figures))
    assert result.passed


async def test_speculative_events_of_one_to_four_tokens_at_steady_steps_have_no_stall(shaped: ShapedServer) -> None:
    """Each engine step's event holds 4, 4, 4 or 1 tokens (drafts accepted, one rejected), 20 ms apart:
    65 tokens in 20 events. Each event's gap counts once: no stall."""
    shape = AnswerShape(gaps_s=(0.02,) * 19, tokens_per_event=(4, 4, 4, 1))
    assert shape.output_tokens == 65
    figures = await _measure(shaped, shape)
    for part in _both(figures):
        assert part.decode_stall_share is not None and part.decode_stall_share < STALL_ABS
        assert part.output_tokens_p50 == 65  # the server's count: several tokens an event
        assert part.north_star_ttft_share == pytest.approx(0.4 / 0.78, abs=SHARE_ABS)


async def test_a_read_of_several_events_is_neither_a_stall_nor_zero_gaps(shaped: ShapedServer) -> None:
    """Steady 20 ms steps, but four events reach the client in one read 80 ms after the one before (a
    gap of 0 puts them in one write): four gaps of 20 ms. Read as one 80 ms gap, or as 80 ms and three
    of 0, it would be a stall of 60 ms in a 0.38 s span (a share of 0.16)."""
    shape = AnswerShape(gaps_s=(0.02,) * 10 + (0.08, 0.0, 0.0, 0.0) + (0.02,) * 5)
    figures = await _measure(shaped, shape)
    for part in _both(figures):
        assert part.decode_stall_share is not None and part.decode_stall_share < STALL_ABS
        assert part.decode_stalls_per_request is not None and part.decode_stalls_per_request < 0.5


def _report(client: ClientReading) -> Report:
    """The report of a run whose client figures are `client` (two ticks, a second apart)."""
    builder = ReportBuilder()
    for seq in (1, 2):
        builder.add(
            Snapshot(seq=seq, time=1000.0 + seq, elapsed_s=float(seq), run=RunInfo(target="test"), client=client)
        )
    return builder.build()
