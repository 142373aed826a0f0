"""What one request came to: the summary the statistics count (`Completed`, `Failed`: local ones
handed over directly, a worker's through its pipe, a proxied call's alike) and the fuller record the
driver keeps for inspection (`RequestRecord`). Times are `time.monotonic()`, durations seconds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Completed:
    """The figures of one finished request that the statistics need (times: `time.monotonic()`)."""

    sent_at: float
    first_token_at: float | None
    last_token_at: float | None
    ended_at: float
    prompt_tokens: int
    cached_tokens: int | None
    output_tokens: int
    # The block-aligned prefix an earlier call of the run had sent: the ceiling's count and the split's
    # reused tokens (measure/reuse.py). None when not known (a proxied call's prompt not tokenized).
    ceiling_tokens: int | None
    ttft_s: float | None
    decode_tokens_per_s: float | None
    request_itl_s: float | None = None  # (last − first token) / (output tokens − 1): AgentX's per-request ITL
    itl: Mapping[int, float] = field(default_factory=dict)  # token gaps, bucketed (see `bucketed`)
    # The global id of the session (tree) the request belongs to: requests of one tree are not
    # independent, which a confidence interval must respect. -1 when unknown.
    tree: int = -1
    # The user slot (`-u`) whose session tree it is (a sub-agent's: its parent's): one slot runs one tree
    # after another, so its tokens over a window are the cluster a throughput interval needs. -1: unknown.
    user: int = -1
    step: int = 0  # the call's place in its agent's loop (1-based; 0: unknown): the step curve's row
    # A timed replay's schedule (docs/metrics.md, "Honest clocks"): when the request was due, and how
    # long after that its first attempt went out (a busy user's or the connection limit's wait). None:
    # not scheduled, its clock starts when it was sent.
    due_at: float | None = None
    schedule_lag_s: float | None = None
    # How long the call's session sat idle before it (docs/metrics.md §4, "Where the prefix went"): its
    # start − the end of its agent's previous call (a sub-agent's first: the parent call it followed).
    # None for a session's first call and for a trace's requests (each a session of its own).
    idle_s: float | None = None

    @property
    def started_at(self) -> float:
        """Where TTFT and E2E count from: when it was due, else when it was sent."""
        return self.sent_at if self.due_at is None else self.due_at

    @property
    def e2e_s(self) -> float:
        """The start to the last content token (a late usage chunk and `[DONE]` are not the answer's
        time); the end of the body for an answer without content."""
        end = self.last_token_at if self.last_token_at is not None else self.ended_at
        return end - self.started_at


@dataclass(frozen=True, slots=True)
class Failed:
    """A request that failed (`final`) or will be retried; `at` is when it ended."""

    kind: str
    final: bool
    sent_at: float
    at: float
    tree: int = -1  # the session tree it belonged to (-1: unknown): a final failure fails its task


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as the driver saw it (times from `time.monotonic()`, durations in seconds)."""

    endpoint: str
    user: int
    session: int
    step: int
    sent_at: float
    ended_at: float
    status: int | None  # HTTP status; None when no response arrived
    error: str | None  # error kind; None for a completed request
    expected_prompt_tokens: int | None  # what the driver meant to send
    expected_output_tokens: int
    prompt_tokens: int | None = None  # server usage
    cached_tokens: int | None = None  # usage.prompt_tokens_details.cached_tokens; None when absent
    output_tokens: int | None = None
    ceiling_tokens: int = 0
    ttft_s: float | None = None
    itl_s: float | None = None  # token-weighted mean inter-token latency
    e2e_s: float | None = None
    decode_tokens_per_s: float | None = None
    malformed_lines: int = 0
    attempts: int = 1
    due_at: float | None = None  # a timed replay's schedule: when the request was due (None: not scheduled)
