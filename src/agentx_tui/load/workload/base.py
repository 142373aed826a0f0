"""What every workload kind shares: the common spec fields, the one scaling rule, and `Prepared`.

A kind is one spec model (its YAML fields, validated by pydantic, with `kind` as the discriminator)
and one prepared form: the spec with the data it replays, loaded and scaled once (workloads/README.md).

**The scaling rule** (`--scale F`, or the fit to the model's context), stated once: every token length
of the workload — prompts, outputs, tool results, prefixes, and the block size of a replayed trace or
session file — is multiplied by F when the workload is prepared, and never again later. Drawn and
recorded lengths are rounded to the nearest token (at least 1 where a request needs one). Block sizes
are not rounded: block i covers tokens ⌊i·b·F⌋ to ⌊(i+1)·b·F⌋, so the recorded shared fraction of a
prompt survives any scale. Scaling twice composes (F × G), always from the recorded lengths.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Generic, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from agentx_tui.errors import WorkloadError

KindName = Literal["agent", "trace", "sessions", "none"]


class Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StopRule(Spec):
    """Stop starting new sessions after `duration_s` seconds or `sessions` sessions, whichever first."""

    duration_s: float | None = Field(default=None, gt=0)
    sessions: int | None = Field(default=None, ge=1)


class WorkloadBase(Spec):
    """The fields every kind has."""

    kind: KindName  # each kind narrows it to its own literal: the union's discriminator
    name: str = ""
    description: str = ""
    stop: StopRule = Field(default_factory=StopRule)
    temperature: float = Field(default=0.0, ge=0)
    # The factor already applied to every token length (the scaling rule above); 1 as written.
    scale: float = Field(default=1.0, gt=0)

    @property
    def is_none(self) -> bool:
        """Observe only: nothing is sent."""
        return False

    def scaled(self, factor: float) -> Self:
        """The spec at `factor` times its scale. A kind that replays data applies the scale when it is
        prepared; a kind whose lengths are in the spec (synthetic) scales them here."""
        return self.model_copy(update={"scale": self.scale * checked_factor(factor)})


class NoneWorkload(WorkloadBase):
    """`kind: none`: observe the servers, send no load."""

    kind: Literal["none"]

    @property
    def is_none(self) -> bool:
        return True

    def context_needed(self) -> int:
        return 0


def checked_factor(factor: float) -> float:
    if not (factor > 0 and math.isfinite(factor)):
        raise WorkloadError(f"--scale must be a positive number, not {factor}.")
    return factor


def scaled_length(recorded: int, scale: float) -> int:
    """A recorded token length at `scale`: rounded, at least 1 (a request needs a token)."""
    return max(1, round(recorded * scale))


def p95(sizes: list[int]) -> int:
    """The 95th percentile: what a replay fits to the context (outliers are skipped, not fitted)."""
    ordered = sorted(sizes)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0


S = TypeVar("S", bound=WorkloadBase)


@dataclass(frozen=True)
class Prepared(Generic[S]):
    """A workload ready to run: its spec plus the data it replays (in the subclass), at one scale.

    Each kind's prepared form adds `context_needed()` (tokens of context its first steps, or 95% of its
    calls, need at its scale), `scaled(factor)` (the same workload with every length multiplied: the
    scaling rule) and `check_fits(max_model_len, scale)` (refuse a workload that could never send)."""

    spec: S

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def kind(self) -> KindName:
        return self.spec.kind
