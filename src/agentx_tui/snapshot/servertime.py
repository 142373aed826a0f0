"""Where a request's time went on the server, and how its speculative decoding did (docs/metrics.md,
"Where the time went"), from the servers' counters over a stretch of time: one rule for an endpoint's
rate window (its counters' rates), the report and an endpoint's row (the run's totals) and a sweep point
(the totals' increase over its window). A ratio of two counters' increases over one stretch is the ratio
of their rates over it, so `server_time_figures` takes either.

- the request phases, means per finished request: Δsum ÷ Δcount of vLLM's histograms
  `request_queue_time_seconds` (queued → scheduled), `request_prefill_time_seconds` (scheduled → first
  token, preemptions included), `request_decode_time_seconds` (first → last token),
  `request_prefill_kv_computed_tokens` (KV computed at prefill, cached tokens not), and
  `request_num_preemptions`; per engine step, `iteration_tokens_total` (computed prefill + generated
  tokens);
- speculative decoding: acceptance length 1 + Δaccepted ÷ Δdrafts (the bonus token included),
  acceptance rate Δaccepted ÷ Δdraft tokens, per position i Δaccepted_i ÷ Δdrafts, and the draft length
  k: the positions the server exports;
- what the client waited outside the server before its first token: its TTFT mean − (queue + prefill)
  means (the network, the server's frontend, the client itself);
- the measured acceptance length against AgentX's golden one: measured ÷ golden.

A figure whose counters the servers do not export, or over a stretch where nothing was observed (no
request finished, no draft), is None: never 0, and never an acceptance length of 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from agentx_tui.snapshot.model import EndpointTotals
from agentx_tui.snapshot.stat import ratio

# figure → the histogram (an `EndpointTotals` stem: `<stem>_sum`, `<stem>_count`) whose mean it is
PHASE_MEANS: Final[dict[str, str]] = {
    "server_queue_s_mean": "request_queue_s",
    "server_prefill_s_mean": "request_prefill_s",
    "server_decode_s_mean": "request_decode_s",
    "server_step_tokens_mean": "iteration_tokens",
    "server_prefill_computed_tokens_mean": "request_prefill_computed_tokens",
    "server_preemptions_per_request": "request_preemptions",
}
# The figures `server_time_figures` gives, in order.
SERVER_TIME_KEYS: Final[tuple[str, ...]] = (
    *PHASE_MEANS,
    "spec_acceptance_length",
    "spec_acceptance_rate",
    "spec_acceptance_by_position",
    "spec_draft_length",
)


def server_time_figures(
    count: Callable[[str], float | None], accepted_by_position: Sequence[float | None] | None
) -> dict[str, Any]:
    """The figures of one stretch: `count` gives an `EndpointTotals` counter's increase over it (or its
    rate: the same ratios), None where the servers do not export it; `accepted_by_position` the accepted
    tokens' increases (or rates) by draft position, in position order (None: no such counters)."""
    out: dict[str, Any] = {
        key: ratio(count(f"{stem}_sum"), count(f"{stem}_count")) for key, stem in PHASE_MEANS.items()
    }
    drafts = count("spec_drafts")
    accepted = count("spec_accepted_tokens")
    per_draft = ratio(accepted, drafts)
    by_position = [ratio(value, drafts) for value in accepted_by_position or ()]
    out.update(
        spec_acceptance_length=None if per_draft is None else 1.0 + per_draft,
        spec_acceptance_rate=ratio(accepted, count("spec_draft_tokens")),
        spec_acceptance_by_position=_known(by_position),
        spec_draft_length=len(accepted_by_position) if accepted_by_position else None,
    )
    return out


def _known(values: list[float | None]) -> tuple[float, ...] | None:
    """All of `values`, or None when there are none or one is not known."""
    known = tuple(value for value in values if value is not None)
    return known if known and len(known) == len(values) else None


def totals_server_time(totals: EndpointTotals) -> dict[str, Any]:
    """`server_time_figures` over the stretch that `totals` counts (the run, a sweep point's window)."""
    return server_time_figures(lambda name: getattr(totals, name), totals.spec_accepted_tokens_by_position)


def ttft_outside_server(
    ttft_mean_s: float | None, queue_mean_s: float | None, prefill_mean_s: float | None
) -> float | None:
    """The client's mean wait for a first token that the server's own phases do not hold: its TTFT mean −
    (the server's queue + prefill means) = the network, the server's frontend (tokenizing, the API
    server's loop) and the client. None when one of the three is not known."""
    if ttft_mean_s is None or queue_mean_s is None or prefill_mean_s is None:
        return None
    return ttft_mean_s - (queue_mean_s + prefill_mean_s)


def acceptance_vs_golden(measured: float | None, golden: float | None) -> float | None:
    """The measured acceptance length ÷ AgentX's golden one for the model and draft length (1: pinned)."""
    return ratio(measured, golden)
