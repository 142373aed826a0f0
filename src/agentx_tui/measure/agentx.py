"""What AgentX's rules measure of the client's own requests (docs/sweeps.md, "AgentX validity"), for the
whole run (`ClientStats`) and a sweep point's window (`WindowBook`) alike, each rule's figure in one
place:

- requests over the model's context (`ContextOverflows`): refused by the server for their length
  (`context_overflow`), or not sent because they would not fit (a session replay's call, a trace's
  request, a synthetic agent's next step); their share of every request the users wanted to send;
- output coverage (`output_coverage`): how far into a window output kept arriving, the window's start to
  its last output token over its length (AIPerf's `profile_metric_duration_coverage`);
- warm-up requests per user (`fewest_requests`): the fewest requests any of a point's users completed
  before its window opened.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agentx_tui.measure.record import Failed
from agentx_tui.measure.sse import OVER_CONTEXT


@dataclass(slots=True)
class ContextOverflows:
    """Requests over the model's context, counted as they fail (O(1) each)."""

    requests: int = 0  # over the context, refused or never sent
    not_sent: int = 0  # of them, those never sent (they are in no other count)

    def count(self, failed: Failed) -> None:
        """`failed`, when it is one: a refused request is final (a failure too), one not sent is not."""
        if failed.kind in OVER_CONTEXT:
            self.requests += 1
            if not failed.final:
                self.not_sent += 1

    def figures(self, completed: int, failed: int) -> dict[str, int | float | None]:
        """`context_overflow_requests`, and their share of every request wanted: completed + failed (a
        refused request among them) + those not sent. None when no request was wanted."""
        wanted = completed + failed + self.not_sent
        return {
            "context_overflow_requests": self.requests,
            "context_overflow_share": self.requests / wanted if wanted else None,
        }


def output_coverage(start: float, end: float, last_output_at: float | None) -> float | None:
    """(last output token − start) ÷ (end − start), at most 1: how far into the window `start`…`end` output
    kept arriving; 0 when none came, None for a window of no length."""
    span = end - start
    if not span > 0:
        return None
    if last_output_at is None:
        return 0.0
    return max(0.0, min(1.0, (last_output_at - start) / span))


def fewest_requests(completed_by_user: Iterable[int], users: int) -> int:
    """The fewest requests any of `users` user slots completed: the `users`-th highest count, or 0 when
    fewer slots than that completed any (a slot that completed none has 0)."""
    counts = sorted(completed_by_user, reverse=True)
    if users <= 0:
        return 0
    return counts[users - 1] if len(counts) >= users else 0
