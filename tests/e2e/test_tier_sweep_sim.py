"""On the built-in simulated engine, end to end (docs/sweeps.md, "A tier sweep"): `--sweep tiers` probes
before it measures, labels every probe, keeps them out of the points and the frontier, and its report
carries its GPU time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.headless_sim import finish_headless, start_headless
from tests.helpers.workloads import FIXED

pytestmark = [pytest.mark.slow, pytest.mark.long]


def _sweep(folder: Path, name: str, workload: str, *args: str) -> tuple[dict[str, Any], str]:
    return finish_headless(folder, name, start_headless(folder, name, workload, *args))


def test_a_tier_sweep_probes_then_measures_only_beside_the_crossings(tmp_path: Path) -> None:
    data, stdout = _sweep(
        tmp_path, "tiers", FIXED, "--sweep", "tiers", "-u", "4", "--tiers", "100", "--warmup", "4",
        "--probe-duration", "3", "--point-duration", "6",
    )  # fmt: skip
    probes, points = data["probes"], data["points"]
    assert probes and points, stdout[-2000:]
    # Every probe labelled with what it was for; its window, its p90 on both axes, its throughput.
    for probe in probes:
        assert probe["purpose"].startswith(("bracketing tier", "tier ")), probe
        assert probe["duration_s"] >= 2.5 and probe["e2e_interactivity_p90_tokens_per_s"] > 0
        assert probe["interactivity_p90_tokens_per_s"] > 0 and probe["total_tokens_per_s_per_gpu"] > 0
    # No probe is a point or on the frontier: the points' windows are their own, the frontier indexes points.
    probe_windows = {p["window_start_s"] for p in probes}
    assert not probe_windows & {p["window_start_s"] for p in points}
    assert set(data["frontier"]) <= set(range(len(points)))
    assert all(p["duration_s"] >= 5.5 for p in points)
    # Tier 100 is crossed on this profile: a full point on each side of it, and its read from them alone.
    x = sorted(p["e2e_interactivity_p90_tokens_per_s"] for p in points)
    assert x[0] < 100 <= x[-1], x
    assert data["total_tokens_per_s_per_gpu_at_100"] is not None
    assert data["sweep_gpu_seconds"] > 0 and "probes" in data["sweep_stop_reason"]
    assert "probes (short windows that found where the tiers cross; not points):" in stdout
    markdown = (tmp_path / "tiers.md").read_text()
    assert "The probes (`probes`)" in markdown and "sweep_gpu_seconds" in markdown
