"""The cold start (docs/metrics.md, "Cold start"): whether the sessions' first requests set a latency figure.

A session's first request (`Completed.first_call`) sends a prefix the server has not seen, so the whole
prompt is prefilled; when a run starts, every user sends one at once and they queue behind each other.
In a short run they can be more than a tenth of its requests, and then they alone set its TTFT p90: a
`--check 'ttft_p90_s <= 0.5'` fails a server that answers every later request in a fraction of that.

The rule, one for the run and any measured window: a latency or interactivity figure (declared with a
better direction, in seconds or tokens/s/user) is **set by the first requests** when, over the other
requests (the warm ones), it is more than `COLD_MARGIN` better than over all of them: a time below
(1 − 0.2) × its value, an interactivity (1 / a time) above its value ÷ (1 − 0.2). It is judged with at
least `MIN_WARM` warm requests and one first request among the counted ones; otherwise it cannot be told
(None). The warm figures come from the warm requests' own `Tally`, kept beside the whole one.
"""

from __future__ import annotations

from typing import Any

from agentx_tui.measure.headline import TALLY_KEYS, tally_figures
from agentx_tui.measure.tally import Tally
from agentx_tui.snapshot import SECONDS, TOKENS_PER_S_PER_USER, Figures, declared

COLD_MARGIN = 0.2  # a figure over the warm requests better by more than this share: set by the first ones
MIN_WARM = 10  # fewer warm requests cannot tell a percentile apart from the whole one

# The figures judged: of a tally's own, the latency percentiles (lower is better) and the interactivity
# ones (higher is better), by their declarations.
JUDGED: dict[str, str] = {
    key: fig.better
    for key, fig in declared(Figures).items()
    if key in TALLY_KEYS and fig.better is not None and fig.unit in (SECONDS, TOKENS_PER_S_PER_USER)
}
FIRST_REQUESTS = "the sessions' cold first requests"
SAID = 3  # the note names this many figures, then counts the rest


def _set_by_first(every: float, warm: float, better: str) -> bool:
    if not every > 0:
        return False
    if better == "lower":
        return warm < (1 - COLD_MARGIN) * every
    return warm > every / (1 - COLD_MARGIN)


def _value(value: float, key: str) -> str:
    unit = "s" if declared(Figures)[key].unit == SECONDS else "tok/s/user"
    return f"{value:.3g} {unit}"


def cold_start(every: Figures, requests: int, warm: Tally, *, advice: bool) -> dict[str, Any]:
    """The cold-start figures of a set of requests: `every` is their figures (`tally_figures` of the whole
    tally, `requests` of them), `warm` the tally of those that were not a session's first request.
    `advice`: the note ends by naming `--warmup` (a run that had none)."""
    warm_figures = tally_figures(warm, span=None, cached_reported=False)
    first = requests - warm.requests
    out: dict[str, Any] = {"ttft_p90_s_warm": warm_figures.ttft_p90_s, "cold_start_figures": None}
    if first <= 0 or warm.requests < MIN_WARM:
        out["cold_start_figures"] = [] if requests and first <= 0 else None
        return out
    found: dict[str, tuple[float, float]] = {}
    for key, better in JUDGED.items():
        whole, part = getattr(every, key, None), getattr(warm_figures, key, None)
        if whole is not None and part is not None and _set_by_first(whole, part, better):
            found[key] = (whole, part)
    # Times first (what a --check on latency names), then interactivity; each kind in declaration order.
    keys = sorted(found, key=lambda key: JUDGED[key] != "lower")
    out["cold_start_figures"] = keys
    if keys:
        shown = [f"{key} {_value(found[key][0], key)} ({_value(found[key][1], key)} without them)" for key in keys]
        more = len(shown) - SAID
        listed = ", ".join(shown[:SAID]) + (f" and {more} more (cold_start_figures)" if more > 0 else "")
        verb = "is" if len(keys) == 1 else "are"
        note = f"{listed} {verb} set by {FIRST_REQUESTS} ({first} of {requests} requests)"
        out["cold_start_note"] = f"{note}; --warmup S leaves them out" if advice else note
    return out
