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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

from agentx_tui.measure.histogram import bucketed


@dataclass(frozen=True, slots=True)
class AnswerFigures:
    """What one finished answer says, in the statistics' terms (None: not known or not defined)."""

    output_tokens: int | None
    ttft_s: float | None
    decode_tokens_per_s: float | None
    request_itl_s: float | None
    gaps: tuple[tuple[float, float], ...]  # see `token_gaps`
    e2e_per_token_s: float | None = None  # see `e2e_per_token`
    first_token_at: float | None = None  # the first and last content reads (None: no content time)
    last_token_at: float | None = None

    @property
    def itl_mean_s(self) -> float | None:
        """The token-weighted mean inter-token latency (the driver's record keeps it)."""
        weight = sum(w for _, w in self.gaps)
        return sum(g * w for g, w in self.gaps) / weight if weight else None

    def itl_buckets(self) -> dict[int, float]:
        """The token gaps as histogram buckets: what `Completed.itl` carries."""
        return bucketed(self.gaps)


def answer_figures(
    sent_at: float,
    read_times: Sequence[float],
    read_events: Sequence[int],
    *,
    reported_output: int | None,
    counted_events: int | None,
    ended_at: float | None = None,
) -> AnswerFigures:
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
    return AnswerFigures(
        output_tokens=output,
        ttft_s=None if first is None else first - sent_at,
        decode_tokens_per_s=decode,
        request_itl_s=request_itl,
        gaps=token_gaps(read_times, read_events, sum(read_events), output),
        e2e_per_token_s=e2e_per_token(sent_at, last, ended_at, output),
        first_token_at=first,
        last_token_at=last,
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
