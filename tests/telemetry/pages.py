"""Hand-made /metrics pages for the scraper tests; every expected figure is worked out in the test."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parent / "data"
REAL_BEFORE = DATA / "vllm-0.32.0-cpu-tiny.metrics.txt"
REAL_AFTER = DATA / "vllm-0.32.0-cpu-tiny.after-4-more.metrics.txt"


def old_vllm(*, queries: float, hits: float, prompt: float, gen: float, itl: tuple[float, float, float]) -> str:
    """vLLM 0.8-style names: gpu_* gauges and block-counting prefix counters, the old ITL name."""
    le_10ms, le_50ms, inf = itl
    return f"""\
# HELP vllm:num_requests_running Number of requests currently running on GPU.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{model_name="m"}} 3.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{{model_name="m"}} 1.0
# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{{model_name="m"}} 0.25
# HELP vllm:gpu_prefix_cache_queries GPU prefix cache queries, in terms of number of queried blocks.
# TYPE vllm:gpu_prefix_cache_queries counter
vllm:gpu_prefix_cache_queries_total{{model_name="m"}} {queries}
# HELP vllm:gpu_prefix_cache_hits GPU prefix cache hits, in terms of number of cached blocks.
# TYPE vllm:gpu_prefix_cache_hits counter
vllm:gpu_prefix_cache_hits_total{{model_name="m"}} {hits}
# TYPE vllm:prompt_tokens counter
vllm:prompt_tokens_total{{model_name="m"}} {prompt}
# TYPE vllm:generation_tokens counter
vllm:generation_tokens_total{{model_name="m"}} {gen}
# TYPE vllm:time_per_output_token_seconds histogram
vllm:time_per_output_token_seconds_bucket{{le="0.01",model_name="m"}} {le_10ms}
vllm:time_per_output_token_seconds_bucket{{le="0.05",model_name="m"}} {le_50ms}
vllm:time_per_output_token_seconds_bucket{{le="+Inf",model_name="m"}} {inf}
vllm:time_per_output_token_seconds_count{{model_name="m"}} {inf}
vllm:time_per_output_token_seconds_sum{{model_name="m"}} 1.0
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{{block_size="16",enable_prefix_caching="True",num_gpu_blocks="1000"}} 1.0
"""


def two_engines(*, gen0: float, gen1: float, hits0: float, hits1: float, queries0: float, queries1: float) -> str:
    """Data parallelism: one series per `engine` label."""
    lines = [
        "# TYPE vllm:num_requests_running gauge",
        'vllm:num_requests_running{engine="0",model_name="m"} 2.0',
        'vllm:num_requests_running{engine="1",model_name="m"} 5.0',
        "# TYPE vllm:num_requests_waiting gauge",
        'vllm:num_requests_waiting{engine="0",model_name="m"} 0.0',
        'vllm:num_requests_waiting{engine="1",model_name="m"} 4.0',
        "# TYPE vllm:kv_cache_usage_perc gauge",
        'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.2',
        'vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.6',
        "# HELP vllm:prefix_cache_queries Prefix cache queries, in terms of number of queried tokens.",
        "# TYPE vllm:prefix_cache_queries counter",
        f'vllm:prefix_cache_queries_total{{engine="0",model_name="m"}} {queries0}',
        f'vllm:prefix_cache_queries_total{{engine="1",model_name="m"}} {queries1}',
        "# TYPE vllm:prefix_cache_hits counter",
        f'vllm:prefix_cache_hits_total{{engine="0",model_name="m"}} {hits0}',
        f'vllm:prefix_cache_hits_total{{engine="1",model_name="m"}} {hits1}',
        "# TYPE vllm:generation_tokens counter",
        f'vllm:generation_tokens_total{{engine="0",model_name="m"}} {gen0}',
        f'vllm:generation_tokens_total{{engine="1",model_name="m"}} {gen1}',
        "# TYPE vllm:cache_config_info gauge",
        'vllm:cache_config_info{block_size="128",engine="0",num_gpu_blocks="48"} 1.0',
        'vllm:cache_config_info{block_size="128",engine="1",num_gpu_blocks="48"} 1.0',
    ]
    return "\n".join(lines) + "\n"


def sglang(*, prompt: float, gen: float, cached: float, usage: float = 0.42, hit_gauge: float = 0.5) -> str:
    return f"""\
# TYPE sglang:token_usage gauge
sglang:token_usage{{model_name="m"}} {usage}
# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate{{model_name="m"}} {hit_gauge}
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{{model_name="m"}} 7.0
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{{model_name="m"}} 2.0
# TYPE sglang:prompt_tokens counter
sglang:prompt_tokens_total{{model_name="m"}} {prompt}
# TYPE sglang:generation_tokens counter
sglang:generation_tokens_total{{model_name="m"}} {gen}
# TYPE sglang:cached_tokens counter
sglang:cached_tokens_total{{model_name="m"}} {cached}
"""


def counters_only(prompt: float, gen: float) -> str:
    return f"""\
# TYPE vllm:prompt_tokens counter
vllm:prompt_tokens_total{{engine="0",model_name="m"}} {prompt}
# TYPE vllm:generation_tokens counter
vllm:generation_tokens_total{{engine="0",model_name="m"}} {gen}
"""


def estimated_work(engines: dict[str, tuple[float, float, float]], *, gen: float = 0.0) -> str:
    """vLLM with `--enable-mfu-metrics`: per engine its (FLOPs, read bytes, written bytes) counters, each
    already per GPU of that engine, as vllm/v1/metrics/perf.py names and labels them."""
    lines = []
    for name, doc, column in (
        ("flops", "Estimated number of floating point operations per GPU", 0),
        ("read_bytes", "Estimated number of bytes read from memory per GPU", 1),
        ("write_bytes", "Estimated number of bytes written to memory per GPU", 2),
    ):
        family = f"vllm:estimated_{name}_per_gpu"
        lines += [
            f"# HELP {family}_total {doc} (for Model Flops Utilization calculations).",
            f"# TYPE {family}_total counter",
        ]
        lines += [f'{family}_total{{engine="{e}",model_name="m"}} {v[column]}' for e, v in engines.items()]
    lines += ["# TYPE vllm:generation_tokens counter"]
    lines += [f'vllm:generation_tokens_total{{engine="{e}",model_name="m"}} {gen}' for e in engines]
    return "\n".join(lines) + "\n"


# The tiny engine with ngram speculation (k = 3, prompt_lookup 2–4), before and after six concurrent greedy
# requests of 40 tokens (also with --kv-cache-metrics, as the launcher starts it).
REAL_SPEC_BEFORE = DATA / "vllm-0.32.0-cpu-tiny.spec-ngram.before.metrics.txt"
REAL_SPEC_AFTER = DATA / "vllm-0.32.0-cpu-tiny.spec-ngram.after.metrics.txt"
REAL_KV_METRICS_BEFORE = DATA / "vllm-0.32.0-cpu-tiny.kv-cache-metrics.before.metrics.txt"
REAL_KV_METRICS_AFTER = DATA / "vllm-0.32.0-cpu-tiny.kv-cache-metrics.after.metrics.txt"


def offload_page(
    *,
    computed: float,
    gpu: float,
    offload: float,
    moved: tuple[float, float],
    took: tuple[float, float],
    new: bool = True,
) -> str:
    """A vLLM 0.32 page with native CPU offloading (`--kv-offloading-size 4`): prompt tokens by source,
    the connector's transfer counters under their names since 0.32 (`new`) and the deprecated ones with a
    direction label, which 0.32 writes beside them for the CPU spec (same values), and requests waiting
    by reason. `moved` and `took` are (load, store) bytes and seconds."""
    (load_b, store_b), (load_s, store_s) = moved, took
    lines = [
        "# HELP vllm:prompt_tokens Number of prefill tokens processed.",
        "# TYPE vllm:prompt_tokens counter",
        f'vllm:prompt_tokens_total{{engine="0",model_name="m"}} {computed + gpu + offload}',
        "# HELP vllm:prompt_tokens_by_source Number of prompt tokens by source.",
        "# TYPE vllm:prompt_tokens_by_source counter",
        f'vllm:prompt_tokens_by_source_total{{engine="0",model_name="m",source="local_compute"}} {computed}',
        f'vllm:prompt_tokens_by_source_total{{engine="0",model_name="m",source="local_cache_hit"}} {gpu}',
        f'vllm:prompt_tokens_by_source_total{{engine="0",model_name="m",source="external_kv_transfer"}} {offload}',
        "# TYPE vllm:num_requests_waiting_by_reason gauge",
        'vllm:num_requests_waiting_by_reason{engine="0",model_name="m",reason="capacity"} 3.0',
        'vllm:num_requests_waiting_by_reason{engine="0",model_name="m",reason="deferred"} 2.0',
        "# TYPE vllm:kv_offload_total_bytes counter",
        f'vllm:kv_offload_total_bytes_total{{engine="0",model_name="m",transfer_type="CPU_to_GPU"}} {load_b}',
        f'vllm:kv_offload_total_bytes_total{{engine="0",model_name="m",transfer_type="GPU_to_CPU"}} {store_b}',
        "# TYPE vllm:kv_offload_total_time counter",
        f'vllm:kv_offload_total_time_total{{engine="0",model_name="m",transfer_type="CPU_to_GPU"}} {load_s}',
        f'vllm:kv_offload_total_time_total{{engine="0",model_name="m",transfer_type="GPU_to_CPU"}} {store_s}',
        "# TYPE vllm:cache_config_info gauge",
        'vllm:cache_config_info{block_size="16",engine="0",enable_prefix_caching="True",'
        'kv_offloading_backend="native",kv_offloading_size="4.0",num_gpu_blocks="1000"} 1.0',
    ]
    if new:
        for way, nbytes, seconds in (("load", load_b, load_s), ("store", store_b, store_s)):
            lines += [
                f"# TYPE vllm:kv_offload_{way}_bytes counter",
                f'vllm:kv_offload_{way}_bytes_total{{engine="0",model_name="m"}} {nbytes}',
                f"# TYPE vllm:kv_offload_{way}_time counter",
                f'vllm:kv_offload_{way}_time_total{{engine="0",model_name="m"}} {seconds}',
            ]
    return "\n".join(lines) + "\n"


# Per request: queued, prefill (scheduled → first token) and decode (first → last token) seconds, the KV
# tokens its prefill computed, its preemptions; per engine step, tokens; per draft, tokens accepted at
# each position 0…k−1 (k = 3: acceptance length 1 + 1.5 = 2.5, rate 1.5 ÷ 3 = 0.5).
QUEUE_S, PREFILL_S, DECODE_S = 0.1, 0.3, 0.56
PREFILL_COMPUTED, PREEMPTIONS = 900.0, 0.2
STEP_TOKENS = 48.0
ACCEPTED_AT = (0.8, 0.5, 0.2)
DRAFT_TOKENS_PER_DRAFT = 3.0


def phases_and_spec(
    *,
    requests: float,
    steps: float,
    drafts: float | None,
    engines: int = 1,
    draft_share: tuple[float, ...] = (),
    accepted_at: tuple[tuple[float, ...], ...] = (ACCEPTED_AT,),
    with_phases: bool = True,
) -> str:
    """A vLLM 0.32 page with the request-phase histograms (`_sum`/`_count` and the `+Inf` bucket, as vLLM
    writes them) and the speculative-decoding counters of a server that has finished `requests`, run
    `steps` engine steps and verified `drafts` drafts of 3 tokens each, at the shape above. `engines`
    data-parallel engines split them evenly, or the drafts by `draft_share`; engine e accepts at each
    position as `accepted_at[e]` says (the last one given for the rest). `drafts` None: no speculative
    decoding; `with_phases` False: a server older than the phase histograms."""
    lines: list[str] = []

    def histogram(name: str, per_one: float, count: float, engine: int) -> None:
        labels = f'engine="{engine}",model_name="m"'
        lines.extend(
            [
                f'{name}_bucket{{{labels},le="+Inf"}} {count}',
                f"{name}_count{{{labels}}} {count}",
                f"{name}_sum{{{labels}}} {per_one * count}",
            ]
        )

    if with_phases:
        for name, per_request in (
            ("vllm:request_queue_time_seconds", QUEUE_S),
            ("vllm:request_prefill_time_seconds", PREFILL_S),
            ("vllm:request_decode_time_seconds", DECODE_S),
            ("vllm:request_inference_time_seconds", PREFILL_S + DECODE_S),
            ("vllm:request_prefill_kv_computed_tokens", PREFILL_COMPUTED),
            ("vllm:request_num_preemptions", PREEMPTIONS),
        ):
            lines.append(f"# TYPE {name} histogram")
            for e in range(engines):
                histogram(name, per_request, requests / engines, e)
        lines.append("# TYPE vllm:iteration_tokens_total histogram")
        for e in range(engines):
            histogram("vllm:iteration_tokens_total", STEP_TOKENS, steps / engines, e)
    lines.append("# TYPE vllm:request_success_total counter")
    lines += [
        f'vllm:request_success_total{{engine="{e}",finished_reason="length",model_name="m"}} {requests / engines}'
        for e in range(engines)
    ]
    if drafts is None:
        return "\n".join(lines) + "\n"
    shares = draft_share or (1 / engines,) * engines
    per_engine = [(drafts * share, accepted_at[min(e, len(accepted_at) - 1)]) for e, share in enumerate(shares)]
    counters = {
        "num_drafts": lambda d, _at: d,
        "num_draft_tokens": lambda d, _at: d * DRAFT_TOKENS_PER_DRAFT,
        "num_accepted_tokens": lambda d, at: d * sum(at),
    }
    for name, of in counters.items():
        lines.append(f"# TYPE vllm:spec_decode_{name}_total counter")
        lines += [
            f'vllm:spec_decode_{name}_total{{engine="{e}",model_name="m"}} {of(d, at)}'
            for e, (d, at) in enumerate(per_engine)
        ]
    lines.append("# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter")
    for e, (d, at) in enumerate(per_engine):
        lines += [
            f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="{e}",model_name="m",position="{i}"}} '
            f"{d * rate}"
            for i, rate in enumerate(at)
        ]
    return "\n".join(lines) + "\n"
