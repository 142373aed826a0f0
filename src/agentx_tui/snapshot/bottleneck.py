"""Who limits the figures, when it is not the server under test: the load generator (its own health,
load/sending/health.py; too few users for a timed replay's schedule, measure/schedule.py) or the
built-in simulated engine running out of CPU (docs/sim.md)."""

from __future__ import annotations

from agentx_tui.snapshot.model import Snapshot

# Tokens a simulator hands out this late are late for every user: its figures are its own limit.
SIM_LAG_LIMIT_S = 0.1


def simulator_behind(snap: Snapshot) -> str | None:
    """Why the simulated engine is the bottleneck now, in words; None when it keeps up (or is real)."""
    for e in snap.endpoints:
        lost = e.sim_lost_s or 0.0
        lag = e.sim_lag_s or 0.0
        if lost > 0 or lag >= SIM_LAG_LIMIT_S:
            what = f"dropped {lost:.2f} s of simulated GPU time" if lost > 0 else f"runs {lag * 1000:.0f} ms behind"
            return (
                f"simulated engine saturated: {e.url} {what} (it has too little CPU for this load); "
                "the figures are limited by the simulator, not the modelled GPU"
            )
    return None


def schedule_behind(snap: Snapshot) -> str | None:
    """Why a timed replay's users fell behind its schedule, in words; None when they keep it (or
    nothing is scheduled). The rule and the estimate: docs/metrics.md, "Honest clocks"."""
    client = snap.client
    run = client.run if client is not None else None
    if run is None or run.schedule_behind is not True or run.schedule_lag_p90_s is None:
        return None
    e2e = run.e2e_p90_s
    against = f" (E2E p90 {e2e:.2f} s)" if e2e is not None else ""
    users = snap.run.users
    needed = run.schedule_users_needed
    keep = f"; about {needed} users would keep the schedule" if needed is not None else ""
    return (
        f"timed replay behind schedule: requests went out {run.schedule_lag_p90_s:.2f} s after they were "
        f"due (p90){against}: {users} user(s) are too few{keep}. TTFT and E2E count from when each was due"
    )
