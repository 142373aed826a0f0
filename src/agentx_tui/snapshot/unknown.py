"""Why a figure is unknown: the few words an `n/a` is shown with ("no evictions yet", "needs
--kv-cache-metrics", "the server has no such counter", "no GPU count: --gpus N").

One function per family of figures, each taking the facts it needs as plain values, so that the report
(its Markdown, through `why_unknown`) and the dashboard's panes (over a tick's figures) give the same
reason for the same n/a:

=========================  ===========================================================================
`residency_unknown`        KV residency: idle before eviction, reuse gap (`kv_block_*`)
`offload_unknown`          KV offload traffic and the CPU tier (`kv_offload_*`)
`prompt_source_unknown`    where the servers' prompt tokens came from (`prompt_share_*`)
`per_gpu_unknown`          a figure per GPU (tokens/s/GPU, tasks/hour/GPU)
`cost_unknown`             a money figure (a price, and the tokens it is spread over)
`cached_tokens_unknown`    the client's figures over the server's cached tokens per request
`client_unknown`           the client's latency, interactivity and counts
`task_unknown`             a per-task figure
`roofline_unknown`         achieved work, peaks, MFU, MBU
`energy_unknown`           energy and what is divided by it
`gpu_unknown`              the GPUs' utilisation and power
`interval_unknown`         a 95% interval (`_ci_low`/`_ci_high`)
`server_unknown`           the servers' own counters and hit rates
`phases_unknown`           the servers' request phases (`server_*_mean`, `ttft_outside_server_s_mean`)
`spec_unknown`             speculative decoding: acceptance, draft length, the golden length
=========================  ===========================================================================

`why_unknown(key, figures)` gives a report key's reason: its family found from its declaration
(snapshot/figures.py: its group, its unit) and its name, asked with the report's own facts; a figure of
the run's group that no other family claims is the client's (`client_unknown`). A figure added to a
family of its own adds its rule here.
"""

from __future__ import annotations

from collections.abc import Callable

from agentx_tui.snapshot.cache import PROMPT_SHARES
from agentx_tui.snapshot.figures import Figures, PointFigures
from agentx_tui.snapshot.figureset import CI_SUFFIXES, USD, declared
from agentx_tui.snapshot.rows import EndpointRow

# vLLM exports its prompt tokens by source (`prompt_tokens_by_source`) since this version (docs/vllm.md).
BY_SOURCE_SINCE = "vLLM ≥ 0.16"
NOT_MEASURED = "not measured in this run"
OBSERVING_ONLY = "observing only: the run sent no calls"
NO_SAMPLE = "the run ended before its first sample"
NO_GPU_COUNT = "no GPU count: --gpus N"
NO_PRICE = "no price: --gpu-price USD or --cost-profile NAME"
NO_CACHED_TOKENS = "the server reports no cached tokens per request: vLLM needs --enable-prompt-tokens-details"
NO_GPU_READING = "no GPU reading: NVML sees none here, and no --gpu-metrics URL of a DCGM exporter"
NO_PEAK = "the GPU's peak is unknown: --gpu-peak TFLOPS,TBPS"


# --- the families ------------------------------------------------------------------------------------


def residency_unknown(sample: float | None, *, exported: bool | None = None) -> str:
    """KV residency (idle before eviction, reuse gap): both are recorded when a block is evicted, and only
    with the server's `--kv-cache-metrics`. `sample`: the share of blocks recorded, where known (a launched
    vLLM's, the simulator's); `exported`: whether the server's page has the histograms (None: not known)."""
    if exported is False:
        return "needs --kv-cache-metrics"
    if exported is None and sample is None:  # an attached vLLM says neither: the flag, or nothing evicted
        return "needs --kv-cache-metrics, or no evictions yet"
    if sample is not None and 0 < sample < 1:
        return f"no sampled block evicted yet: 1 in {1 / sample:.0f} is sampled"
    return "no evictions yet"


def offload_unknown(offloads: bool | None, flavor: str | None, *, capacity: bool = False) -> str:
    """KV offload traffic, or (`capacity`) the CPU tier's size. `offloads`: whether the servers offload KV
    to CPU memory (False: they say they do not; None: they do not say); `flavor`: vllm, sglang, sim."""
    if offloads is False:
        flag = "--sim-cpu-kv-gb GB" if flavor == "sim" else "--kv-offloading-size GiB"
        return f"the server does not offload KV: needs {flag}"
    if flavor == "sglang":
        return "SGLang exports no KV offload counters"
    if capacity:
        return "the server does not say its offload capacity"
    return "the server has no such counter: a KV offloading connector's"


def prompt_source_unknown(prompt_tokens: float | None = None) -> str:
    """Where the servers' prompt tokens came from (vLLM's `prompt_tokens_by_source`). `prompt_tokens`: the
    servers' prompt tokens over the same stretch, where known (0: nothing to split yet)."""
    if prompt_tokens is not None and prompt_tokens <= 0:
        return "no prompt tokens yet"
    return f"the server has no such counter: prompt_tokens_by_source needs {BY_SOURCE_SINCE}"


def per_gpu_unknown(gpus: float | None) -> str:
    """A figure per GPU: it needs the GPUs behind the target (a known count: the figure divided is n/a)."""
    return NO_GPU_COUNT if gpus is None else "the figure it divides is unknown"


def cost_unknown(usd_per_gpu_hour: float | None) -> str:
    """A money figure: a price, and tokens (or tasks) to spread its cost over."""
    return NO_PRICE if usd_per_gpu_hour is None else "nothing yet to spread the cost over"


def cached_tokens_unknown(sends: bool, reported: bool, reused_tokens: float | None = None) -> str:
    """The client's figures over the servers' cached tokens per request (its hit rate, the evicted share).
    `reported`: the server put `cached_tokens` in its answers; `reused_tokens`: prompt tokens sent again."""
    if not sends:
        return OBSERVING_ONLY
    if not reported:
        return NO_CACHED_TOKENS
    if reused_tokens is not None and reused_tokens <= 0:
        return "no prompt tokens sent again yet"
    return "no request completed yet"


def client_unknown(sends: bool, completed: float | None) -> str:
    """The client's latency, interactivity and counts: they need completed calls of the run's own."""
    if not sends:
        return OBSERVING_ONLY
    if not completed:
        return "no request completed yet"
    return "no completed request measured it"


def task_unknown(sends: bool, tasks_completed: int | None) -> str:
    """A per-task figure: a task is one session tree, from its first call sent to its last call ended."""
    if not sends or tasks_completed is None:
        return OBSERVING_ONLY
    if not tasks_completed:
        return "no task completed yet"
    return "no completed task measured it"


def roofline_unknown(achieved_source: str | None, peak_source: str | None, *, needs: str) -> str:
    """Achieved work, the peak, and MFU/MBU (`needs`: "achieved", "peak" or "both"). The sources are the
    report's words for each (`achieved_source`, `peak_source`), which say why where there is none."""
    if needs in ("achieved", "both") and (achieved_source is None or achieved_source.startswith("n/a")):
        return _words(achieved_source) or "no estimate of the work done: vLLM needs --enable-mfu-metrics"
    if needs in ("peak", "both"):
        return _words(peak_source) if peak_source and peak_source.startswith("n/a") else NO_PEAK
    return "no work estimated yet"


def energy_unknown(gpus_seen: bool, energy_known: bool, divisor_known: bool = True) -> str:
    """Energy and what is divided by it: the GPUs' energy counters or power readings, then tokens or tasks."""
    if not gpus_seen:
        return NO_GPU_READING
    if not energy_known:
        return "the GPUs report neither energy nor power"
    return "nothing yet to divide it over" if not divisor_known else "no energy measured yet"


def gpu_unknown() -> str:
    """The GPUs' utilisation and power: no GPU reading at all."""
    return NO_GPU_READING


def interval_unknown(precision: float | None, *, sweep: bool = False, point: bool = False) -> str:
    """A 95% interval: a sweep's point has one once it has enough requests, a plain run with --precision only
    (`sweep`: the run's own figures of a sweep, whose intervals are its points' and tiers')."""
    if point:
        return "too few requests in the point for an interval"
    if sweep:
        return "a sweep carries its intervals per point and per tier"
    if precision is None:
        return "no --precision: a plain run carries no 95% interval"
    return "too few requests for an interval"


def server_unknown(scraped: bool) -> str:
    """The servers' own counters and hit rates (`scraped`: their metrics were read at all)."""
    return "the server has no such counter" if scraped else "no server metrics"


def phases_unknown(scraped: bool, *, client_ttft: bool = True) -> str:
    """The servers' request phases (vLLM's `request_*_time_seconds` and step histograms); the TTFT outside
    the servers needs the client's TTFT too (`client_ttft`)."""
    if not scraped:
        return "no server metrics"
    if not client_ttft:
        return "no client TTFT: the run sent no calls of its own"
    return "the servers export no request-phase histograms (vLLM's request_queue_time_seconds, …)"


def spec_unknown(draft_length: int | None, golden_source: str | None, *, golden: bool = False) -> str:
    """Speculative decoding: none at all (no `spec_decode` counters), no draft in the window, or, for the
    golden length and the ratio to it, why no golden length is known (its source says)."""
    if draft_length is None:
        return "the servers do not speculate: no spec_decode counters"
    if golden:
        return _words(golden_source) or "no golden acceptance length for this model: --spec-golden AL"
    return "no draft was verified in the window"


def _words(source: str | None) -> str:
    """A report's source words without their leading "n/a: "."""
    return (source or "").removeprefix("n/a: ").removeprefix("n/a ")


# --- a report key's family -----------------------------------------------------------------------------


def _flavor(f: Figures) -> str | None:
    for row in f.endpoints or ():
        flavor = row.flavor if isinstance(row, EndpointRow) else row.get("flavor")
        if flavor:
            return str(flavor)
    return "sim" if f.simulated else None


def _sends(f: Figures) -> bool:
    """The run measured calls of its own (its load, or real agents' through --proxy): client figures. A
    sweep's point always does: it is its own load's window."""
    return f.throughput_source == "client" or isinstance(f, PointFigures)


def _scraped(f: Figures) -> bool:
    return bool(f.endpoints)


def _limits(key: str, f: Figures) -> str:
    """The roofline and energy (docs/metrics.md, "Roofline", "Energy")."""
    achieved, peak = f.achieved_source, f.peak_source
    if key.startswith("achieved_"):
        return roofline_unknown(achieved, peak, needs="achieved")
    if key.startswith("peak_"):
        return roofline_unknown(achieved, peak, needs="peak")
    if key in ("mfu", "mbu", "roofline_bound"):
        return roofline_unknown(achieved, peak, needs="both")
    if key.endswith("_task") and not f.tasks_completed:
        return task_unknown(_sends(f), f.tasks_completed)
    gpus_seen = f.gpu_util_mean is not None or f.gpu_power_w_mean is not None
    return energy_unknown(gpus_seen, f.energy_j is not None, bool(f.total_tokens_per_s))


# The report's flags and words that are null by what the run was not: one reason each.
_STATES: dict[str, Callable[[Figures], str]] = {
    "partial_reason": lambda f: "the run was not cut short",
    "client_saturated_reason": lambda f: "the load generator kept up" if _sends(f) else OBSERVING_ONLY,
    "frontier_axis": lambda f: "not a sweep",
    "precision": lambda f: "no --precision",
    "ci_method": lambda f: "no --precision: no interval was computed",
    "stopped_early": lambda f: "no --precision",
    "stop_reason": lambda f: "no --precision: the run ended by its duration or its user",
    "model": lambda f: "the servers do not name it" if _scraped(f) else "no server metrics",
    "engine_version": lambda f: "the servers do not say it" if _scraped(f) else "no server metrics",
    "gpus": lambda f: NO_GPU_COUNT,
    "gpus_source": lambda f: NO_GPU_COUNT,
    "throughput_source": lambda f: "no server metrics and no calls of its own",
    "kv_cache_metrics_sample": lambda f: "the server does not say it: vLLM does not export it",
    "kv_offload_cpu": lambda f: offload_unknown(None, _flavor(f), capacity=True),
    "drain_s": lambda f: "the run was not stopped: a report of the run so far",
    "requests_failed": lambda f: "observing only: failures are the client's to see",
    "errors_by_kind": lambda f: "observing only: failures are the client's to see",
    "error_rate": lambda f: client_unknown(_sends(f), (f.requests_completed or 0) + (f.requests_failed or 0)),
}


def why_unknown(key: str, f: Figures) -> str:
    """Why the report key `key` (a declared figure, or one's `_ci_low`/`_ci_high`) is null in `f`, in a few
    words; `NOT_MEASURED` for a key no family knows."""
    if f.samples == 0:
        return NO_SAMPLE
    if key.endswith(CI_SUFFIXES):
        return interval_unknown(f.precision, sweep=f.frontier_axis is not None, point=isinstance(f, PointFigures))
    fig = declared(type(f)).get(key)
    if fig is None:
        return NOT_MEASURED
    sends = _sends(f)
    if key in _STATES:
        return _STATES[key](f)
    if fig.group == "proxy":
        return "no --capture" if "captur" in key else "no --proxy"
    if fig.group == "agentx":
        return "not judged: the run sends no load of its own"
    if fig.group == "limits":
        return _limits(key, f)
    if fig.group == "tasks" and not key.endswith("_per_gpu") and USD not in fig.unit:
        return task_unknown(sends, f.tasks_completed)
    if key.startswith("spec_"):
        return spec_unknown(f.spec_draft_length, f.spec_golden_source, golden="golden" in key)
    if key == "ttft_outside_server_s_mean":
        return phases_unknown(_scraped(f), client_ttft=f.ttft_s_mean is not None)
    if (key.startswith("server_") and key.endswith("_mean")) or key == "server_preemptions_per_request":
        return phases_unknown(_scraped(f))
    if key.startswith("kv_block_"):
        return residency_unknown(f.kv_cache_metrics_sample)
    if key.startswith("kv_offload_"):
        return offload_unknown(f.kv_offload_cpu, _flavor(f), capacity=key.endswith("_bytes"))
    if key in PROMPT_SHARES:
        return prompt_source_unknown(f.prompt_tokens if f.throughput_source == "server" else None)
    if key.startswith("schedule_"):
        return "not a timed replay: only a trace with timestamps has a schedule"
    if key.startswith(("client_", "workers")):
        return OBSERVING_ONLY
    if key.startswith("gpu_"):
        return gpu_unknown()
    if key.endswith("_per_gpu") or "/GPU" in fig.unit:
        if fig.group == "tasks" and f.tasks_completed is None:
            return task_unknown(sends, None)
        return per_gpu_unknown(f.gpus)
    if USD in fig.unit or key in ("usd_per_gpu_hour", "price_source", "cost_mode"):
        if fig.group == "tasks" and not f.tasks_completed:
            return task_unknown(sends, f.tasks_completed)
        return cost_unknown(f.usd_per_gpu_hour)
    if key.endswith("_server") or key.startswith(("prefix_cache_hit_rate_server", "kv_cache_usage", "preemptions")):
        return server_unknown(_scraped(f))
    if key.startswith(("cached_prompt_tokens", "prefix_cache_hit_rate_client", "prefix_evicted")):
        return cached_tokens_unknown(sends, f.cached_prompt_tokens is not None, f.prefix_reused_tokens)
    # What is left of the run's figures is the client's: its latency, interactivity, counts and prompts.
    return client_unknown(sends, f.requests_completed)
