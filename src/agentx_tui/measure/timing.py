"""A finished answer's times and counts as the figures define them (docs/metrics.md), in one place:
the load client's sender and the proxy both turn what they read into figures here.

    output tokens       the server's `usage.completion_tokens`, else the content events counted
    TTFT                first content − when the request was sent (or reached the proxy, or was
                        due in a timed replay: `sent_at` is whichever the caller counts from)
    decode tok/s        output tokens / (last content − first content), with 2 or more tokens
    per-request ITL     (last content − first content) / (output tokens − 1): AgentX's ITL
    token gaps          (gap per token, tokens) per network read after the first with content
    where E2E ends      the last content token; without a content time (not streamed), the end
                        of the body (`answer_end`: the one rule for E2E, r_i and when tokens came)
    E2E per token       (where E2E ends − start) / output tokens, with 1 or more tokens: AgentX's
                        E2E-normalized latency r_i, whose inverted percentiles are the North Star
                        (E2E-normalized interactivity), worked out once per request and carried
                        in its `Completed`
    first-token part    TTFT / output tokens: r_i's part spent before the first token (the rest of
                        r_i is its decode part), where both are known
    decode stalls       the event gaps longer than 3 × the request's median event gap, counted and
                        their excess over that median summed (`decode_stalls`)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import overload

from agentx_tui.measure.histogram import bucketed
from agentx_tui.measure.percentile import linear_quantile

# A gap longer than this many times its own request's median event gap is a decode stall.
STALL_FACTOR = 3.0


@dataclass(frozen=True, slots=True)
class MeasuredAnswer:
    """What one finished answer says, in the statistics' terms (None: not known or not defined)."""

    output_tokens: int | None
    ttft_s: float | None
    decode_tokens_per_s: float | None
    request_itl_s: float | None
    gaps: tuple[tuple[float, float], ...]  # see `token_gaps`
    e2e_per_token_s: float | None = None  # see `e2e_per_token`
    first_token_at: float | None = None  # the first and last content reads (None: no content time)
    last_token_at: float | None = None
    ttft_per_token_s: float | None = None  # TTFT / output tokens: r_i's first-token part
    stalls: int = 0  # decode stalls (see `decode_stalls`): how many event gaps were stalls
    stall_excess_s: float = 0.0  # and Σ (stalled gap − the request's median event gap)

    @property
    def itl_mean_s(self) -> float | None:
        """The token-weighted mean inter-token latency (the driver's record keeps it)."""
        weight = sum(w for _, w in self.gaps)
        return sum(g * w for g, w in self.gaps) / weight if weight else None

    def itl_buckets(self) -> dict[int, float]:
        """The token gaps as histogram buckets: what `Completed.itl` carries."""
        return bucketed(self.gaps)


def measure_answer(
    sent_at: float,
    read_times: Sequence[float],
    read_events: Sequence[int],
    *,
    reported_output: int | None,
    counted_events: int | None,
    ended_at: float | None = None,
) -> MeasuredAnswer:
    """The figures of an answer sent at `sent_at` whose content came in reads at `read_times` (with
    `read_events` content events each; both empty for an answer that was not streamed).

    `reported_output` is the server's count (`usage.completion_tokens`); `counted_events` the content
    events to fall back on without it (one token each: exact for vLLM's one token per event, an
    undercount when a server batches tokens into events), None where the caller does not trust them
    (a failed request's partial stream). `ended_at` (when the answer ended) stands in for the last
    content time of an answer that has none (not streamed), for its E2E per token."""
    output = reported_output if reported_output is not None else counted_events
    first = read_times[0] if read_times else None
    last = read_times[-1] if read_times else None
    decode = request_itl = None
    if output and output > 1 and first is not None and last is not None and last > first:
        span = last - first
        decode, request_itl = output / span, span / (output - 1)
    ttft = None if first is None else first - sent_at
    e2e = e2e_per_token(sent_at, last, ended_at, output)
    stalls, excess = decode_stalls(read_times, read_events)
    return MeasuredAnswer(
        output_tokens=output,
        ttft_s=ttft,
        decode_tokens_per_s=decode,
        request_itl_s=request_itl,
        gaps=token_gaps(read_times, read_events, sum(read_events), output),
        e2e_per_token_s=e2e,
        first_token_at=first,
        last_token_at=last,
        # Defined where r_i is (so with an output token), and part of it: TTFT/OSL + decode/OSL = r_i.
        ttft_per_token_s=None if e2e is None or ttft is None or not output else ttft / output,
        stalls=stalls,
        stall_excess_s=excess,
    )


@overload
def answer_end(last_token_at: float | None, ended_at: float) -> float: ...


@overload
def answer_end(last_token_at: float | None, ended_at: float | None) -> float | None: ...


def answer_end(last_token_at: float | None, ended_at: float | None) -> float | None:
    """Where a request's E2E ends: its last content token, for a usage chunk and `[DONE]` that a
    server sends late (vLLM can) are not the answer; without a content time (an answer not streamed,
    or none yet), the end of its body (None while that is not known either)."""
    return last_token_at if last_token_at is not None else ended_at


def e2e_per_token(
    start: float, last_token_at: float | None, ended_at: float | None, output_tokens: int | None
) -> float | None:
    """AgentX's E2E-normalized latency of one successful request, r_i = E2EL_i / OSL_i (docs/metrics.md):
    from its start to its last content token (the answer's end when no token time is known), over its
    output tokens. None without an output token or a positive end-to-end time."""
    end = answer_end(last_token_at, ended_at)
    if not output_tokens or output_tokens < 1 or end is None or not end > start:
        return None
    return (end - start) / output_tokens


def token_gaps(
    times: Sequence[float], counts: Sequence[int], events: int, output_tokens: int | None
) -> tuple[tuple[float, float], ...]:
    """(gap per token, tokens) for every read after the first that carried content. A content event
    may hold several tokens: each event is weighted by the server's output tokens per event, so the
    weights add up to the tokens that arrived after the first read."""
    if len(times) < 2:
        return ()
    factor = output_tokens / events if output_tokens is not None and events > 0 else 1.0
    samples = []
    for i in range(1, len(times)):
        tokens = counts[i] * factor
        if tokens > 0:
            samples.append(((times[i] - times[i - 1]) / tokens, tokens))
    return tuple(samples)


def decode_stalls(times: Sequence[float], events: Sequence[int]) -> tuple[int, float]:
    """(stalls, Σ excess) of one answer whose content came in network reads at `times`, with `events`
    content events each (docs/metrics.md, "Decode stalls").

    Gaps are measured between content *events* (SSE chunks: vLLM sends one per engine step and
    request, a speculative step's several tokens in one): each event's gap counts once whatever tokens
    it holds, and a read that brought several events spreads its gap from the read before evenly over
    them (the events after the first one of the first read have no gap: they came with the first
    token). So the event gaps add up to the decode span, first → last content token. A gap longer than
    `STALL_FACTOR` × the median of the request's event gaps is a stall; its excess is gap − median.

    Events rather than tokens: spread over the tokens of its event, a step's gap would read every
    one-token step (a draft rejected) as a stall whenever the acceptance length exceeds 3. (0, 0.0)
    without a gap (under two reads with content). The median is the linear rule's (percentile.py) on
    the sorted gaps: a sort in C costs less than a selection in Python for the gaps of any answer
    (bench/request_accounting.py measures the whole)."""
    if len(times) < 2:
        return 0, 0.0
    if events.count(1) == len(events) - (events[0] != 1):
        # One event a read after the first (vLLM's usual stream): each read's gap is its event's, and
        # comprehensions do it at C speed.
        gaps = [later - earlier for earlier, later in zip(times, islice(times, 1, None), strict=False)]
        median = linear_quantile(sorted(gaps), 0.5)
        stalled = [gap for gap in gaps if gap > STALL_FACTOR * median]
        return len(stalled), sum(stalled) - len(stalled) * median
    per_read: list[tuple[float, int]] = []  # each read after the first: (its events' gap, its events)
    gaps = []  # one per event
    previous = times[0]
    for i in range(1, len(times)):
        n = events[i]
        if n < 1:  # no content event: not a content time (the scanner records none such)
            continue
        gap = (times[i] - previous) / n
        previous = times[i]
        per_read.append((gap, n))
        gaps.extend([gap] * n)
    if not gaps:
        return 0, 0.0
    median = linear_quantile(sorted(gaps), 0.5)
    stalls, excess = 0, 0.0
    for gap, n in per_read:
        if gap > STALL_FACTOR * median:
            stalls += n
            excess += n * (gap - median)
    return stalls, excess
