"""A finished answer's times and counts as the figures define them (docs/metrics.md): the token gaps
behind ITL, one sample per network read."""

from __future__ import annotations

from collections.abc import Sequence


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
