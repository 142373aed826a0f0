"""What a set of requests adds up to, two jobs kept apart:

- `Tally`: the statistics' sums and latency *distributions* (log histograms, mergeable exactly) of
  `Completed` requests, for percentiles: a one-second slot's, the run's, a sweep window's. Its one
  path per request is `count`, or its two halves where a slot splits a request by time
  (`count_prompt` when the first token came, `count_answer` when it ended).
- `CallTally`: a users-table row's running *means* and last TTFT, per call as it ends, from the
  call's `MeasuredAnswer`: a few sums, no histogram, never merged (a row is one user's or one proxied
  session's), and its errors.

Both read one call's figures as `measure_answer` worked them out (r_i included: a `Completed` carries
the answer's), so a row and the run never disagree on what a call measured."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentx_tui.measure.histogram import IntegerCounts, LogHistogram
from agentx_tui.measure.record import Completed
from agentx_tui.measure.reuse import PromptSplit, ReuseTally
from agentx_tui.measure.time_split import TimeSplit
from agentx_tui.measure.timing import MeasuredAnswer


@dataclass
class Tally:
    """Counts and histograms of a set of requests (a one-second slot, or a sweep point's window)."""

    prompt: int = 0
    cached: int = 0
    prompt_with_cached: int = 0  # prompt tokens of requests that reported cached tokens
    ceiling: int = 0
    prompt_with_ceiling: int = 0  # prompt tokens of requests whose ceiling is known
    output: float = 0.0
    requests: int = 0
    ttft: LogHistogram = field(default_factory=LogHistogram)
    itl: LogHistogram = field(default_factory=LogHistogram)
    request_itl: LogHistogram = field(default_factory=LogHistogram)
    decode: LogHistogram = field(default_factory=LogHistogram)
    e2e: LogHistogram = field(default_factory=LogHistogram)
    # A timed replay's lag: first attempt sent − due, of the scheduled requests (measure/schedule.py).
    schedule_lag: LogHistogram = field(default_factory=LogHistogram)
    # AgentX's E2E-normalized latency r_i, seconds per output token: 1 / its percentiles is the
    # E2E-normalized interactivity, the North Star (docs/metrics.md).
    e2e_per_token: LogHistogram = field(default_factory=LogHistogram)
    # Where the North Star's time went (measure/time_split.py; docs/metrics.md, "Where the time went"):
    # r_i's first-token and stall parts per bucket of r_i; the requests' output tokens, exactly; the
    # exact TTFT sum (its mean); the decode stalls and the decode spans they are a share of, over the
    # requests with content times (`streamed`).
    time_split: TimeSplit = field(default_factory=TimeSplit)
    output_lengths: IntegerCounts = field(default_factory=IntegerCounts)
    ttft_sum: float = 0.0  # Σ TTFT of the requests in `ttft`
    streamed: int = 0
    decode_span: float = 0.0
    stalls: int = 0
    stall_excess: float = 0.0
    # Where the prompts went: cold, hit, evicted; the idle times and the retention curve (measure/reuse.py).
    reuse: ReuseTally = field(default_factory=ReuseTally)

    def count(self, done: Completed) -> None:
        """All of `done` at once: its prompt side, its latencies and its output tokens (a set of whole
        requests: the run's, a window's counted ones)."""
        self.count_prompt(done)
        self.count_answer(done)
        self.output += done.output_tokens

    def count_prompt(self, done: Completed) -> None:
        """`done`'s prompt tokens and what a cache held of them (hit rate, ceiling); a slot counts them
        when the first token came, as the prompt rate does."""
        self.prompt += done.prompt_tokens
        self.reuse.count(done)
        if done.cached_tokens is not None:
            self.cached += done.cached_tokens
            self.prompt_with_cached += done.prompt_tokens
        if done.ceiling_tokens is not None:
            self.ceiling += done.ceiling_tokens
            self.prompt_with_ceiling += done.prompt_tokens

    def count_answer(self, done: Completed) -> None:
        """`done` as one request and its latencies; a slot counts them when it ended. Its output tokens
        are not: a slot has them spread over the time they came (measure/slots.py)."""
        self.requests += 1
        if done.ttft_s is not None:
            self.ttft.add(done.ttft_s)
            self.ttft_sum += done.ttft_s
        if done.decode_tokens_per_s is not None:
            self.decode.add(done.decode_tokens_per_s)
        if done.request_itl_s is not None:
            self.request_itl.add(done.request_itl_s)
        self.e2e.add(done.e2e_s)
        if done.e2e_per_token_s is not None:  # r_i, worked out once with the answer's figures
            self.e2e_per_token.add(done.e2e_per_token_s)
        if done.itl:
            self.itl.merge(done.itl)
        if done.schedule_lag_s is not None:
            self.schedule_lag.add(done.schedule_lag_s)
        self.output_lengths.add(done.output_tokens)
        self.time_split.count(done)
        span = done.decode_span_s
        if span is not None:
            self.streamed += 1
            self.decode_span += span
            self.stalls += done.stalls
            self.stall_excess += done.stall_excess_s

    def merge(self, other: Tally) -> None:
        self.prompt += other.prompt
        self.cached += other.cached
        self.prompt_with_cached += other.prompt_with_cached
        self.ceiling += other.ceiling
        self.prompt_with_ceiling += other.prompt_with_ceiling
        self.output += other.output
        self.requests += other.requests
        for name in ("ttft", "itl", "request_itl", "decode", "e2e", "e2e_per_token"):
            getattr(self, name).merge(getattr(other, name))
        self.schedule_lag.merge(other.schedule_lag)
        self.reuse.merge(other.reuse)
        self.time_split.merge(other.time_split)
        self.output_lengths.merge(other.output_lengths)
        self.ttft_sum += other.ttft_sum
        self.streamed += other.streamed
        self.decode_span += other.decode_span
        self.stalls += other.stalls
        self.stall_excess += other.stall_excess


@dataclass(slots=True, kw_only=True)
class CallTally:
    """A row's per-call figures, as the users table shows them: a simulated user's (`User`) and a real
    agent's seen through the proxy (agentx_tui.proxy) are counted alike."""

    requests: int = 0  # calls completed
    errors: int = 0
    output_tokens: int = 0
    last_ttft: float | None = None  # of the latest call that had a first token
    decode_sum: float = 0.0
    decode_n: int = 0
    itl_sum: float = 0.0  # per-request ITL, summed for the session's mean interactivity
    itl_n: int = 0
    e2e_per_token_sum: float = 0.0  # r_i (E2E per output token), summed for the row's E2E-normalized rate
    e2e_per_token_n: int = 0
    # The split of its calls' prompts (measure/reuse.py), of those whose server reported cached_tokens.
    reused_reported: int = 0
    hit: int = 0

    def count(self, answer: MeasuredAnswer) -> None:
        """One completed call."""
        self.requests += 1
        self.output_tokens += answer.output_tokens or 0
        if answer.ttft_s is not None:
            self.last_ttft = answer.ttft_s
        if answer.decode_tokens_per_s is not None:
            self.decode_sum += answer.decode_tokens_per_s
            self.decode_n += 1
        if answer.request_itl_s is not None:
            self.itl_sum += answer.request_itl_s
            self.itl_n += 1
        if answer.e2e_per_token_s is not None:
            self.e2e_per_token_sum += answer.e2e_per_token_s
            self.e2e_per_token_n += 1

    def count_reuse(self, split: PromptSplit | None) -> None:
        """A completed call's prompt split (measure/reuse.py); None, or no hits, when not known."""
        if split is not None and split.hit is not None:
            self.reused_reported += split.reused
            self.hit += split.hit

    @property
    def prefix_hit_share(self) -> float | None:
        """Σ hit ÷ Σ reused: how much of what this session sent again the server still had cached."""
        return self.hit / self.reused_reported if self.reused_reported else None

    @property
    def last_ttft_s(self) -> float | None:
        return self.last_ttft

    @property
    def decode_tokens_per_s(self) -> float | None:
        return self.decode_sum / self.decode_n if self.decode_n else None

    @property
    def interactivity_tokens_per_s(self) -> float | None:
        return self.itl_n / self.itl_sum if self.itl_sum > 0 else None

    @property
    def e2e_interactivity_tokens_per_s(self) -> float | None:
        return self.e2e_per_token_n / self.e2e_per_token_sum if self.e2e_per_token_sum > 0 else None

    def tallied(self) -> dict[str, float | int | None]:
        """The `UserRow` fields these figures fill (also readable as attributes of the same names)."""
        return {name: getattr(self, name) for name in TALLIED_FIELDS}


# What a `CallTally` fills of a `UserRow`.
TALLIED_FIELDS = (
    "requests",
    "errors",
    "output_tokens",
    "last_ttft_s",
    "decode_tokens_per_s",
    "interactivity_tokens_per_s",
    "e2e_interactivity_tokens_per_s",
    "prefix_hit_share",
)
