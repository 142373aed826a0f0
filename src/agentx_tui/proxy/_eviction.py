"""When a live session tree is over (docs/capture.md): idle for `--session-idle` seconds (it ended: a
task done, or failed), or the least recently active one when `MAX_LIVE_TREES` are live (cut off: no
task), so memory follows the live sessions, not the run's length. A busy tree (a call on the wire, a
prompt being tokenized, a call's figures not yet counted) is never over. The caller captures and drops it."""

from __future__ import annotations

from collections.abc import Iterable

from agentx_tui.proxy._session import LiveTree

# --session-idle's default: a session tree with no call for this long has ended (a task done, docs/metrics.md
# "Tasks"), is captured, then dropped. An agent's own pause between calls (a tool, a human) is shorter.
DEFAULT_SESSION_IDLE_S = 120.0
# Live trees kept at most: past this, the least recently active tree with no call on the wire is
# captured and dropped early (a flood of one-call sessions must not grow memory for the idle time).
MAX_LIVE_TREES = 50_000
MAX_CANDIDATES = 16  # trees looked at for the one to drop early (busy trees are also the most recent)


def idle_trees(trees: Iterable[LiveTree], now: float, idle_s: float = DEFAULT_SESSION_IDLE_S) -> list[LiveTree]:
    """The trees idle for `idle_s` and not busy, of `trees` ordered least recently active first."""
    over: list[LiveTree] = []
    for tree in trees:
        if now - tree.last_activity < idle_s:
            break  # ordered by activity: the rest are more recent
        if not tree.busy:
            over.append(tree)
    return over


def oldest_free_tree(trees: Iterable[LiveTree]) -> LiveTree | None:
    """The least recently active tree that is not busy, of `trees` ordered so (looking at a few)."""
    for looked, tree in enumerate(trees):
        if looked >= MAX_CANDIDATES:
            return None
        if not tree.busy:
            return tree
    return None
