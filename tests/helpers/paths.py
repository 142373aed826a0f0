"""Where the tests find the repository's files and the shared public traces (never copied in)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED_TRACES = REPO.parent / "shared" / "traces"
AGENTX_WEKA = SHARED_TRACES / "agentx-weka"
MOONCAKE_TRACE = SHARED_TRACES / "mooncake_conversation_trace.jsonl"
