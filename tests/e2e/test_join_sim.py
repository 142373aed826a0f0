"""Users a sweep adds join midway (docs/sweeps.md, "Users that join"), end to end on the built-in
simulated engine: they bring a running load's contexts, not a fresh load's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.headless_sim import finish_headless, start_headless

pytestmark = [pytest.mark.slow, pytest.mark.long]


def test_users_a_sweep_adds_join_midway_and_bring_a_running_loads_contexts(tmp_path: Path) -> None:
    """docs/sweeps.md, "Users that join": coding-agent sessions (30-45 steps) on the simulator, one point
    of 8 users. From their first steps the users' contexts are a fresh load's, short; joined midway (the
    sweep's default) a running load's, about twice as long (measured: mean prompt 60.6 K against 26.6 K)."""
    point = ("--sweep", "users=8", "--max-think", "1", "--warmup", "30", "--point-duration", "10")
    runs = {
        join: start_headless(tmp_path, join, "", *point, *(("--join", join) if join == "start" else ()))
        for join in ("start", "midway")
    }
    try:
        fresh, _ = finish_headless(tmp_path, "start", runs["start"])
        joined, _ = finish_headless(tmp_path, "midway", runs["midway"])
    finally:
        for run in runs.values():
            run.kill()
    assert (fresh["sweep_join"], joined["sweep_join"]) == ("start", "midway")
    short, grown = fresh["points"][0]["mean_prompt_tokens"], joined["points"][0]["mean_prompt_tokens"]
    assert grown > 1.5 * short, (short, grown)
    assert "`sweep_join` midway" in (tmp_path / "midway.md").read_text()
