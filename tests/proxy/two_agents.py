"""Two agents on the official `openai` client, as the task tests drive them through the proxy: agent B
(4 calls) and agent A (5 calls of its own and, after its third, a sub-agent of 3: 8 calls in its task),
each named by `X-Session-ID` (the sub-agent with `X-Parent-Session-ID` too): 12 calls in 2 tasks.
Sized, as `coding_agent`, for the tiny model's 4,096-token context."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from tests.proxy.agent import CallUsage, coding_agent

KEY = "sk-two-agents-3c9d1e"
B_CALLS, A_CALLS = 4, 8


@dataclass(frozen=True)
class Agent:
    """One agent's task: the names its sessions gave themselves, and every call it completed."""

    names: frozenset[str]
    calls: list[CallUsage]

    @property
    def tokens(self) -> int:
        """Σ (prompt + output) over its calls, as the server counted them: its task's tokens."""
        return sum(c.prompt_tokens + c.completion_tokens for c in self.calls)


def _marker(agent: str) -> str:
    return f"{agent}{uuid.uuid4().hex[:8]}"


async def agent_b(base_url: str) -> Agent:
    """`base_url` without `/v1`."""
    marker = _marker("b")
    calls = await coding_agent(base_url, marker=marker, api_key=KEY, steps=B_CALLS, sub_steps=0, seed=2)
    assert len(calls) == B_CALLS
    return Agent(frozenset({f"parent-{marker}"}), calls)


async def agent_a(base_url: str) -> Agent:
    marker = _marker("a")
    calls = await coding_agent(base_url, marker=marker, api_key=KEY, steps=A_CALLS - 3, sub_steps=3, seed=3)
    assert len(calls) == A_CALLS and sum(c.agent == "sub" for c in calls) == 3
    return Agent(frozenset({f"parent-{marker}", f"sub-{marker}"}), calls)
