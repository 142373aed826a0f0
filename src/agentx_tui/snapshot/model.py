"""The one immutable `Snapshot` per tick that every sink consumes (docs/architecture.md).

The TUI, the headless printer, the JSONL recorder, the report builder and replay all see the same
stream of these objects, so a recording replays exactly what was shown. A `Snapshot` serialises to one
JSON line (`to_json`) and back (`Snapshot.from_json`) without loss.

Conventions (docs/metrics.md): fractions are 0–1, rates are per second, times in seconds, power in watts,
money in USD. A figure that cannot be known is ``None`` (shown as ``n/a``), never 0.

Two kinds of figures live side by side:
- *window* figures (rates, percentiles, hit rates) cover the last rate window (a few ticks);
- *run totals* (``*_total`` fields of `EndpointTotals` and `ClientTotals`) are reset-aware sums of
  counter deltas since the first sample of this run, so the report can be computed from the last
  snapshot alone, and replaying a recording reproduces the report.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field, model_validator

from agentx_tui.snapshot.agentx import AgentXVerdict
from agentx_tui.snapshot.base import Frozen
from agentx_tui.snapshot.buckets import histogram_quantile
from agentx_tui.snapshot.figures import Figures, PointFigures, RunIntervals, TierRead
from agentx_tui.snapshot.legacy import client_figures_of_older
from agentx_tui.snapshot.price import NO_PRICE
from agentx_tui.snapshot.rows import FrontierAxis, ProbeRow, RooflineBound, StepRow, UserRow, WorkerLossRow

SCHEMA_VERSION = 1
# What kind of server an endpoint is: decided by the attach probe, refined by the metric names it serves.
Flavor = Literal["vllm", "sglang", "sim", "unknown"]
USERS_SHOWN = 500  # session rows a Snapshot carries; more users are counted, not listed
CHILD_ID_BASE = 1 << 40  # sub-agent rows have ids from here: they never meet a user's id


class Percentiles(Frozen):
    """Latency percentiles in seconds; ``None`` when no sample fell in the window."""

    p50: float | None = None
    p90: float | None = None
    p99: float | None = None


class BucketCounts(Frozen):
    """A server histogram's observations as cumulative counts per bucket (snapshot/buckets.py): one
    count per finite upper bound in `bounds`, then the total (the ``+Inf`` bucket), so that JSON, which
    has no infinity, holds it exactly."""

    bounds: tuple[float, ...]
    counts: tuple[float, ...]  # cumulative; len(bounds) + 1, the last one the total

    @classmethod
    def of(cls, buckets: Iterable[tuple[float, float]]) -> BucketCounts | None:
        """From (upper bound, cumulative count) pairs, ``+Inf`` among them; None without ``+Inf``."""
        ordered = sorted(buckets)
        if not ordered or ordered[-1][0] != math.inf:
            return None
        return cls(bounds=tuple(b for b, _ in ordered[:-1]), counts=tuple(c for _, c in ordered))

    @property
    def total(self) -> float:
        return self.counts[-1] if self.counts else 0.0

    def pairs(self) -> list[tuple[float, float]]:
        return list(zip((*self.bounds, math.inf), self.counts, strict=True))

    def plus(self, other: BucketCounts) -> BucketCounts | None:
        """Both histograms' observations, bucket by bucket; None where their bounds differ."""
        if other.bounds != self.bounds:
            return None
        return BucketCounts(
            bounds=self.bounds, counts=tuple(a + b for a, b in zip(self.counts, other.counts, strict=True))
        )

    def since(self, earlier: BucketCounts | None) -> BucketCounts | None:
        """The observations made after `earlier` (this one's counts minus its, bucket by bucket): all of
        them when there was no earlier; None where the bounds differ."""
        if earlier is None:
            return self
        if earlier.bounds != self.bounds:
            return None
        return BucketCounts(
            bounds=self.bounds, counts=tuple(max(a - b, 0.0) for a, b in zip(self.counts, earlier.counts, strict=True))
        )

    def quantile(self, q: float) -> float | None:
        return histogram_quantile(q, self.pairs())

    def percentiles(self) -> Percentiles:
        return Percentiles(p50=self.quantile(0.5), p90=self.quantile(0.9), p99=self.quantile(0.99))


class EndpointTotals(Frozen):
    """Server counters summed over the run (Δ since the first scrape, restarts handled like `rate()`),
    and the KV-residency histograms' observations over the run (`BucketCounts`)."""

    prompt_tokens: float | None = None
    generation_tokens: float | None = None
    cached_prompt_tokens: float | None = None
    prefix_cache_queries: float | None = None
    prefix_cache_hits: float | None = None
    preemptions: float | None = None
    requests_finished: float | None = None
    # vLLM's estimated work (`--enable-mfu-metrics`): each engine's per-GPU counter, summed over engines
    # (÷ `EndpointReading.estimating_engines` for one GPU's share; docs/metrics.md, "Roofline").
    estimated_flops: float | None = None
    estimated_read_bytes: float | None = None
    estimated_write_bytes: float | None = None
    # Prompt tokens by where their KV came from (vLLM's `prompt_tokens_by_source`): computed, the GPU's
    # prefix cache, an offload tier or another instance through a KV connector ("external").
    prompt_tokens_computed: float | None = None
    prompt_tokens_gpu_cache: float | None = None
    prompt_tokens_offload: float | None = None
    external_prefix_cache_queries: float | None = None
    external_prefix_cache_hits: float | None = None
    # KV moved between the GPU and an offload tier (an offloading connector): bytes and seconds.
    kv_offload_load_bytes: float | None = None
    kv_offload_load_s: float | None = None
    kv_offload_store_bytes: float | None = None
    kv_offload_store_s: float | None = None
    kv_offload_allocation_failures: float | None = None
    # With vLLM's --kv-cache-metrics (sampled blocks): at eviction, how long a block had sat unused, and
    # the gaps between its last accesses; how long it lived, allocation to eviction.
    kv_block_idle_before_evict: BucketCounts | None = None
    kv_block_reuse_gap: BucketCounts | None = None
    kv_block_lifetime: BucketCounts | None = None
    # vLLM's request phases and engine steps (snapshot/phases.py): each histogram's Σ of observations and
    # their count over the run. The request-level ones: queue, prefill and decode seconds, KV tokens
    # computed at prefill, preemptions; `iteration_tokens`: tokens per engine step.
    request_queue_s_sum: float | None = None
    request_queue_s_count: float | None = None
    request_prefill_s_sum: float | None = None
    request_prefill_s_count: float | None = None
    request_decode_s_sum: float | None = None
    request_decode_s_count: float | None = None
    iteration_tokens_sum: float | None = None
    iteration_tokens_count: float | None = None
    request_prefill_computed_tokens_sum: float | None = None
    request_prefill_computed_tokens_count: float | None = None
    request_preemptions_sum: float | None = None
    request_preemptions_count: float | None = None
    # Speculative decoding: verify steps with a draft, draft tokens proposed, accepted, and accepted by draft
    # position 0…k−1 (k = its length).
    spec_drafts: float | None = None
    spec_draft_tokens: float | None = None
    spec_accepted_tokens: float | None = None
    spec_accepted_tokens_by_position: tuple[float, ...] | None = None


class EngineReading(Frozen):
    """One data-parallel engine (the `engine` label of vLLM's metrics) of one endpoint."""

    engine: str
    running: float | None = None
    waiting: float | None = None
    kv_cache_usage: float | None = None
    prefix_hit_rate_window: float | None = None
    generation_tokens_per_s: float | None = None
    server_queue_s_mean: float | None = None
    spec_acceptance_length: float | None = None


class EndpointReading(Frozen):
    """What the scraper read from one server's /metrics (and /health) this tick."""

    url: str
    up: bool = False
    status: str = "starting"  # "up", "down: <reason>", "starting", "no metrics: <reason>"
    flavor: Flavor = "unknown"
    model: str | None = None
    engine_version: str | None = None
    max_model_len: int | None = None
    running: float | None = None
    waiting: float | None = None
    kv_cache_usage: float | None = None
    block_size: int | None = None
    num_gpu_blocks: int | None = None
    prefix_caching_enabled: bool | None = None
    prefix_hit_rate_window: float | None = None
    prefix_hit_rate_lifetime: float | None = None
    prompt_tokens_per_s: float | None = None
    generation_tokens_per_s: float | None = None
    cached_prompt_tokens_per_s: float | None = None
    preemptions_per_s: float | None = None
    requests_per_s: float | None = None
    # The estimated-work counters' window rates (FLOP/s, bytes/s), each the sum over engines of one
    # engine's per-GPU rate, and how many engines export them: None when none does (a vLLM started
    # without `--enable-mfu-metrics`, an SGLang server). One GPU's rate = the sum ÷ the engines.
    estimated_flops_per_s: float | None = None
    estimated_read_bytes_per_s: float | None = None
    estimated_write_bytes_per_s: float | None = None
    estimating_engines: int | None = None
    ttft: Percentiles = Field(default_factory=Percentiles)
    itl: Percentiles = Field(default_factory=Percentiles)
    e2e: Percentiles = Field(default_factory=Percentiles)
    queue_time: Percentiles = Field(default_factory=Percentiles)
    totals: EndpointTotals = Field(default_factory=EndpointTotals)
    engines: tuple[EngineReading, ...] = ()
    # Where the window's prompt tokens came from (`prompt_tokens_by_source`): the three shares sum to 1;
    # the rates are tokens/s. "offload" is vLLM's `external_kv_transfer`: a CPU-memory tier, LMCache,
    # Mooncake or another instance, through a KV connector.
    prompt_share_computed: float | None = None
    prompt_share_gpu_cache: float | None = None
    prompt_share_offload: float | None = None
    prompt_computed_tokens_per_s: float | None = None
    prompt_gpu_cache_tokens_per_s: float | None = None
    prompt_offload_tokens_per_s: float | None = None
    # Δhits / Δqueries of the KV connector's lookups (tokens the GPU cache did not have).
    external_prefix_hit_rate_window: float | None = None
    # KV traffic to and from the offload tier over the window (GB/s, 1 GB = 1e9 bytes) and the transfer
    # time it took per GB (s/GB); failed store allocations per second.
    kv_offload_load_gb_per_s: float | None = None
    kv_offload_store_gb_per_s: float | None = None
    kv_offload_load_s_per_gb: float | None = None
    kv_offload_store_s_per_gb: float | None = None
    kv_offload_allocation_failures_per_s: float | None = None
    # KV residency over the window (vLLM's --kv-cache-metrics): a block's idle time before it was
    # evicted, the gaps between accesses to a block, a block's lifetime. Sampled: `kv_cache_metrics_sample`
    # of the blocks, when the sample rate is known (a launched server's, the simulator's).
    kv_block_idle_before_evict: Percentiles = Field(default_factory=Percentiles)
    kv_block_reuse_gap: Percentiles = Field(default_factory=Percentiles)
    kv_block_lifetime: Percentiles = Field(default_factory=Percentiles)
    kv_cache_metrics_sample: float | None = None
    # Requests waiting by reason (vLLM's `num_requests_waiting_by_reason`): for scheduling capacity, or
    # deferred by a transient constraint (a KV transfer, a LoRA budget).
    waiting_capacity: float | None = None
    waiting_deferred: float | None = None
    # Whether the server offloads KV to CPU memory (vLLM's native offloading, `--kv-offloading-size`;
    # the simulator's CPU tier), and how much CPU memory it may use for it (bytes). None when the server
    # does not say: no `cache_config_info`, or an offloading connector of another kind.
    kv_offload_cpu: bool | None = None
    kv_offload_cpu_bytes: float | None = None
    # The GPUs serving this endpoint, where they are known (DCGM series mapped to the replica, the
    # simulator's own): their count and mean utilisation (0–1). None when not known.
    gpu_count: int | None = None
    gpu_utilization: float | None = None
    # The simulated engine only: how far its engine loop is behind wall time (s), and simulated-GPU
    # time it dropped since the previous scrape (s). Either high: the simulator, not the modelled GPU,
    # limits the figures.
    sim_lag_s: float | None = None
    sim_lost_s: float | None = None
    # Where a request's time went on the server over the window, and its speculative decoding
    # (snapshot/phases.py, docs/metrics.md "Where the time went"): mean seconds queued, in prefill
    # (scheduled → first token) and in decode (first → last token) per finished request; tokens per
    # engine step; KV tokens computed per prefill; preemptions per finished request. None where the
    # server does not export them or no request finished in the window.
    server_queue_s_mean: float | None = None
    server_prefill_s_mean: float | None = None
    server_decode_s_mean: float | None = None
    server_step_tokens_mean: float | None = None
    server_prefill_computed_tokens_mean: float | None = None
    server_preemptions_per_request: float | None = None
    engine_steps_per_s: float | None = None
    # Speculative decoding over the window: acceptance length (1 + accepted per draft), acceptance rate
    # (accepted ÷ draft tokens), accepted per draft at each position, the draft length k (the positions
    # exported), drafts and draft tokens per second. None without a draft in the window (k: without the
    # counters).
    spec_acceptance_length: float | None = None
    spec_acceptance_rate: float | None = None
    spec_acceptance_by_position: tuple[float, ...] | None = None
    spec_draft_length: int | None = None
    spec_drafts_per_s: float | None = None
    spec_draft_tokens_per_s: float | None = None
    # AgentX's golden acceptance length for this model at this draft length (the run adds it: the golden
    # table, `--spec-golden`), where it came from (or why there is none), and measured ÷ golden.
    spec_golden_acceptance_length: float | None = None
    spec_golden_source: str | None = None
    spec_acceptance_vs_golden: float | None = None


EnergyFrom = Literal["counter", "power"]  # a GPU's energy: its energy counter's steps, or its power × time


class GpuReading(Frozen):
    """One GPU, from NVML (local) or a DCGM exporter (remote or simulated)."""

    index: int
    name: str
    uuid: str | None = None
    source: Literal["nvml", "dcgm", "sim"] = "nvml"
    utilization: float | None = None  # 0–1
    memory_used_bytes: float | None = None
    memory_total_bytes: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    temperature_c: float | None = None
    sm_clock_mhz: float | None = None
    host: str | None = None  # the node the GPU is on (DCGM `Hostname`), when known
    pids: tuple[int, ...] = ()  # processes with a compute context on it (NVML), to tell whose GPU it is
    # Joules since this GPU's first sample in the run (docs/metrics.md, "Energy"): the steps of its
    # total-energy counter (NVML's, DCGM's) where the driver has one, restarts handled like the servers'
    # counters; else its power integrated over the samples. None with neither.
    energy_j: float | None = None
    energy_from: EnergyFrom | None = None


class GpuState(Frozen):
    status: str = "no NVIDIA GPU visible: not sampled"
    gpus: tuple[GpuReading, ...] = ()


class GpuPeak(Frozen):
    """The ceiling of one GPU (docs/metrics.md, "Roofline"): dense TFLOP/s of the dtype the model
    computes in, and HBM bandwidth; None where not known, and `source` says where they came from (a
    datasheet row, the simulator's profile, `--gpu-peak`) or why there are none."""

    tflops: float | None = None
    hbm_gb_per_s: float | None = None
    dtype: str = "bf16"  # bf16, fp8 or fp4: whose dense peak `tflops` is
    source: str = "no GPU seen yet"


class LimitsReading(Frozen):
    """How close to the limit, this tick (docs/metrics.md, "Roofline" and "Energy"): the servers'
    estimated work per GPU over the rate window against the chip's peak, and the GPUs' energy. A figure
    that cannot be known is None, and the note beside it says why (the flag, the GPU, the driver)."""

    peak: GpuPeak = Field(default_factory=GpuPeak)
    achieved_tflops_per_gpu: float | None = None
    achieved_hbm_gb_per_s_per_gpu: float | None = None
    mfu: float | None = None
    mbu: float | None = None
    roofline_bound: RooflineBound | None = None
    roofline_note: str | None = None  # why the achieved figures are n/a
    energy_j: float | None = None  # the GPUs behind the target, over the run so far
    energy_source: str | None = None  # how it was measured, or that it is modelled (the simulator)
    joules_per_token: float | None = None  # window: the GPUs' mean power over it ÷ total tokens/s
    energy_note: str | None = None  # why the energy figures are n/a


class ClientTotals(Frozen):
    """Client-side totals over the run, from the driver's request records."""

    requests_completed: int = 0
    requests_failed: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    output_tokens: int = 0
    sessions_completed: int = 0
    sessions_ended_by_context: int = 0
    # Tokens that a perfect, unbounded prefix cache would serve (block-aligned shared prefix): ceiling.
    ceiling_cacheable_tokens: int = 0
    # The prompt tokens the ceiling is over: those of requests whose blocks the client knows (not a
    # proxied agent's). None in recordings made before this was counted: all prompt tokens then.
    ceiling_prompt_tokens: int | None = None
    # True once any response carried usage.prompt_tokens_details; False means the server omits it.
    cached_tokens_reported: bool = False
    errors_by_kind: dict[str, int] = Field(default_factory=dict)


class ClientReading(Frozen):
    """What the load driver measured: the report's client-side figures over the rate window (`window`) and
    over the run so far (`run`: its latencies, interactivity, ceiling and a timed replay's schedule; its
    token rates are the report's, from `totals` over the run's duration), and the counts behind them."""

    window: Figures = Field(default_factory=Figures)
    run: Figures = Field(default_factory=Figures)
    requests_per_s: float | None = None  # window: requests completed per second
    in_flight: int = 0  # requests on the wire now (sub-agents push it above the user count)
    totals: ClientTotals = Field(default_factory=ClientTotals)

    @model_validator(mode="before")
    @classmethod
    def _from_older(cls, data: Any) -> Any:
        return client_figures_of_older(data)


class ClientHealth(Frozen):
    """How hard the load generator itself works (docs/scale.md): is the client the bottleneck?

    Window figures over every load process (the main process included). `saturated` is the verdict,
    `reason` says why in words (docs/metrics.md gives the thresholds)."""

    workers: int = 1
    cpu_cores: float | None = None  # CPU time of all load processes / wall time (1.0 = one core busy)
    cpu_cores_max_process: float | None = None  # the busiest single process (an event loop is one core)
    loop_lag_p99_s: float | None = None  # the worst process's event-loop lag p99
    run_queue_s_per_s: float | None = None  # time spent runnable but waiting for a CPU, per second
    queued_requests: int = 0  # requests waiting for a connection slot (the machine's limit)
    # µs of CPU of all load processes per output token streamed, over the last ten ticks: what the
    # client pays per token (reading its SSE event, the bookkeeping, the prompts), the figure to watch
    # when the client nears a core. None before any token.
    cpu_us_per_token: float | None = None
    saturated: bool = False
    reason: str | None = None
    # Over the run so far, for the report: the mean CPU, the event-loop lag p99 of every process's
    # samples, and whether the client was saturated for three ticks in a row at some point (and why).
    run_cpu_cores_mean: float | None = None
    run_cpu_us_per_token: float | None = None  # over the run: every load process's CPU / output tokens
    run_loop_lag_p99_s: float | None = None
    run_saturated: bool = False
    run_reason: str | None = None


class TaskReading(Frozen):
    """Agents, not requests (docs/metrics.md, "Tasks"): a task is one session tree. Only completed
    tasks enter the figures; `tasks_running` and `tasks_failed` say what else there was."""

    tasks_completed: int = 0
    tasks_running: int = 0  # whole run: trees with calls and no end yet; a window: begun inside, not over at its end
    tasks_failed: int = 0
    task_s_p50: float | None = None
    task_s_p90: float | None = None
    task_model_share: float | None = None  # Σ model time / Σ wall time over the completed tasks
    steps_per_task_mean: float | None = None
    tokens_per_task_mean: float | None = None
    output_tokens_per_task_mean: float | None = None
    usd_per_task: float | None = None
    tasks_per_hour_per_gpu: float | None = None
    step_curve: tuple[StepRow, ...] = ()
    # The completed tasks' wall times as (upper edge in seconds, tasks) on a 1-2-5 scale, for the
    # distribution's picture; empty edges left out.
    task_s_histogram: tuple[tuple[float, int], ...] = ()
    # Each completed task's Σ hit ÷ Σ reused prompt tokens (docs/metrics.md §4, "Where the prefix went"),
    # over the tasks that reused something and whose server reported cached tokens: mean, p10, p90.
    task_prefix_hit_share_mean: float | None = None
    task_prefix_hit_share_p10: float | None = None
    task_prefix_hit_share_p90: float | None = None


class CostReading(Frozen):
    """The tokens-per-dollar meter (docs/metrics.md). Every dollar figure ``None`` when no price or no GPU count
    is known (`price_source` then says which)."""

    usd_per_gpu_hour: float | None = None
    gpus: int | None = None
    price_source: str = NO_PRICE
    mode: Literal["rental", "owned", "none"] = "none"
    usd_spent: float | None = None
    tokens_per_dollar_total: float | None = None  # run-wide
    tokens_per_dollar_output: float | None = None  # run-wide
    usd_per_million_output_tokens: float | None = None  # run-wide
    tokens_per_dollar_total_window: float | None = None
    tokens_per_dollar_output_window: float | None = None
    # Where `gpus` came from (docs/metrics.md): "--gpus", "launched server (NVML processes)", "DCGM series of
    # the attached replicas", "simulated profile"… None when no count is known.
    gpus_source: str | None = None


class ProxyState(Frozen):
    """`--proxy`: real agents' traffic through the transparent proxy (docs/capture.md), as of this tick.
    Token counts are of the completed proxied calls since the run started; their requests are also
    counted in the client figures, beside the simulated users'."""

    url: str  # where agents point their base URL
    upstream: str  # the target it forwards to
    proxied_requests: int = 0  # model calls forwarded, whatever their outcome
    other_requests: int = 0  # other paths forwarded (/v1/models, /tokenize, ...)
    in_flight: int = 0
    proxied_sessions: int = 0  # session trees seen
    live_sessions: int = 0  # sessions (sub-agents included) in the users table now
    subagents: int = 0
    by_header: int = 0  # sessions told apart by the session header (docs/capture.md)
    by_user: int = 0  # by the OpenAI `user` field
    inferred: int = 0  # by their prompts' prefixes
    calls_completed: int = 0
    calls_failed: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    added_ttft: Percentiles = Field(default_factory=Percentiles)  # upstream's first byte → the agent's
    upstream_errors: int = 0  # answered 502: the upstream was down or timed out
    last_upstream_error: str | None = None
    agent_cancelled: int = 0  # agents that went away mid-answer
    captured_sessions: int | None = None  # session files written; None without --capture
    capture_dir: str | None = None
    tokenize_pending: int = 0  # prompts still to be tokenized for the capture (off the request path)
    tokenize_failed: int = 0
    tokenize_dropped: int = 0


SweepPhase = Literal["warmup", "measure", "done"]


class SweepState(Frozen):
    """Where a sweep stands: measured points, the frontier, tier reads, the point in progress; a tier sweep's
    probes and plan."""

    mode: Literal["list", "auto", "tiers"] = "list"
    # list: all; auto: those measured and the next one; tiers: the full points planned (none while probing)
    planned_users: tuple[int, ...] = ()
    tiers: tuple[TierRead, ...] = ()  # read on `frontier_axis`
    points: tuple[PointFigures, ...] = ()
    frontier: tuple[int, ...] = ()  # indices into `points` of the Pareto-optimal ones, by interactivity
    # The axis `frontier` and `tiers` are on; None (older recordings): decode interactivity.
    frontier_axis: FrontierAxis | None = None
    # The other view (docs/sweeps.md): its frontier (under the North Star policy when it is decode: a
    # point stands on it only if it is on the E2E-normalized frontier too) and its tier reads.
    secondary_frontier: tuple[int, ...] | None = None
    secondary_tiers: tuple[TierRead, ...] | None = None
    current: int | None = None  # index of the point being measured; None when done
    current_users: int | None = None
    phase: SweepPhase = "warmup"
    phase_left_s: float | None = None
    warmup_s: float = 0.0
    point_duration_s: float = 0.0
    # `--join`: how users the sweep adds begin (docs/sweeps.md, "Users that join"); start in older recordings.
    join: Literal["start", "midway"] = "start"
    stop_reason: str | None = None  # why the sweep ended (auto's rule, a list's end, an interruption)
    precision: float | None = None  # --precision F: a point ends once both half-widths are within F
    # A tier sweep (docs/sweeps.md, "A tier sweep"): its probes so far (never points), whether the step under
    # way is one, what it is for ("tier 50", "bracketing tiers 30 50"), and how long a probe's window is.
    probes: tuple[ProbeRow, ...] = ()
    probing: bool = False
    step_for: str | None = None
    probe_duration_s: float | None = None
    # The sweep's wall time so far (probes and warm-ups included), and times the GPUs; None without a count.
    sweep_s: float | None = None
    gpu_seconds: float | None = None


RunState = Literal["starting", "running", "paused", "server down", "stopping", "finished"]


class RunInfo(Frozen):
    target: str  # "attach http://…", "serve Qwen/Qwen3-8B", "simulated h200/llama-3.1-8b"
    simulated: bool = False
    workload: str = "none"
    output_scale: float = 1.0  # --output-scale: every answer's length × this (1 in older recordings)
    users: int = 0  # the users driven now: those asked for, less the users of load workers that died
    users_lost: int = 0  # of those asked for, the users no worker drives now: their worker died
    # Every load worker that died so far (docs/scale.md): when, how, the users it took with it, and
    # whether a fresh worker took them again.
    load_losses: tuple[WorkerLossRow, ...] = ()
    state: RunState = "starting"
    started_at: float = 0.0  # unix time of the run's first tick
    # Seconds the load was paused so far (the dashboard's `p`), the pause under way included: the run's
    # clock (the header's time, `--duration`) leaves them out.
    paused_s: float = 0.0
    refresh_s: float = 1.0


class Snapshot(Frozen):
    """Everything a sink needs for one tick."""

    schema_version: int = SCHEMA_VERSION
    seq: int
    time: float  # unix time of this tick
    elapsed_s: float
    run: RunInfo
    endpoints: tuple[EndpointReading, ...] = ()
    aggregate: EndpointReading | None = None  # sum/mean over endpoints; None with no endpoint
    gpu: GpuState = Field(default_factory=GpuState)
    client: ClientReading | None = None  # None when observing only (workload `none`)
    client_health: ClientHealth | None = None  # None when observing only
    # The users table: at most USERS_SHOWN rows; `session_states` counts the states of them all. (The
    # fields keep their first names: recordings are read back by them.)
    sessions: tuple[UserRow, ...] = ()
    session_states: dict[str, int] = Field(default_factory=dict)
    sweep: SweepState | None = None
    proxy: ProxyState | None = None  # --proxy: real agents' traffic
    intervals: RunIntervals | None = None  # a plain run with --precision
    # A plain run with --warmup: its window after the warm-up as one point's figures (the last tick only).
    measured: PointFigures | None = None
    # Whether the run meets AgentX's rules so far (docs/sweeps.md, "AgentX validity"); None when it sends
    # no load of its own (observing only), or in a recording of before the rules were judged.
    agentx: AgentXVerdict | None = None
    tasks: TaskReading | None = None  # per session tree; None when observing only or before any call
    cost: CostReading = Field(default_factory=CostReading)
    limits: LimitsReading | None = None  # roofline and energy; None in recordings made before them
    events: tuple[str, ...] = ()  # app events new since the previous tick (already redacted)
    server_log: tuple[str, ...] = ()  # launched-server log lines new since the previous tick

    @property
    def clock_s(self) -> float:
        """The run's clock: the time since its first tick less the time its load was paused (`p`)."""
        return max(0.0, self.elapsed_s - self.run.paused_s)

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, line: str | bytes) -> Snapshot:
        """One recorded line, of this version or an earlier one (figures it does not know are dropped)."""
        return cls.model_validate_json(line, context={"lenient": True})
