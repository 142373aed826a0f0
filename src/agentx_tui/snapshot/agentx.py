"""AgentX validity as a tick carries it (docs/sweeps.md, "AgentX validity").

Each rule of InferenceX's AgentX guidelines that a client can check is met, broken, not known, or still
being measured, with the measured value that decides it in words; the verdict is the whole of them,
and says it in the words the dashboard's header, the log, the headless summary and the report use
(`validity_words`). The rules are judged in sweep/agentx.py; this module only holds the outcome.
"""

from __future__ import annotations

from typing import Literal

from agentx_tui.snapshot.base import Frozen

# met: the rule holds; broken: it does not (the run is not AgentX-valid); unknown: it cannot be checked
# (never taken for a pass or a failure: said); pending: not measured yet (a point still running).
RuleState = Literal["met", "broken", "unknown", "pending"]
VALID = "AgentX-valid"
INVALID = "not AgentX-valid"
UNKNOWN = "AgentX validity unknown"
PENDING = "AgentX pending"  # nothing broken or unknown yet, but not every rule met: not valid (yet)


class AgentXRule(Frozen):
    """One rule as judged: e.g. head "points shorter than 900 s", detail "--point-duration is 20 s"."""

    rule: str  # which rule, a stable name: point_length, error_rate, north_star, kv_offload, complete, …
    state: RuleState
    head: str  # the rule in this state, as short as the header's label can take it
    detail: str  # the measured value (or the missing fact) that decides it

    @property
    def sentence(self) -> str:
        """The one sentence the log, the summary and the report give: the rule, then what decided it."""
        return f"{self.head}: {self.detail}"


def validity_words(valid: bool | None, first: str | None = None, more: int = 0, *, pending: bool = False) -> str:
    """ "AgentX-valid", "not AgentX-valid: <first> (+N more)", "AgentX validity unknown: <first>" or, while
    a rule waits for its measure (`pending`), "AgentX pending: <what it waits for>": the verdict in words,
    with its first reason (a rule's head, or its whole sentence) and how many others there are."""
    if pending:
        return PENDING + (f": {first}" if first else "")
    if valid is True:
        return VALID
    words = INVALID if valid is False else UNKNOWN
    if first:
        words += f": {first}"
    return words + (f" (+{more} more)" if more else "")


class AgentXVerdict(Frozen):
    """Every rule the run was judged by, in the guidelines' order, and whether the run has ended."""

    rules: tuple[AgentXRule, ...] = ()
    final: bool = False  # the run's last tick: nothing is pending any more
    # AGENTX_TEST_MIN_POINT_S: the shortened point length a test judged by; None in every real run.
    test_min_point_s: float | None = None

    def _in(self, state: RuleState) -> tuple[AgentXRule, ...]:
        return tuple(r for r in self.rules if r.state == state)

    @property
    def broken(self) -> tuple[AgentXRule, ...]:
        return self._in("broken")

    @property
    def unknown(self) -> tuple[AgentXRule, ...]:
        return self._in("unknown")

    @property
    def met(self) -> tuple[AgentXRule, ...]:
        return self._in("met")

    @property
    def pending(self) -> tuple[AgentXRule, ...]:
        return self._in("pending")

    @property
    def valid(self) -> bool | None:
        """False when a rule is broken; None when none is but one cannot be checked, or while the verdict
        is `waiting` (pending is not valid); True once the run has ended with every rule met."""
        if self.broken:
            return False
        return None if self.unknown or self.waiting else True

    @property
    def waiting(self) -> bool:
        """Nothing broken or unknown, but a rule still waits for its measure (a point, the run's end):
        the run is not AgentX-valid yet, and the verdict says what it waits for."""
        return not self.broken and not self.unknown and (bool(self.pending) or not self.final)

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why the run is not (known to be) valid: the broken rules, then those that cannot be checked."""
        return tuple(r.sentence for r in (*self.broken, *self.unknown))

    @property
    def waiting_for(self) -> str | None:
        """What a `waiting` verdict waits for: the first pending rule's measured value (e.g. "the run's one
        point, 23 s of 900 s"); None when it waits for nothing."""
        if not self.waiting:
            return None
        return self.pending[0].detail if self.pending else "still running"

    def labels(self) -> tuple[str, ...]:
        """The verdict in words, longest first, for the room there is: with the first reason and the count
        of the others, the first reason alone, the verdict alone; while it waits, what it waits for."""
        if self.waiting:
            return (validity_words(None, self.waiting_for, pending=True), validity_words(None, pending=True))
        first = (*self.broken, *self.unknown)
        if not first:
            valid = validity_words(True)
            if self.test_min_point_s is None:
                return (valid,)
            return (f"{valid} (test rule: points ≥ {self.test_min_point_s:g} s)", valid)
        more = len(first) - 1
        return (
            validity_words(self.valid, first[0].head, more),
            validity_words(self.valid, first[0].head),
            validity_words(self.valid),
        )

    @property
    def label(self) -> str:
        return self.labels()[0]
