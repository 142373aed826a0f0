"""Which rates a tick shows (docs/metrics.md): the one place that chooses client or server figures.

When a load driver runs, token rates and latencies are what it measured (tokens it received, the
requests it timed); when observing only, they are the servers' own counters and histograms. The
dashboard, the headless lines, the report's charts and the cost meter all ask here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agentx_tui.snapshot.figures import Figures
from agentx_tui.snapshot.model import ClientReading, EndpointReading, Percentiles, Snapshot

RateSource = Literal["client", "server", "none"]


@dataclass(frozen=True)
class Rates:
    source: RateSource
    output: float | None = None
    prompt: float | None = None
    cached: float | None = None
    total: float | None = None  # cache + input + output (cached tokens are part of the prompt)
    requests: float | None = None
    ttft: Percentiles = field(default_factory=Percentiles)
    itl: Percentiles = field(default_factory=Percentiles)
    prefix_hit_rate: float | None = None  # the servers' window rate; the client's when they have none


def _sum(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _latency(figures: Figures, name: str) -> Percentiles:
    """The p50/p90/p99 of a latency figure (`ttft`, `itl`) as one `Percentiles`."""
    return Percentiles(**{p: getattr(figures, f"{name}_{p}_s") for p in ("p50", "p90", "p99")})


def window_rates(client: ClientReading | None, aggregate: EndpointReading | None) -> Rates:
    hit = aggregate.prefix_hit_rate_window if aggregate else None
    if client is not None:
        w = client.window
        return Rates(
            "client",
            w.output_tokens_per_s,
            w.prompt_tokens_per_s,
            w.cached_prompt_tokens_per_s,
            w.total_tokens_per_s,
            client.requests_per_s,
            _latency(w, "ttft"),
            _latency(w, "itl"),
            hit if hit is not None else w.prefix_cache_hit_rate_client,
        )
    if aggregate is None:
        return Rates("none")
    return Rates(
        "server",
        aggregate.generation_tokens_per_s,
        aggregate.prompt_tokens_per_s,
        aggregate.cached_prompt_tokens_per_s,
        _sum(aggregate.prompt_tokens_per_s, aggregate.generation_tokens_per_s),
        aggregate.requests_per_s,
        aggregate.ttft,
        aggregate.itl,
        hit,
    )


def rates(snap: Snapshot) -> Rates:
    """The window rates of one tick."""
    return window_rates(snap.client, snap.aggregate)


@dataclass(frozen=True)
class RunTokens:
    """Tokens over the run so far, from the same source as the rates."""

    total: float | None
    output: float | None


def run_tokens(client: ClientReading | None, aggregate: EndpointReading | None) -> RunTokens:
    if client is not None:
        ct = client.totals
        return RunTokens(float(ct.prompt_tokens + ct.output_tokens), float(ct.output_tokens))
    if aggregate is None:
        return RunTokens(None, None)
    st = aggregate.totals
    return RunTokens(_sum(st.prompt_tokens, st.generation_tokens), st.generation_tokens)
