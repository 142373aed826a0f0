"""A timed replay's schedule as the users kept it (docs/metrics.md, "Honest clocks"): whether the
requests went out late enough to blame the client's users, and how many users would keep it.

A trace replayed at its timestamps (`mode: timed`) queues each request when it is due; a free user
sends it. Its TTFT and E2E count from when it was due, so a queue on the client is in them; the lag
(first attempt sent − due) says how much of them the client's queue was.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agentx_tui.measure.record import Completed

# Behind schedule: the p90 lag is over LAG_LIMIT_S, or over LAG_FLOOR_S and LAG_SHARE_OF_E2E of the
# p90 E2E. One second late is late whatever the answers' length; a tenth of the E2E is what a reader
# of the latency figures would notice; under 50 ms is the event loop's own jitter (load/sending/health.py).
LAG_LIMIT_S = 1.0
LAG_SHARE_OF_E2E = 0.1
LAG_FLOOR_S = 0.05
MIN_REQUESTS = 5  # no verdict on fewer scheduled requests than this
# Users needed = the schedule's arrival rate × the mean time a request holds a user (Little's law) ×
# this: Little's law gives the mean number busy, and arrivals bunch, so a fifth more keeps a queue off.
HEADROOM = 1.2


@dataclass(slots=True)
class ScheduleBook:
    """The scheduled requests of a run: how many, the span of their due times, how long they held a user."""

    requests: int = 0
    first_due: float = math.inf
    last_due: float = -math.inf
    hold_s: float = 0.0  # Σ (end of the body − first attempt sent)

    def count(self, done: Completed) -> None:
        if done.due_at is None or done.schedule_lag_s is None:
            return
        self.requests += 1
        self.first_due = min(self.first_due, done.due_at)
        self.last_due = max(self.last_due, done.due_at)
        self.hold_s += max(0.0, done.ended_at - (done.due_at + done.schedule_lag_s))

    def users_needed(self) -> int | None:
        """How many users would send every request when due (None: nothing scheduled yet).

        λ = requests / (span of the due times + one mean hold): the requests over the time they would
        be in the system if sent on time, so a burst due at one instant needs as many users as it has
        requests, and a long even trace gives its plain arrival rate. Users = ⌈λ × mean hold × HEADROOM⌉.
        The holds are those measured with too few users: a server slower under more load needs more."""
        if not self.requests:
            return None
        hold = self.hold_s / self.requests
        span = self.last_due - self.first_due + hold
        if span <= 0:
            return None
        return max(1, math.ceil(self.requests / span * hold * HEADROOM - 1e-9))


def behind_schedule(requests: int, lag_p90_s: float | None, e2e_p90_s: float | None) -> bool | None:
    """Whether the users fell behind the schedule (the rule above); None: too few scheduled requests."""
    if requests < MIN_REQUESTS or lag_p90_s is None:
        return None
    if lag_p90_s > LAG_LIMIT_S:
        return True
    return lag_p90_s > LAG_FLOOR_S and e2e_p90_s is not None and lag_p90_s > LAG_SHARE_OF_E2E * e2e_p90_s
