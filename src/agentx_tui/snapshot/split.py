"""Where the North Star's time went, as one bar (docs/metrics.md, "Where the time went"): the rule the
Markdown report draws it by, for the run and for each sweep point, for a pane to read it by too.

The bar is the Σ r_i of the requests that set the North Star (r_i at or above its p90) cut into shares
that add up to 1: the first token (`north_star_ttft_share`), the decode stalls (`north_star_stall_share`)
and decode, the rest. Where the servers export their request phases, the first token's share is cut
again into queued | prefill | outside the server (the network, the server's frontend, the client) in
the proportions of the means over the same window: `server_queue_s_mean`, `server_prefill_s_mean` and
`ttft_outside_server_s_mean` (the client's TTFT mean less those two). The servers' means are over every
request they finished, not the tail's alone, so the tail's first token is cut as the average request's
is. An outside part below 0 (the servers' means above the client's: not all of their requests were the
client's) counts as 0.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TailSplit:
    """The tail's Σ r_i as shares: `first_token` + `decode` + `stalls` = 1 (no stall part known: `stalls`
    None, and decode holds them); the first token cut into `queue` + `prefill` + `outside` where the servers
    export their phases (else those are None)."""

    first_token: float
    decode: float
    stalls: float | None = None
    queue: float | None = None
    prefill: float | None = None
    outside: float | None = None

    @property
    def phased(self) -> bool:
        """The first token is cut by the servers' phases."""
        return self.queue is not None


def _share(value: float) -> float:
    """A share within [0, 1]: the parts are ratios of sums, and float rounding must not leave a sliver below 0."""
    return min(max(value, 0.0), 1.0)


def tail_split(
    first_token: float | None,
    stalls: float | None,
    *,
    queue_s: float | None = None,
    prefill_s: float | None = None,
    outside_s: float | None = None,
) -> TailSplit | None:
    """The bar of a set of requests from its shares (`north_star_ttft_share`, `north_star_stall_share`)
    and, when all three are known, the servers' queue and prefill means and the TTFT outside them (seconds);
    None when the first-token share is unknown (no streamed request with an output token)."""
    if first_token is None:
        return None
    first = _share(first_token)
    stall = None if stalls is None else _share(min(stalls, 1.0 - first))
    decode = _share(1.0 - first - (stall or 0.0))
    if queue_s is None or prefill_s is None or outside_s is None:
        return TailSplit(first, decode, stall)
    phases = (max(queue_s, 0.0), max(prefill_s, 0.0), max(outside_s, 0.0))
    total = sum(phases)
    if not total > 0:
        return TailSplit(first, decode, stall)
    queue, prefill, outside = (first * phase / total for phase in phases)
    return TailSplit(first, decode, stall, queue, prefill, outside)
