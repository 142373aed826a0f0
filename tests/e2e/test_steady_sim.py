"""On the built-in simulated engine, end to end (docs/sweeps.md, "Warm-up by the data"): a point's window
opens once its load is steady, later where contexts keep growing than on a fixed-shape workload, and a
point that never settles says so; every sweep report carries its GPU time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.headless_sim import finish_headless, start_headless
from tests.helpers.workloads import FIXED, GROWING

pytestmark = [pytest.mark.slow, pytest.mark.long]


def test_growing_contexts_open_the_window_later_than_a_fixed_shape_and_say_they_never_settled(tmp_path: Path) -> None:
    # Both at once, each on its own simulated engine: the growing one waits out its --warmup either way.
    # 90 s, not less: a busy machine's hiccup early in the fixed shape's series can keep MSER-5 cutting
    # at the first half's end for a few batches (CI once read it still drifting at 45 s, 9 batches).
    # Every session from its first step (`--join start`): users joining midway would bring grown contexts.
    point = ("--sweep", "users=8", "--warmup", "90", "--point-duration", "5", "--join", "start")
    fixed_run = start_headless(tmp_path, "fixed", FIXED, *point)
    growing_run = start_headless(tmp_path, "growing", GROWING, *point)
    try:
        fixed, _ = finish_headless(tmp_path, "fixed", fixed_run)
        growing, stdout = finish_headless(tmp_path, "growing", growing_run)
    finally:
        for run in (fixed_run, growing_run):
            run.kill()  # one that failed must not outlive the test (a no-op once it has ended)
    steady, drifting = fixed["points"][0], growing["points"][0]
    # The fixed shape: steady once MSER-5 can judge (4 batches of 5 s) and every user has its 10 requests.
    assert steady["steady"] is True and 20 <= steady["warmup_s"] < 90, steady["steady_reason"]
    assert steady["steady_reason"].startswith("steady after")
    # Growing contexts: still drifting when --warmup ran out, so the window opened then, and says why.
    assert drifting["warmup_s"] >= 90 > steady["warmup_s"]
    assert drifting["steady"] is False and "still drifting" in drifting["steady_reason"], drifting["steady_reason"]
    assert drifting["mean_prompt_tokens"] > 5 * steady["mean_prompt_tokens"]
    assert "not steady: 8 users" in stdout
    # Every sweep says its GPU time: its wall time × the simulated profile's one GPU.
    assert 0 < fixed["sweep_gpu_seconds"] < growing["sweep_gpu_seconds"] and fixed["gpus"] == 1
    assert fixed["probes"] is None  # a list or auto sweep probes nothing
