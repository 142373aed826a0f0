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


def validity_words(valid: bool | None, first: str | None = None, more: int = 0, *, so_far: bool = False) -> str:
    """ "AgentX-valid", "not AgentX-valid: <first> (+N more)" or "AgentX validity unknown: <first>":
    the verdict in words, with its first reason (a rule's head, or its whole sentence) and how many
    others there are. `so_far`: the run is still being measured, and a valid run may yet break a rule."""
    if valid is True:
        return VALID + (" so far" if so_far else "")
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
    def valid(self) -> bool | None:
        """False when a rule is broken; None when none is but one cannot be checked; else True (so far,
        while a rule is still pending)."""
        if self.broken:
            return False
        return None if self.unknown else True

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why the run is not (known to be) valid: the broken rules, then those that cannot be checked."""
        return tuple(r.sentence for r in (*self.broken, *self.unknown))

    @property
    def so_far(self) -> bool:
        return not self.final

    def labels(self) -> tuple[str, ...]:
        """The verdict in words, longest first, for the room there is: with the first reason and the count
        of the others, the first reason alone, the verdict alone."""
        first = (*self.broken, *self.unknown)
        if not first:
            valid = validity_words(True, so_far=self.so_far)
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
