"""What every workload kind shares: the common spec fields, the one scaling rule, `Prepared`, and
`WorkloadKind`, the one object a kind registers (kinds.py lists them).

A kind is one spec model (its YAML fields, validated by pydantic, with `kind` naming the model) and one
prepared form: the spec with the data it replays, loaded and scaled once (workloads/README.md).

**The scaling rule** (`--scale F`, or the fit to the model's context), stated once: every token length
of the workload — prompts, outputs, tool results, prefixes, and the block size of a replayed trace or
session file — is multiplied by F when the workload is prepared, and never again later. Drawn and
recorded lengths are rounded to the nearest token (at least 1 where a request needs one). Block sizes
are not rounded: block i covers tokens ⌊i·b·F⌋ to ⌊(i+1)·b·F⌋, so the recorded shared fraction of a
prompt survives any scale. Scaling twice composes (F × G), always from the recorded lengths.

**The output scale** (`--output-scale F`, "what if the model answered 30% shorter", docs/metrics.md):
every answer's length — drawn (an `agent` workload's `output_tokens`) or recorded (a trace's
`output_length`, a session call's `out`) — is multiplied by F as well, and nothing else: prompts,
think times, block sizes, hash ids and the number of calls stay as they are. It composes with the
scaling rule: an answer asks for `output_length(recorded, scale, output_scale)` =
`scaled_length(recorded, scale × output_scale)` tokens (rounded, at least 1). (A synthetic session's
history holds its answers, so its later prompts are shorter by the tokens its answers saved.)
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Self, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field

from agentx_tui.errors import WorkloadError


class Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StopRule(Spec):
    """Stop starting new sessions after `duration_s` seconds or `sessions` sessions, whichever first."""

    duration_s: float | None = Field(default=None, gt=0)
    sessions: int | None = Field(default=None, ge=1)


class WorkloadBase(Spec):
    """The fields every kind has."""

    kind: str  # each kind narrows it to its own literal, its `kind:` name (a contract)
    name: str = ""
    description: str = ""
    stop: StopRule = Field(default_factory=StopRule)
    temperature: float = Field(default=0.0, ge=0)
    # The factor already applied to every token length (the scaling rule above); 1 as written.
    scale: float = Field(default=1.0, gt=0)
    # The factor already applied to every answer's length, on top of `scale` (the output scale above).
    output_scale: float = Field(default=1.0, gt=0)

    @property
    def is_none(self) -> bool:
        """Observe only: nothing is sent."""
        return False

    def scaled(self, factor: float) -> Self:
        """The spec at `factor` times its scale. A kind that replays data applies the scale when it is
        prepared; a kind whose lengths are in the spec (synthetic) scales them here."""
        return self.model_copy(update={"scale": self.scale * checked_factor(factor)})

    def outputs_scaled(self, factor: float) -> Self:
        """The spec at `factor` times its output scale (answers only). A kind that replays data applies
        it when it is prepared; a kind whose lengths are in the spec (synthetic) scales them here."""
        return self.model_copy(update={"output_scale": self.output_scale * checked_factor(factor, "--output-scale")})

    @classmethod
    def from_data(cls, path: Path) -> Self | None:
        """The spec that replays `path` as it is, when `path` is this kind's data rather than a workload
        file (a trace, session files); None for a kind without data files."""
        return None

    def relative_to(self, folder: Path) -> Self:
        """The spec with the paths written in a workload file counted from the file's `folder`."""
        return self


def checked_factor(factor: float, flag: str = "--scale") -> float:
    if not (factor > 0 and math.isfinite(factor)):
        raise WorkloadError(f"{flag} must be a positive number, not {factor}.")
    return factor


def scaled_length(recorded: int, scale: float) -> int:
    """A recorded token length at `scale`: rounded, at least 1 (a request needs a token)."""
    return max(1, round(recorded * scale))


def output_length(recorded: int, scale: float, output_scale: float) -> int:
    """A recorded answer's length at `scale` and `output_scale` (the output scale above): rounded, at
    least 1, so a recorded answer of 0 tokens still asks for one."""
    return scaled_length(recorded, scale * output_scale)


def p95(sizes: list[int]) -> int:
    """The 95th percentile: what a replay fits to the context (outliers are skipped, not fitted)."""
    ordered = sorted(sizes)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0


S = TypeVar("S", bound=WorkloadBase, covariant=True)


@dataclass(frozen=True)
class Prepared(ABC, Generic[S]):
    """A workload ready to run: its spec plus the data it replays (in the subclass), at one scale."""

    spec: S

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def kind(self) -> str:
        return self.spec.kind

    @abstractmethod
    def context_needed(self) -> int:
        """Tokens of context its first steps (or 95% of its calls) need, at its scale."""

    @abstractmethod
    def scaled(self, factor: float) -> Prepared[S]:
        """The same workload with every token length multiplied by `factor` (the scaling rule)."""

    @abstractmethod
    def check_fits(self, max_model_len: int, scale: float | None) -> None:
        """Refuse (WorkloadError) a workload that could never send a request to this model."""


K = TypeVar("K", bound=WorkloadBase)


@dataclass(frozen=True)
class WorkloadKind(Generic[K]):
    """One workload kind, as a kind's module registers it (`KIND = WorkloadKind(...)`, listed in
    kinds.py): its spec model and how a spec of it is prepared. Its loop, in load/sending/kinds/, is
    found by the kind's name."""

    spec: type[K]
    prepare: Callable[[K], Prepared[K]]

    @property
    def name(self) -> str:
        """The `kind:` value of its workload files: the literal its spec model narrows `kind` to."""
        name: Any = get_args(self.spec.model_fields["kind"].annotation)[0]
        return str(name)
