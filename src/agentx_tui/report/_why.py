"""Why a report key is null, in a few words: the declared figures' reasons (snapshot/unknown.py, the same
the dashboard's panes give) and, for a sweep's tier keys, the tier read's own note."""

from __future__ import annotations

from agentx_tui.report._keys import AGENTS_FIGURES, RENAMED_KEYS, parse_tier_key
from agentx_tui.report._model import Report
from agentx_tui.snapshot import CI_SUFFIXES, TierRead
from agentx_tui.snapshot.unknown import why_unknown
from agentx_tui.sweep import DECODE, NORTH_STAR

NA_ON_AXIS = "read on the frontier's own axis only"
NO_TIER_INTERVAL = "its points carry no 95% interval: too few requests in them"


def why(key: str, report: Report) -> str:
    """Why `key` (a declared figure, an interval's key, a tier's flat key) is null in `report`."""
    tier = parse_tier_key(key)
    if tier is None:
        return why_unknown(RENAMED_KEYS.get(key, key), report)
    read = _read(report, tier.tier, decode=tier.decode, agents=tier.figure in AGENTS_FIGURES)
    if read is None:
        return NA_ON_AXIS
    if tier.figure.endswith(CI_SUFFIXES) and read.total_tokens_per_s_per_gpu is not None:
        return NO_TIER_INTERVAL
    if read.note:
        return read.note
    if tier.figure in AGENTS_FIGURES:
        return "its points' users or power are unknown"
    return "no throughput read at this tier"


def _read(report: Report, tier: float, *, decode: bool, agents: bool) -> TierRead | None:
    """The tier read a flat key holds: on decode interactivity (`_decode` keys), on the frontier's own axis
    (the agents' keys), else on the North Star (or, in a report of before the axis, of no axis)."""
    primary = report.frontier_axis
    if agents:
        axis = primary
    elif decode:
        axis = DECODE
    else:
        axis = NORTH_STAR if primary is not None else None
    for read in report.tiers or ():
        if read.tier == tier and (read.axis == axis or (read.axis is None and axis in (None, DECODE))):
            return read
    return None
