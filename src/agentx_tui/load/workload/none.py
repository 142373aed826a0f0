"""`kind: none`: observe the servers, send no load (the `none` preset). It has no loop in load/sending/kinds/."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentx_tui.load.workload.base import Prepared, WorkloadBase, WorkloadKind


class NoneSpec(WorkloadBase):
    kind: Literal["none"]

    @property
    def is_none(self) -> bool:
        return True

    def context_needed(self) -> int:
        return 0


@dataclass(frozen=True)
class PreparedNone(Prepared[NoneSpec]):
    """Nothing to send, nothing to fit."""

    def context_needed(self) -> int:
        return 0

    def scaled(self, factor: float) -> PreparedNone:
        return self

    def check_fits(self, max_model_len: int, scale: float | None) -> None:
        return None


KIND = WorkloadKind(NoneSpec, PreparedNone)
