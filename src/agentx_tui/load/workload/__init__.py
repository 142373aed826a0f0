"""What is sent: workload specs and the data they replay, and the prompt text built from them.

No asyncio and no network here: a workload is loaded, checked, scaled and turned into prompts as plain
data, before any server starts (load/sending/ puts it on the wire; of a big session corpus, only its
index and a read-ahead before, the rest as users take it). One module per kind, named after it,
holding its spec model, its prepared form and its `KIND` (base.WorkloadKind):

    agent           `kind: agent`: synthetic agent sessions (the presets)
    trace           `kind: trace`: a Mooncake JSONL trace
    sessions        `kind: sessions`: AgentX session files (session_trees: a session → its tree;
                    session_stream: read as users take them; session_prompts: a pass's text)
    none            `kind: none`: observe only, nothing is sent
    kinds           the registry: every kind's `KIND`, by its name
    base            what every kind shares, and the one scaling rule
    spec            a file or preset → its spec; prepared: the spec with its data, fitted to a context
    text, conversation, distributions   token-exact text, a growing history, length distributions
"""

from agentx_tui.load.workload.base import StopRule, WorkloadBase
from agentx_tui.load.workload.prepared import (
    PreparedWorkload,
    fit_to_context,
    fit_to_servers,
    prepare,
    prepare_workload,
)
from agentx_tui.load.workload.spec import Workload, list_presets, load_workload, parse_workload, presets_dir

__all__ = [
    "PreparedWorkload",
    "StopRule",
    "Workload",
    "WorkloadBase",
    "fit_to_context",
    "fit_to_servers",
    "list_presets",
    "load_workload",
    "parse_workload",
    "prepare",
    "prepare_workload",
    "presets_dir",
]
