"""A workload made ready to run: its spec plus the data it replays, loaded and scaled once.

`prepare_workload` reads a preset, a YAML file, a Mooncake trace or AgentX session files; every
problem is a `WorkloadError` before any server starts (of a session corpus over 32 MB, in what is read
ahead: docs/sessions.md). After the servers are known, `fit_to_servers`
is the one place that fits a workload to their context: scaled down when the user chose no `--scale`
and its first steps (or 95% of its calls) do not fit, then refused if its first request never can.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeAlias, TypeVar

from agentx_tui.load.workload.base import Prepared, WorkloadBase
from agentx_tui.load.workload.kinds import KINDS
from agentx_tui.load.workload.spec import Workload, load_workload

_FIT_MARGIN = 0.95

# A workload ready to run, of any kind: the prepared form its kind registered.
PreparedWorkload: TypeAlias = Prepared[WorkloadBase]


def prepare(spec: Workload) -> PreparedWorkload:
    """`spec` with the data it replays loaded, at the spec's scale."""
    return KINDS[spec.kind].prepare(spec)


def prepare_workload(name_or_path: str, *, scale: float | None = None, output_scale: float = 1.0) -> PreparedWorkload:
    """A preset name, a YAML file, a Mooncake `.jsonl` trace or AgentX session files, with their data
    (answers at `output_scale`, the output scale of base.py)."""
    return prepare(load_workload(name_or_path, scale=scale, output_scale=output_scale))


class _Fittable(Protocol):
    @property
    def name(self) -> str: ...

    def context_needed(self) -> int: ...

    def scaled(self, factor: float) -> Any: ...


F = TypeVar("F", bound=_Fittable)


def fit_to_context(workload: F, max_model_len: int | None) -> tuple[F, str | None]:
    """`workload` scaled down when what it needs (`context_needed`) does not fit `max_model_len`; the
    note says so. Works on a prepared workload and on a synthetic spec alike."""
    if max_model_len is None:
        return workload, None
    needed = workload.context_needed()
    budget = max_model_len * _FIT_MARGIN
    if needed <= budget:
        return workload, None
    factor = round(budget / needed, 4)
    note = (
        f"Workload '{workload.name}' needs about {needed} tokens of context; scaled every token length "
        f"by {factor:g} to fit the model's {max_model_len}-token context (pass --scale to choose)."
    )
    fitted: F = workload.scaled(factor)
    return fitted, note


def fit_to_servers(
    workload: PreparedWorkload, context_lengths: Sequence[int | None], scale: float | None
) -> tuple[PreparedWorkload, str | None]:
    """The workload fitted to the smallest context of the servers it is sent to (unless the user chose
    `--scale`), then checked: a workload whose first request can never fit is refused (WorkloadError)."""
    known = [n for n in context_lengths if n]
    if not known:
        return workload, None
    note = None
    if scale is None:
        workload, note = fit_to_context(workload, min(known))
    workload.check_fits(min(known), scale)
    return workload, note
