"""What the client pays per token: CPU of every load process over the output tokens streamed."""

from __future__ import annotations

from agentx_tui.load.sending.health import ProcessHealth
from agentx_tui.load.spreading.client_health import RECENT_TICKS, HealthBook


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _process(cores: float) -> ProcessHealth:
    return ProcessHealth(cpu_cores=cores, loop_lag_p99_s=0.001, run_queue_s_per_s=0.0)


def test_cpu_per_token_is_every_process_cpu_over_the_tokens_streamed() -> None:
    clock = Clock()
    book = HealthBook(workers=2, clock=clock)
    clock.now += 1.0
    first = book.tick([_process(0.1)], queued=0, output_tokens=0)
    assert first.cpu_us_per_token is None and first.run_cpu_us_per_token is None  # no token yet: n/a
    clock.now += 2.0  # two processes at 0.3 + 0.2 of a core for 2 s: 1 s of CPU for 10,000 tokens
    second = book.tick([_process(0.3), _process(0.2)], queued=0, output_tokens=10_000)
    assert second.cpu_us_per_token == 1.1 / 10_000 * 1e6  # the recent ticks: 0.1 s + 1.0 s of CPU
    assert second.run_cpu_us_per_token == second.cpu_us_per_token


def test_the_live_figure_forgets_old_ticks_and_the_run_figure_keeps_them() -> None:
    clock = Clock()
    book = HealthBook(workers=1, clock=clock)
    tokens = 0
    for _ in range(RECENT_TICKS):  # an expensive start: 1 core for 1,000 tokens a second (1,000 µs each)
        clock.now += 1.0
        tokens += 1_000
        book.tick([_process(1.0)], queued=0, output_tokens=tokens)
    for _ in range(RECENT_TICKS):  # then cheap: 0.1 of a core for 10,000 tokens a second (10 µs each)
        clock.now += 1.0
        tokens += 10_000
        health = book.tick([_process(0.1)], queued=0, output_tokens=tokens)
    assert health.cpu_us_per_token is not None and abs(health.cpu_us_per_token - 10.0) < 1e-9
    run = (RECENT_TICKS * 1.0 + RECENT_TICKS * 0.1) / (RECENT_TICKS * 11_000) * 1e6
    assert health.run_cpu_us_per_token is not None and abs(health.run_cpu_us_per_token - run) < 1e-9
