"""`kind: agent` (the default): synthetic agent sessions whose context grows every step (workloads/README.md).

A session opens with the shared system prompt and a user message (the session's unique prefix + its
first message), then repeats: send the whole history, append the answer, wait the tool's latency,
append the tool result. Sub-agents open with the same shared prompt and the parent's unique prefix,
so they hit the parent's cached blocks. Every length is a distribution (load/workload/distributions.py).

This module holds the spec and the text of a session's pieces; the loop that sends them is
load/sending/kinds/agent.py.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, model_validator

from agentx_tui.errors import WorkloadError
from agentx_tui.load.workload.base import Prepared, Spec, WorkloadBase, WorkloadKind, checked_factor
from agentx_tui.load.workload.conversation import Conversation, Segment
from agentx_tui.load.workload.distributions import Constant, Dist
from agentx_tui.load.workload.text import TextMaker

# The first steps a fitted workload must hold: enough for a session to grow and hit the cache.
_FIT_STEPS = 4
SHARED_KEY = 0x51A7ED
_SCALED_LENGTHS = (
    "shared_prefix_tokens",
    "unique_prefix_tokens",
    "first_message_tokens",
    "output_tokens",
    "tool_result_tokens",
)


class SubAgents(Spec):
    """After every `every_steps`-th step the parent spawns children that share its prefix and waits."""

    every_steps: int = Field(ge=1)
    children: Dist = Field(default_factory=lambda: Constant(value=2))
    steps: Dist = Field(default_factory=lambda: Constant(value=4))
    task_tokens: Dist = Field(default_factory=lambda: Constant(value=200))


class Arrival(Spec):
    """`closed`: each user starts a new session when its last one ends. `poisson`: sessions arrive at
    `rate_per_s`, at most `users` at once (later arrivals wait)."""

    mode: Literal["closed", "poisson"] = "closed"
    rate_per_s: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _rate_for_poisson(self) -> Arrival:
        if self.mode == "poisson" and self.rate_per_s is None:
            raise ValueError("poisson arrival needs rate_per_s (sessions per second, > 0)")
        return self


class AgentSpec(WorkloadBase):
    kind: Literal["agent"] = "agent"
    shared_prefix_tokens: Dist = Field(default_factory=lambda: Constant(value=0))
    unique_prefix_tokens: Dist = Field(default_factory=lambda: Constant(value=0))
    first_message_tokens: Dist = Field(default_factory=lambda: Constant(value=100))
    steps: Dist = Field(default_factory=lambda: Constant(value=10))
    output_tokens: Dist = Field(default_factory=lambda: Constant(value=200))
    tool_result_tokens: Dist = Field(default_factory=lambda: Constant(value=500))
    tool_latency_s: Dist = Field(default_factory=lambda: Constant(value=0))
    subagents: SubAgents | None = None
    arrival: Arrival = Field(default_factory=Arrival)
    # `synthetic`: the history holds text of the generated length made by the driver (token-exact);
    # `echo`: the history holds the text the server streamed back.
    history: Literal["synthetic", "echo"] = "synthetic"

    def scaled(self, factor: float) -> AgentSpec:
        """Every token length multiplied by `factor` (steps and latencies unchanged)."""
        factor = checked_factor(factor)
        update: dict[str, Any] = {key: getattr(self, key).scaled(factor) for key in _SCALED_LENGTHS}
        if self.subagents is not None:
            update["subagents"] = self.subagents.model_copy(
                update={"task_tokens": self.subagents.task_tokens.scaled(factor)}
            )
        update["scale"] = self.scale * factor
        return self.model_copy(update=update)

    def outputs_scaled(self, factor: float) -> AgentSpec:
        """Every answer's drawn length multiplied by `factor` (the output scale, base.py); the other
        draws are unchanged, and a seed draws the same sequence, so only the answers differ."""
        factor = checked_factor(factor, "--output-scale")
        return self.model_copy(
            update={"output_tokens": self.output_tokens.scaled(factor), "output_scale": self.output_scale * factor}
        )

    def context_needed(self) -> int:
        """Tokens of context the first few steps of a session need."""
        steps = min(self.steps.mean_value, _FIT_STEPS)
        per_step = self.output_tokens.mean_value + self.tool_result_tokens.mean_value
        opening = self.shared_prefix_tokens.upper + self.unique_prefix_tokens.upper
        opening += self.first_message_tokens.upper
        return round(opening + max(steps - 1, 0) * per_step + self.output_tokens.upper)

    def check_fits(self, max_model_len: int, scale: float | None) -> None:
        """Refuse a workload whose sessions could never send a request: the loop would otherwise end
        every session at step 0 and the run would measure nothing."""
        shared = self.shared_prefix_tokens.mean_value
        first = (
            shared
            + self.unique_prefix_tokens.mean_value
            + self.first_message_tokens.mean_value
            + self.output_tokens.mean_value
        )
        if first < max_model_len:
            return
        at = f" at --scale {scale:g}" if scale is not None else ""
        what = (
            f"a shared prefix of about {shared:.0f} tokens"
            if shared >= max_model_len
            else f"a first request of about {first:.0f} tokens"
        )
        raise WorkloadError(
            f"Workload '{self.name}' has {what}{at}, more than the model's context of {max_model_len} tokens.",
            "Lower --scale, or leave it out to scale the workload to fit.",
        )


@dataclass(frozen=True)
class PreparedAgent(Prepared[AgentSpec]):
    """A synthetic workload needs no data: its spec is all there is."""

    def context_needed(self) -> int:
        return self.spec.context_needed()

    def scaled(self, factor: float) -> PreparedAgent:
        return PreparedAgent(self.spec.scaled(factor))

    def check_fits(self, max_model_len: int, scale: float | None) -> None:
        self.spec.check_fits(max_model_len, scale)


KIND = WorkloadKind(AgentSpec, PreparedAgent)


# -- the text of a session's pieces ------------------------------------------------------------------


@dataclass(frozen=True)
class Opening:
    """The first two messages' content of a session, shared by its sub-agents."""

    shared: Segment | None
    unique: Segment | None


def new_key(rng: random.Random) -> int:
    """Keys of unique text: drawn from the session's seeded generator, so a seed replays the same text."""
    return rng.getrandbits(60) + (1 << 61)


def segment(maker: TextMaker, rng: random.Random, tokens: int) -> Segment:
    """New text of `tokens` tokens, unique to this draw."""
    key = new_key(rng)
    text, real = maker.text(key, tokens)
    return Segment(key, text, real)


def opening(maker: TextMaker, w: AgentSpec, rng: random.Random, shared_tokens: int) -> Opening:
    """A session's shared prompt (the same text in every session) and its own unique prefix."""
    shared = None
    if shared_tokens > 0:
        text, tokens = maker.text(SHARED_KEY, shared_tokens)
        shared = Segment(SHARED_KEY, text, tokens)
    n = w.unique_prefix_tokens.draw_int(rng, floor=0)
    return Opening(shared, segment(maker, rng, n) if n > 0 else None)


def first_conversation(maker: TextMaker, start: Opening, first: Segment) -> Conversation:
    """The history a session (or a sub-agent) starts from: system prompt, then its first user message."""
    conv = Conversation(maker.model)
    if start.shared is not None:
        conv.add("system", [start.shared])
    conv.add("user", [s for s in (start.unique, first) if s is not None])
    return conv
