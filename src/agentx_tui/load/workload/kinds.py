"""Every workload kind, by its `kind:` name (workloads/README.md): the one list a new kind joins.

Each kind is one module of this package holding its spec, its prepared form and its `KIND`; its loop
is in load/sending/kinds/, registered there under the same name.
"""

from __future__ import annotations

from typing import Any

from agentx_tui.load.workload import agent, none, sessions, trace
from agentx_tui.load.workload.base import WorkloadKind

KINDS: dict[str, WorkloadKind[Any]] = {kind.name: kind for kind in (agent.KIND, trace.KIND, sessions.KIND, none.KIND)}
