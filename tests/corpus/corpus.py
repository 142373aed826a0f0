"""A small published corpus, as the SemiAnalysis datasets lay theirs out (docs/sessions.md): a dataset card,
`stats.txt`, plots, and `traces.jsonl`, one session a line, in the captures' own shape (36-hex-digit
ids, sub-agent calls on the session's clock, fields the replay does not read)."""

from __future__ import annotations

import json
from typing import Any

REPO = "semianalysisai/cc-traces-weka-fixture"
SESSION_IDS = ("009dfc4e83422be8d3daa41cfda78036b2cd", "00ac905ea15e7901d7e2e5e41eb2e8f09684",
               "0605169f853339123b00578c5fe0204b4a79")  # fmt: skip


def call(t: float, ids: list[int], *, kind: str = "n", api: float = 1.0, think: float = 0.5) -> dict[str, Any]:
    # The captures' key order (the dataset viewer shows t, model, in, out, hash_ids, api_time, then the rest).
    return {"t": t, "model": "claude-opus-4-7", "in": 64 * len(ids) - 30, "out": 20, "hash_ids": ids,
            "api_time": api, "ttft": 0.4, "think_time": think, "type": kind}  # fmt: skip


def session(session_id: str, requests: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": session_id, "models": ["claude-opus-4-7", "claude-haiku-4-5-20251001"], "block_size": 64,
            "hash_id_scope": "local", "requests": requests}  # fmt: skip


def with_sub_agent() -> dict[str, Any]:
    """A sub-agent spawned at 3 s for 4 s, its calls at 3.1 s and 5 s on the session's clock."""
    worker = {"type": "subagent", "t": 3.0, "agent_id": "agent_001", "subagent_type": "Explore", "status": "completed",
              "duration_ms": 4000, "tool_use_count": 2, "total_tokens": 900, "models": ["claude-haiku-4-5-20251001"],
              "requests": [call(3.1, [0, 1, 90]), call(5.0, [0, 1, 90, 91])]}  # fmt: skip
    return session(SESSION_IDS[0], [call(0.0, [0, 1, 2], kind="s"), worker, call(9.0, [0, 1, 2, 3])])


def with_flat_sub_agents() -> dict[str, Any]:
    """A worker's calls recorded flat among the parent's (forked from its first two blocks, untagged)."""
    return session(SESSION_IDS[1], [call(0.0, [0, 1, 2]), call(1.0, [0, 1, 50]), call(2.5, [0, 1, 2, 3]),
                                    call(3.0, [0, 1, 50, 51])])  # fmt: skip


def plain() -> dict[str, Any]:
    return session(SESSION_IDS[2], [call(0.0, [0, 1]), call(4.0, [0, 1, 2]), call(8.0, [0, 1, 2, 3])])


def traces(*sessions: dict[str, Any]) -> bytes:
    return "".join(json.dumps(s, separators=(",", ":")) + "\n" for s in sessions).encode()


def corpus_files(traces_jsonl: bytes | None = None) -> dict[str, bytes]:
    return {
        "README.md": b"---\nlicense: apache-2.0\n---\n# CC traces (fixture)\n",
        "stats.txt": b"sessions 3\n",
        "plots/isl_hist.png": b"\x89PNG\r\n\x1a\n not really",
        "traces.jsonl": traces(with_sub_agent(), with_flat_sub_agents(), plain())
        if traces_jsonl is None
        else traces_jsonl,
    }
