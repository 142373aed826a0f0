"""A set of requests' headline figures (docs/metrics.md §4), computed in one place.

The client's rate window and its whole run (`ClientStats.figures`), a sweep point's window and a
`--precision` run's (sweep/points.py) are all a `Tally` read by `tally_figures`: the token rates over the
window's span, the latency percentiles, decode and E2E-normalized interactivity (1 / a percentile of
per-request ITL or of r_i), the client's prefix-cache hit rate, the workload's ceiling, and where the
prompts went (measure/reuse.py: the evicted share, the retention curve, the agents' idle times).
"""

from __future__ import annotations

from agentx_tui.measure.tally import Tally
from agentx_tui.snapshot import Figures
from agentx_tui.snapshot.stat import ratio


def tally_figures(
    tally: Tally,
    *,
    span: float | None,
    cached_reported: bool,
    prompts: Tally | None = None,
    prompt: float | None = None,
    output: float | None = None,
) -> Figures:
    """`tally`'s figures; token rates over `span` seconds (None: no rates, the run's are the report's).

    `prompts` is the prompt side when it is not `tally`'s own: a measured window (measure/window.py)
    counts its latencies over the requests that started and ended inside, but its prompt and cached
    tokens, hit rates and reuse over the prompts whose first token came inside, one set for all of them.
    `prompt` and `output` are the prompt and output tokens to rate when they are not the prompt side's
    and the tally's own (the live window's: only the part of its oldest slot that lies inside it; a
    measured window's: the output decoded inside it). The cached-token rate is None unless the server
    `cached_reported` its cached tokens."""
    side = tally if prompts is None else prompts
    prompt = side.prompt if prompt is None else prompt
    output = tally.output if output is None else output

    def per_s(tokens: float) -> float | None:
        return tokens / span if span else None

    ttft, itl, e2e = tally.ttft.percentiles(), tally.itl.percentiles(), tally.e2e.percentiles()
    # The requests that set the North Star (r_i at or above its p90), and those at or above the median.
    north_star = tally.time_split.tail(tally.e2e_per_token.quantile(0.9))
    median = tally.time_split.tail(tally.e2e_per_token.quantile(0.5))
    return Figures(
        requests_completed=tally.requests,
        total_tokens_per_s=per_s(prompt + output),
        output_tokens_per_s=per_s(output),
        prompt_tokens_per_s=per_s(prompt),
        cached_prompt_tokens_per_s=per_s(side.cached) if cached_reported else None,
        e2e_interactivity_p50_tokens_per_s=tally.e2e_per_token.inverse_quantile(0.5),
        e2e_interactivity_p75_tokens_per_s=tally.e2e_per_token.inverse_quantile(0.75),
        e2e_interactivity_p90_tokens_per_s=tally.e2e_per_token.inverse_quantile(0.9),
        interactivity_p50_tokens_per_s=tally.request_itl.inverse_quantile(0.5),
        interactivity_p90_tokens_per_s=tally.request_itl.inverse_quantile(0.9),
        per_user_output_tokens_per_s_p50=tally.decode.quantile(0.5),
        ttft_p50_s=ttft.p50,
        ttft_p90_s=ttft.p90,
        ttft_p99_s=ttft.p99,
        ttft_s_mean=ratio(tally.ttft_sum, tally.ttft.total),
        itl_p50_s=itl.p50,
        itl_p90_s=itl.p90,
        itl_p99_s=itl.p99,
        e2e_p90_s=e2e.p90,
        north_star_ttft_share=north_star.first_token,
        north_star_stall_share=north_star.stall,
        median_ttft_share=median.first_token,
        output_tokens_p50=tally.output_lengths.quantile(0.5),
        decode_stall_share=ratio(tally.stall_excess, tally.decode_span),
        decode_stalls_per_request=ratio(tally.stalls, tally.streamed),
        prefix_cache_hit_rate_client=ratio(side.cached, side.prompt_with_cached),
        prefix_cache_hit_rate_ceiling=ratio(side.ceiling, side.prompt_with_ceiling),
        # The split's reused tokens are the ceiling's (measure/reuse.py): known where the ceiling is.
        prefix_reused_tokens=side.ceiling if side.prompt_with_ceiling else None,
        **side.reuse.figures(),
    )


# The figures a tally gives (`tally_figures` sets every one of them, None where unknown).
TALLY_KEYS: frozenset[str] = frozenset(tally_figures(Tally(), span=1.0, cached_reported=True).model_fields_set)
