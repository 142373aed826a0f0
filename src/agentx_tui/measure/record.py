"""What one request came to: the summary the statistics count (`Completed`, `Failed`: local ones
handed over directly, a worker's through its pipe, a proxied call's alike) and the fuller record the
driver keeps for inspection (`RequestRecord`). Times are `time.monotonic()`, durations seconds.

A finished call becomes a `Completed` in one place, `Completed.of_answer`, the load client's sender
and the proxy alike: its figures are the ones `measure_answer` (timing.py) worked out, r_i among them,
so every tally reads the same r_i and nothing downstream works it out again."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agentx_tui.measure.slots import Arrivals
from agentx_tui.measure.timing import MeasuredAnswer, answer_end


@dataclass(frozen=True, slots=True)
class Completed:
    """The figures of one finished request that the statistics need (times: `time.monotonic()`).
    Built from a call's `MeasuredAnswer` by `of_answer`; built field by field only where a test or a
    tool makes one up. Its figures are carried, not derived from its times: moving the times (with
    `dataclasses.replace`) keeps them right only when it moves them all alike, as a clock shift does."""

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
    # AgentX's E2E-normalized latency r_i = E2E / output tokens (timing.py `e2e_per_token`), from
    # `started_at`; None when not defined (no output token). Carried, not recomputed: a duration, it
    # stays as measured when a remote worker's times are moved onto the main clock.
    e2e_per_token_s: float | None = None
    # Where r_i went (timing.py): its first-token part TTFT / output tokens (None where r_i or TTFT is
    # not known; the decode part is r_i minus it), and its decode stalls: how many event gaps were
    # stalls and Σ (stalled gap − the request's median event gap), seconds. Durations: carried as
    # measured, like r_i. The decode span they are read against is `decode_span_s`.
    ttft_per_token_s: float | None = None
    stalls: int = 0
    stall_excess_s: float = 0.0
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
    # When its output came (docs/metrics.md §4, "Tokens in time"): its content events per second of the
    # clock (measure/slots.py `arrivals_of`); () when not counted so (a proxied call).
    arrivals: Arrivals = ()
    # What the live window counted of it while it streamed (slots.py `LiveCount`): its prompt tokens (the
    # client's estimate), and output tokens (an estimate) for its first `live_events` content events. Its
    # completion adds only the difference from the server's counts.
    live_prompt: int = 0
    live_output: float = 0.0
    live_events: int = 0

    @classmethod
    def of_answer(
        cls,
        answer: MeasuredAnswer,
        *,
        sent_at: float,
        ended_at: float,
        prompt_tokens: int,
        cached_tokens: int | None,
        ceiling_tokens: int | None,
        tree: int = -1,
        user: int = -1,
        step: int = 0,
        due_at: float | None = None,
        schedule_lag_s: float | None = None,
        idle_s: float | None = None,
        arrivals: Arrivals = (),
        live_prompt: int = 0,
        live_output: float = 0.0,
        live_events: int = 0,
    ) -> Completed:
        """A finished call as the statistics count it. `answer` is its `measure_answer`, worked out from
        its start: `due_at` when it was scheduled (a timed replay: "Honest clocks", docs/metrics.md),
        else `sent_at`; its content times, output tokens, TTFT, decode, ITL, r_i with its first-token
        part, and its decode stalls are taken from it."""
        return cls(
            sent_at=sent_at,
            first_token_at=answer.first_token_at,
            last_token_at=answer.last_token_at,
            ended_at=ended_at,
            prompt_tokens=prompt_tokens,
            cached_tokens=cached_tokens,
            output_tokens=answer.output_tokens or 0,
            ceiling_tokens=ceiling_tokens,
            ttft_s=answer.ttft_s,
            decode_tokens_per_s=answer.decode_tokens_per_s,
            request_itl_s=answer.request_itl_s,
            itl=answer.itl_buckets(),
            e2e_per_token_s=answer.e2e_per_token_s,
            ttft_per_token_s=answer.ttft_per_token_s,
            stalls=answer.stalls,
            stall_excess_s=answer.stall_excess_s,
            tree=tree,
            user=user,
            step=step,
            due_at=due_at,
            schedule_lag_s=schedule_lag_s,
            idle_s=idle_s,
            arrivals=arrivals,
            live_prompt=live_prompt,
            live_output=live_output,
            live_events=live_events,
        )

    @property
    def first_call(self) -> bool:
        """The first call of its session (no idle time before it): its prompt's own prefix is new to the
        server, cold unless another session shared it (measure/cold.py). A trace's request is a session
        of its own; a sub-agent's first call follows its parent's and is not."""
        return self.idle_s is None

    @property
    def started_at(self) -> float:
        """Where TTFT and E2E count from: when it was due, else when it was sent."""
        return self.sent_at if self.due_at is None else self.due_at

    @property
    def e2e_s(self) -> float:
        """From the start to where E2E ends (timing.py `answer_end`)."""
        return answer_end(self.last_token_at, self.ended_at) - self.started_at

    @property
    def decoded(self) -> tuple[float, float]:
        """When its output tokens came, (first, last): its first and last content tokens; both at
        where E2E ends (the end of its body) for an answer without content times."""
        end = answer_end(self.last_token_at, self.ended_at)
        return (end if self.first_token_at is None else self.first_token_at), end

    @property
    def decode_span_s(self) -> float | None:
        """First → last content token: the span its decode stalls are a share of (its event gaps add up
        to it). None for an answer without content times (not streamed)."""
        if self.first_token_at is None or self.last_token_at is None:
            return None
        return self.last_token_at - self.first_token_at


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
