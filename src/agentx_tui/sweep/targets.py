"""`--sweep tiers` (docs/sweeps.md, "A tier sweep"): where to measure so that the tier reads cost a
fraction of a dense grid's GPU time.

p90 interactivity falls as users are added, so where it crosses each tier can be found with short
**probes** before any full point is measured:

1. **Bracketing.** A probe at the start users; while its p90 interactivity (on the frontier's axis) is
   under the highest tier and it has more than one user, halve the users; then double them from the
   start until `--sweep auto`'s rules stop it (`auto_stop_reason` on the doubling probes: p90 under the
   lowest tier, throughput grown less than 5% twice in a row, errors above 10%, the client saturated, 12
   probes). A tier is then bracketed by the probes: `hi`, the fewest users probed below it, and `lo`, the
   most users probed under `hi` at or above it (`bracket`).
2. **Bisection.** Each tier, the highest first (it is crossed at the fewest users), is probed at the
   geometric middle of its bracket (a whole number of users strictly inside it) until the bracket is
   tight: `hi` − `lo` ≤ 1 or `hi` ≤ `BISECT_RATIO` × `lo`. No user count is probed twice: no probe lies
   inside a bracket, so each middle is new, and a noisy probe only moves a bracket, never loops it.
   A tier is bisected as soon as a probe brackets it, before the users double again, so the users
   probed mostly grow (the doubling's stop rules see the doubling's probes only).
3. **Full points** where they tell: `lo` and `hi` of each bracketed tier (a point shared where two tiers'
   brackets touch or overlap: one user count is `hi` of one and `lo` of the next, or both tiers are
   crossed between the same two probes) and the throughput's top (the probe of the most throughput:
   where it stopped growing, as the doubling's rules saw it). With no tier bracketed: the top and the
   fewest users probed, so the frontier has its span. Measured from the most users down: retired users'
   survivors keep their sessions, contexts at every stage as before, while users added start theirs.
4. **Fix-ups.** Probes are short, so a full point can land on the other side of its tier, or past a
   collapse (more users, less throughput: off the frontier). Once the planned points are measured, a
   tier bracketed by the probes but with the full points' frontier on one side of it only gets one more
   full point on the other (`_fix_up`), at most `MAX_FIXES` a side.

Pure: told what each probe and point measured (`PointFigures`), it says the next step. No clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from agentx_tui.snapshot import FrontierAxis, PointFigures
from agentx_tui.sweep.auto import AUTO_MAX_POINTS, auto_stop_reason, peak_auto_users, stopped_growing
from agentx_tui.sweep.axes import NORTH_STAR, finite, measured, point_x
from agentx_tui.sweep.pareto import pareto_front
from agentx_tui.sweep.tiers import tier_suffix

BISECT_RATIO = 1.5  # a bracket is tight once hi ≤ 1.5 × lo (or hi − lo ≤ 1): one bisection of a doubling
MARGIN = 1.25  # a full point beside one crossing only: at least 1.25× (in users) from it, never inside its bracket
FIX_STEP = MARGIN**2  # a fix-up with no probe on its side: 1.5625× beyond the last point
MAX_FIXES = 2  # fix-ups a tier's side gets at most (a short probe can mislead twice; a third is a pattern)
SHARE_GAP = 4.0  # two tiers' brackets this close (the lower tier's lo ≤ 4 × the upper tier's hi) share a point
MAX_PROBES = 2 * AUTO_MAX_POINTS  # the most probes a tier sweep takes, bracketing and bisection together


@dataclass(frozen=True, slots=True)
class Step:
    """What the sweep measures next: a probe or a full point, at `users`, and what for."""

    users: int
    probe: bool
    purpose: str  # in words: "bracketing tiers 50 75 100", "tier 50", "tier 50 (above) · the throughput's top"
    tiers: tuple[float, ...] = ()  # the tiers it is for (none: the throughput's top, or bracketing none)


def tiers_words(tiers: Sequence[float]) -> str:
    """'tier 50' or 'tiers 30 50 75'."""
    names = " ".join(tier_suffix(t) for t in tiers)
    return f"tier{'s' if len(tiers) != 1 else ''} {names}"


def _throughput(point: PointFigures) -> float | None:
    """Per GPU where the point has a GPU count, else in all (the ranking is the same at one GPU count)."""
    return finite(point.total_tokens_per_s_per_gpu) or finite(point.total_tokens_per_s)


class TierPlanner:
    """The tier sweep's plan (the module's rules): `next_step()`, then `record(step, figures)` with what the
    step measured, until `next_step()` is None."""

    def __init__(
        self,
        tiers: Sequence[float],
        *,
        start_users: int,
        axis: FrontierAxis = NORTH_STAR,
        max_users: int | None = None,
    ) -> None:
        if not tiers:
            raise ValueError("a tier sweep needs at least one tier")
        self.tiers = tuple(sorted(set(tiers)))
        self.start_users = max(1, start_users)
        self.axis = axis
        self.max_users = max_users or peak_auto_users(self.start_users)
        self.probes: list[tuple[Step, PointFigures]] = []
        self.points: list[tuple[Step, PointFigures]] = []
        self.bracket_reason: str | None = None  # why the doubling stopped
        self.flat = False  # it stopped where throughput stopped growing (the growth rule)
        self._down_done = False
        self._up_done = False
        self._planned: list[Step] | None = None  # the full points, once the probes are done
        self._fixed: dict[tuple[float, str], int] = {}  # fix-ups made: (tier, "above" | "below") → how many
        self._doubling: set[int] = set()  # the user counts the doubling probed (the start's included)

    # -- what was measured ------------------------------------------------------------------------
    def record(self, step: Step, figures: PointFigures) -> None:
        (self.probes if step.probe else self.points).append((step, figures))

    def _probe_x(self) -> dict[int, float]:
        """Each probed user count's p90 interactivity on the axis (probes that counted no request left out)."""
        found: dict[int, float] = {}
        for step, figures in self.probes:
            x = finite(point_x(figures, self.axis)) if measured(figures) else None
            if x is not None:
                found[step.users] = x
        return found

    def bracket(self, tier: float) -> tuple[int, int] | None:
        """(lo, hi): the most users probed at or above `tier` under the fewest probed below it; None when
        no probe fell below it, or none at fewer users stayed at or above it."""
        xs = self._probe_x()
        below = [u for u, x in xs.items() if x < tier]
        if not below:
            return None
        hi = min(below)
        above = [u for u, x in xs.items() if x >= tier and u < hi]
        return (max(above), hi) if above else None

    def crossing(self, tier: float) -> float:
        """Where p90 interactivity crosses `tier`, in users, inside its bracket: interpolated between the
        bracket's probes, linearly in log users against log interactivity (interactivity falls about as a
        power of the users). Call it on a bracketed tier only."""
        found = self.bracket(tier)
        assert found is not None
        lo, hi = found
        xs = self._probe_x()
        x_lo, x_hi = xs[lo], xs[hi]
        if not (x_lo > 0 and x_hi > 0) or x_lo <= x_hi:
            return math.sqrt(lo * hi)
        share = (math.log(x_lo) - math.log(tier)) / (math.log(x_lo) - math.log(x_hi))
        return math.exp(math.log(lo) + share * (math.log(hi) - math.log(lo)))

    @staticmethod
    def tight(lo: int, hi: int) -> bool:
        return hi - lo <= 1 or hi <= lo * BISECT_RATIO

    def unbracketed(self) -> dict[float, str]:
        """The tiers no pair of probes brackets, each with why (for the sweep's end, once probing is done)."""
        xs = self._probe_x()
        notes: dict[float, str] = {}
        if not xs:
            return {t: "no probe counted a request" for t in self.tiers}
        fewest, most = min(xs), max(xs)
        for tier in self.tiers:
            if self.bracket(tier) is not None:
                continue
            if all(x >= tier for x in xs.values()):
                why = f" ({self.bracket_reason.rstrip('.')})" if self.bracket_reason else ""
                notes[tier] = f"p90 interactivity stayed at or above it up to {most} users{why}"
            else:
                notes[tier] = f"p90 interactivity was below it already at {fewest} user{'s' if fewest != 1 else ''}"
        return notes

    # -- the next step ------------------------------------------------------------------------------
    @property
    def probing(self) -> bool:
        return self._planned is None

    @property
    def planned(self) -> tuple[Step, ...]:
        """The full points planned so far (fix-ups included), in the order they are measured; none while
        probing."""
        return tuple(self._planned or ())

    def next_step(self) -> Step | None:
        if self._planned is None:
            step = self._next_probe()
            if step is not None:
                return step
            self._planned = self._plan_points()
        done = {step.users for step, _ in self.points}
        for step in self._planned:
            if step.users not in done:
                return step
        fix = self._fix_up()
        if fix is not None:
            self._planned.append(fix)
        return fix

    def _next_probe(self) -> Step | None:
        if len(self.probes) >= MAX_PROBES:
            self.bracket_reason = self.bracket_reason or f"{MAX_PROBES} probes done, the most a tier sweep takes"
            return None
        if not self.probes:
            self._doubling.add(self.start_users)
            return Step(self.start_users, True, f"bracketing {tiers_words(self.tiers)}", self.tiers)
        # A tier is bisected as soon as it is bracketed, before the users double again: the users probed
        # then mostly grow, and a probe never follows a large drop in users (its survivors would be deep
        # in their sessions, their contexts longer than the load's own mix).
        return self._bracket_down() or self._bisect() or self._bracket_up()

    def _bracket_down(self) -> Step | None:
        """Halve the users while the fewest probed are below the highest tier."""
        if self._down_done:
            return None
        xs = self._probe_x()
        fewest = min(step.users for step, _ in self.probes)
        x = xs.get(fewest)
        if x is None or x >= self.tiers[-1] or fewest <= 1:
            self._down_done = True
            return None
        above = tuple(t for t in self.tiers if t > x)
        return Step(max(1, fewest // 2), True, f"bracketing {tiers_words(above)}", above)

    def _bracket_up(self) -> Step | None:
        """Double the users from the start until `--sweep auto`'s rules stop it."""
        if self._up_done:
            return None
        doubling = sorted(
            ((step, f) for step, f in self.probes if step.users in self._doubling), key=lambda p: p[0].users
        )
        figures = [f for _, f in doubling]
        last = doubling[-1]
        reason: str | None
        if not measured(last[1]):
            reason = f"the probe at {last[0].users} users counted no request"
        else:
            reason = auto_stop_reason(figures, lowest_tier=self.tiers[0], max_points=AUTO_MAX_POINTS, axis=self.axis)
        users = last[0].users * 2
        if reason is None and users > self.max_users:
            reason = f"{last[0].users} users probed, the most this sweep reaches"
        if reason is not None:
            self._up_done = True
            self.bracket_reason = reason
            self.flat = stopped_growing(figures) is not None
            return None
        x = finite(point_x(last[1], self.axis))
        left = tuple(t for t in self.tiers if x is None or t <= x)
        self._doubling.add(users)
        return Step(users, True, f"bracketing {tiers_words(left)}", left)

    def _bisect(self) -> Step | None:
        """The highest tier whose bracket is not tight yet, probed at its bracket's geometric middle."""
        for tier in reversed(self.tiers):
            found = self.bracket(tier)
            if found is None or self.tight(*found):
                continue
            lo, hi = found
            middle = min(max(round(math.sqrt(lo * hi)), lo + 1), hi - 1)
            return Step(middle, True, tiers_words((tier,)), (tier,))
        return None

    def _plan_points(self) -> list[Step]:
        """The full points (the module's rule 3), the most users first, each labelled with the tiers it
        stands beside: for each bracketed tier, the nearest planned point at or under its `lo` and at or
        over its `hi`."""
        planned: set[int] = set()
        # The bracketed tiers, fewest users first, each with where its crossing lies (`crossing`).
        brackets = [(t, b, self.crossing(t)) for t in reversed(self.tiers) if (b := self.bracket(t)) is not None]
        if brackets:
            _, (lo, _), at = brackets[0]
            planned.add(min(lo, max(1, math.floor(at / MARGIN))))
            for (_, (_, hi), c_upper), (_, (lo, _), c_lower) in pairwise(brackets):
                if hi == lo:  # touching brackets: the probe they share is the shared point
                    planned.add(hi)
                elif hi > lo:  # overlapping: both tiers crossed between the same probes, the outer points serve both
                    continue
                elif lo <= SHARE_GAP * hi:  # close: one point between the two crossings, shared
                    planned.add(min(max(round(math.sqrt(c_upper * c_lower)), hi), lo))
                else:
                    planned.add(max(hi, math.ceil(c_upper * MARGIN)))
                    planned.add(min(lo, max(1, math.floor(c_lower / MARGIN))))
            _, (_, hi), at = brackets[-1]
            planned.add(min(self.max_users, max(hi, math.ceil(at * MARGIN))))
        for _, (lo, hi), _ in brackets:  # probes out of order can leave a side bare: its own probe then
            if not any(u <= lo for u in planned):
                planned.add(lo)
            if not any(u >= hi for u in planned):
                planned.add(hi)
        purposes: dict[int, list[str]] = {users: [] for users in planned}
        served: dict[int, list[float]] = {users: [] for users in planned}
        for tier, (lo, hi), _ in brackets:
            above, below = max(u for u in planned if u <= lo), min(u for u in planned if u >= hi)
            for users, side in ((above, "above"), (below, "below")):
                purposes[users].append(f"{tiers_words((tier,))} ({side})")
                served[users].append(tier)
        top = self._top() if self.flat else None
        if top is not None:
            purposes.setdefault(top, []).append("the throughput's top")
        if len(purposes) < 2:  # no tier bracketed: the frontier's span, from the fewest users probed
            xs = self._probe_x()
            if xs and min(xs) not in purposes:
                purposes[min(xs)] = ["the fewest users probed"]
        return [
            Step(users, False, " · ".join(purposes[users]), tuple(sorted(served.get(users, ()))))
            for users in sorted(purposes, reverse=True)
        ]

    def _top(self) -> int | None:
        """The probed user count of the most throughput (the fewest users on a tie)."""
        best: tuple[float, int] | None = None
        for step, figures in self.probes:
            y = _throughput(figures) if measured(figures) else None
            if y is not None and (best is None or y > best[0] or (y == best[0] and step.users < best[1])):
                best = (y, step.users)
        return best[1] if best else None

    def _fix_up(self) -> Step | None:
        """One more full point for a tier the probes bracket but the full points' frontier does not stand
        on both sides of (the module's rule 4), at most `MAX_FIXES` a side:

        - **above** (every frontier point below it): the nearest probe at or above it with fewer users than
          any point, else `FIX_STEP` fewer than the fewest;
        - **below** (every frontier point at or above it): where a point below it is off the frontier (more
          users, less throughput: the load past a collapse, say a KV cache overflowing), the geometric
          middle between the frontier's last point and it, when a probe between the two carried more
          throughput than that point (the frontier goes on past it; a flat top would not, and no point
          past the throughput's top is read); with no point below it at all, the nearest probe below it
          with more users than any point, else `FIX_STEP` more than the most."""
        front = self._front()
        if not front:
            return None
        done = {step.users for step, _ in self.points}
        for tier in reversed(self.tiers):
            if self.bracket(tier) is None:
                continue
            if not any(x >= tier for _, x, _ in front):
                users = self._fix_above(tier, done)
                if users is not None:
                    return Step(users, False, f"{tiers_words((tier,))} (above), again", (tier,))
            if not any(x < tier for _, x, _ in front):
                users = self._fix_below(tier, done, front)
                if users is not None:
                    return Step(users, False, f"{tiers_words((tier,))} (below), again", (tier,))
        return None

    def _front(self) -> list[tuple[int, float, float]]:
        """The full points on the frontier: (users, p90 interactivity, throughput), fewest users first."""
        known = [
            (step.users, x, y)
            for step, f in self.points
            if measured(f) and (x := finite(point_x(f, self.axis))) is not None and (y := _throughput(f)) is not None
        ]
        return sorted(known[i] for i in pareto_front([(x, y) for _, x, y in known]))

    def _fixing(self, tier: float, side: str) -> bool:
        """Count one more fix-up for `tier` on `side`: whether one is still allowed."""
        made = self._fixed.get((tier, side), 0)
        if made >= MAX_FIXES:
            return False
        self._fixed[(tier, side)] = made + 1
        return True

    def _fix_above(self, tier: float, done: set[int]) -> int | None:
        fewest = min(done)
        if fewest <= 1 or not self._fixing(tier, "above"):
            return None
        near = [u for u, x in self._probe_x().items() if x >= tier and u < fewest]
        return max(near) if near else max(1, math.floor(fewest / FIX_STEP))

    def _fix_below(self, tier: float, done: set[int], front: list[tuple[int, float, float]]) -> int | None:
        last_users, _, last_y = max(front)
        below = [
            step.users
            for step, f in self.points
            if step.users > last_users and measured(f) and (x := finite(point_x(f, self.axis))) is not None and x < tier
        ]
        if below:
            past = min(below)
            grows = any(
                last_users < step.users < past and (y := _throughput(f)) is not None and y > last_y
                for step, f in self.probes
                if measured(f)
            )
            middle = round(math.sqrt(last_users * past))
            if not grows or not last_users < middle < past or middle in done or not self._fixing(tier, "below"):
                return None
            return middle
        most = max(done)
        if most >= self.max_users or not self._fixing(tier, "below"):
            return None
        near = [u for u, x in self._probe_x().items() if x < tier and u > most]
        return min(near) if near else min(self.max_users, math.ceil(most * FIX_STEP))
