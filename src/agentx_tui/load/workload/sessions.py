"""`kind: sessions`: AgentX agent-session files (workloads/README.md): its spec and its prepared form,
the sessions indexed and read as users take them (session_stream.py) into immutable session trees
(session_trees.py, whose names are re-exported here: the kind's way in).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentx_tui.load.workload.base import Prepared, Spec, WorkloadBase, WorkloadKind
from agentx_tui.load.workload.session_stream import SessionStream, open_session_stream
from agentx_tui.load.workload.session_trees import (
    SessionCall,
    SessionCounts,
    SessionSet,
    SessionSubAgent,
    SessionTree,
    load_session_set,
    survey_sessions,
)

__all__ = [
    "KIND",
    "PreparedSessions",
    "SessionCall",
    "SessionCounts",
    "SessionSet",
    "SessionStream",
    "SessionSubAgent",
    "SessionTree",
    "SessionsSpec",
    "load_session_set",
    "survey_sessions",
]


class SessionsReplay(Spec):
    """Replay of AgentX agent sessions: a folder of session `.json` files, or one."""

    path: str


class SessionsSpec(WorkloadBase):
    kind: Literal["sessions"]
    sessions: SessionsReplay

    @classmethod
    def from_data(cls, path: Path) -> SessionsSpec | None:
        """A folder or a `.json` file holds AgentX session files, replayed as they are."""
        if not path.is_dir() and path.suffix != ".json":
            return None
        description = f"replay of the agent sessions in {path}"
        return cls(name=path.name, description=description, kind="sessions", sessions=SessionsReplay(path=str(path)))

    def relative_to(self, folder: Path) -> SessionsSpec:
        if Path(self.sessions.path).is_absolute():
            return self
        sessions = self.sessions.model_copy(update={"path": str(folder / self.sessions.path)})
        return self.model_copy(update={"sessions": sessions})


@dataclass(frozen=True)
class PreparedSessions(Prepared[SessionsSpec]):
    sessions: SessionStream  # at `spec.scale` and `spec.output_scale`

    @classmethod
    def load(cls, spec: SessionsSpec) -> PreparedSessions:
        path = Path(spec.sessions.path)
        return cls(spec, open_session_stream(path, scale=spec.scale, output_scale=spec.output_scale))

    def context_needed(self) -> int:
        # Over the read-ahead's calls (session_stream.py): the p95, so outliers are skipped, not fitted.
        return self.sessions.context_needed()

    def scaled(self, factor: float) -> PreparedSessions:
        spec = self.spec.scaled(factor)
        return PreparedSessions(spec, self.sessions.with_scale(spec.scale, spec.output_scale))

    def check_fits(self, max_model_len: int, scale: float | None) -> None:
        """Nothing to refuse: a call too long for the model ends its session and is counted."""


KIND = WorkloadKind(SessionsSpec, PreparedSessions.load)
