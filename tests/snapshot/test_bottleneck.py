"""The simulated engine says when it is the bottleneck: its lag gauge and lost-time counter, read by the
scraper and turned into one sentence."""

from __future__ import annotations

from agentx_tui.snapshot import ClientReading, Figures, RunInfo, Snapshot
from agentx_tui.snapshot.bottleneck import schedule_behind, simulator_behind
from agentx_tui.telemetry import MetricsReader
from tests.telemetry.pages import counters_only


def _page(prompt: float, lag: float, lost: float) -> str:
    return counters_only(prompt, prompt / 10) + (
        "# TYPE agentx_sim:engine_lag_seconds gauge\n"
        f'agentx_sim:engine_lag_seconds{{engine="0",model_name="m"}} {lag}\n'
        "# TYPE agentx_sim:engine_lost_seconds counter\n"
        f'agentx_sim:engine_lost_seconds_total{{engine="0",model_name="m"}} {lost}\n'
    )


def test_a_simulator_that_keeps_up_is_not_named_and_one_that_drops_time_is() -> None:
    reader = MetricsReader("http://sim:1", flavor="sim")
    first = reader.read(_page(100, 0.004, 0.0), 0.0)
    assert first.sim_lag_s == 0.004 and first.sim_lost_s is None  # no previous scrape: no delta yet
    calm = reader.read(_page(200, 0.006, 0.0), 1.0)
    assert calm.sim_lost_s == 0.0
    assert (
        simulator_behind(Snapshot(seq=1, time=1.0, elapsed_s=1.0, run=RunInfo(target="t"), endpoints=(calm,))) is None
    )
    behind = reader.read(_page(300, 0.35, 1.5), 2.0)
    why = simulator_behind(Snapshot(seq=2, time=2.0, elapsed_s=2.0, run=RunInfo(target="t"), endpoints=(behind,)))
    assert why is not None and "dropped 1.50 s of simulated GPU time" in why and "simulator" in why


def test_a_real_server_has_no_simulator_figures() -> None:
    figures = MetricsReader("http://vllm:1").read(counters_only(100, 10), 0.0)
    assert figures.sim_lag_s is None and figures.sim_lost_s is None


def _with_client(client: ClientReading | None, users: int = 1) -> Snapshot:
    return Snapshot(seq=1, time=1.0, elapsed_s=1.0, run=RunInfo(target="t", users=users), client=client)


def test_too_few_users_for_a_timed_replay_is_said_with_how_many_would_do() -> None:
    late = ClientReading(
        run=Figures(schedule_lag_p90_s=2.4, schedule_behind=True, schedule_users_needed=12, e2e_p90_s=2.7)
    )
    why = schedule_behind(_with_client(late, users=1))
    assert why is not None
    assert "2.40 s after they were due" in why and "1 user(s) are too few" in why and "about 12 users" in why
    kept = late.model_copy(update={"run": late.run.updated(schedule_behind=False)})
    assert schedule_behind(_with_client(kept)) is None
    assert schedule_behind(_with_client(ClientReading())) is None  # nothing scheduled
    assert schedule_behind(_with_client(None)) is None  # observing only
