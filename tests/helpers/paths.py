"""Where the tests find the repository's files and the shared public traces (never copied in).

Tests that only need session files or a trace as input make their own (tests/helpers/traces.py); the
shared traces are for the checks about the real data, which skip, saying why, where they are absent.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED_TRACES = REPO.parent / "shared" / "traces"
AGENTX_WEKA = SHARED_TRACES / "agentx-weka"
AGENTX_WEKA_ABSENT = "needs ../shared/traces/agentx-weka: the 40 real AgentX sessions, not shipped"
