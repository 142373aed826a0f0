"""The one immutable `Snapshot` per tick that every sink consumes (DESIGN §2).

The TUI, the headless printer, the JSONL recorder, the report builder and replay all see the same
stream of these objects, so a recording replays exactly what was shown. A `Snapshot` serialises to one
JSON line (`to_json`) and back (`Snapshot.from_json`) without loss.

Conventions (DESIGN §4): fractions are 0–1, rates are per second, times in seconds, power in watts,
money in USD. A figure that cannot be known is ``None`` (shown as ``n/a``), never 0.

Two kinds of figures live side by side:
- *window* figures (rates, percentiles, hit rates) cover the last rate window (a few ticks);
- *run totals* (``*_total`` fields of `EndpointTotals` and `ClientTotals`) are reset-aware sums of
  counter deltas since the first sample of this run, so the report can be computed from the last
  snapshot alone, and replaying a recording reproduces the report.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Percentiles(_Frozen):
    """Latency percentiles in seconds; ``None`` when no sample fell in the window."""

    p50: float | None = None
    p90: float | None = None
    p99: float | None = None


class EndpointTotals(_Frozen):
    """Server counters summed over the run (Δ since the first scrape, restarts handled like `rate()`)."""

    prompt_tokens: float | None = None
    generation_tokens: float | None = None
    cached_prompt_tokens: float | None = None
    prefix_cache_queries: float | None = None
    prefix_cache_hits: float | None = None
    preemptions: float | None = None
    requests_finished: float | None = None


class EngineFigures(_Frozen):
    """One data-parallel engine (the `engine` label of vLLM's metrics) of one endpoint."""

    engine: str
    running: float | None = None
    waiting: float | None = None
    kv_cache_usage: float | None = None
    prefix_hit_rate_window: float | None = None
    generation_tokens_per_s: float | None = None


class EndpointFigures(_Frozen):
    """What the scraper read from one server's /metrics (and /health) this tick."""

    url: str
    up: bool = False
    status: str = "starting"  # "up", "down: <reason>", "starting", "no metrics: <reason>"
    flavor: Literal["vllm", "sglang", "sim", "unknown"] = "unknown"
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
    ttft: Percentiles = Field(default_factory=Percentiles)
    itl: Percentiles = Field(default_factory=Percentiles)
    e2e: Percentiles = Field(default_factory=Percentiles)
    queue_time: Percentiles = Field(default_factory=Percentiles)
    totals: EndpointTotals = Field(default_factory=EndpointTotals)
    engines: tuple[EngineFigures, ...] = ()


class GpuFigures(_Frozen):
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


class GpuState(_Frozen):
    status: str = "no NVIDIA GPU visible: not sampled"
    gpus: tuple[GpuFigures, ...] = ()


class ClientTotals(_Frozen):
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
    # True once any response carried usage.prompt_tokens_details; False means the server omits it.
    cached_tokens_reported: bool = False
    errors_by_kind: dict[str, int] = Field(default_factory=dict)


class ClientFigures(_Frozen):
    """What the load driver measured: window rates, latency percentiles (window and run)."""

    output_tokens_per_s: float | None = None
    prompt_tokens_per_s: float | None = None
    cached_prompt_tokens_per_s: float | None = None
    total_tokens_per_s: float | None = None
    requests_per_s: float | None = None
    prefix_hit_rate: float | None = None  # window Σcached / Σprompt; None when the server omits it
    prefix_hit_rate_ceiling: float | None = None  # run-wide
    per_user_output_tokens_per_s_p50: float | None = None  # window, decode speed per request
    ttft: Percentiles = Field(default_factory=Percentiles)
    itl: Percentiles = Field(default_factory=Percentiles)
    run_ttft: Percentiles = Field(default_factory=Percentiles)
    run_itl: Percentiles = Field(default_factory=Percentiles)
    run_per_user_output_tokens_per_s_p50: float | None = None
    totals: ClientTotals = Field(default_factory=ClientTotals)


SessionState = Literal["prefill", "decoding", "tool", "waiting", "paused", "done", "error"]


class SessionRow(_Frozen):
    """One simulated user (agent session slot) of the load driver."""

    user: int
    session: int  # how many sessions this user has started (1-based)
    state: SessionState
    step: int
    steps_total: int
    context_tokens: int
    last_ttft_s: float | None = None
    decode_tokens_per_s: float | None = None  # rolling mean over this session's requests
    output_tokens: int = 0  # over all sessions of this user
    requests: int = 0
    errors: int = 0
    endpoint: str = ""
    parent: int | None = None  # for sub-agents: the parent user id


class CostFigures(_Frozen):
    """The tokens-per-dollar meter (DESIGN §5). All ``None`` when no price is known."""

    usd_per_gpu_hour: float | None = None
    gpus: int | None = None
    price_source: str = "no price: pass --gpu-price USD or --cost-profile NAME"
    mode: Literal["rental", "owned", "none"] = "none"
    usd_spent: float | None = None
    tokens_per_dollar_total: float | None = None  # run-wide
    tokens_per_dollar_output: float | None = None  # run-wide
    usd_per_million_output_tokens: float | None = None  # run-wide
    tokens_per_dollar_total_window: float | None = None
    tokens_per_dollar_output_window: float | None = None


RunState = Literal["starting", "running", "paused", "server down", "stopping", "finished"]


class RunInfo(_Frozen):
    target: str  # "attach http://…", "serve Qwen/Qwen3-8B", "simulated h200/llama-3.1-8b"
    simulated: bool = False
    workload: str = "none"
    users: int = 0
    state: RunState = "starting"
    started_at: float = 0.0  # unix time of the run's first tick
    refresh_s: float = 1.0


class Snapshot(_Frozen):
    """Everything a sink needs for one tick."""

    schema_version: int = SCHEMA_VERSION
    seq: int
    time: float  # unix time of this tick
    elapsed_s: float
    run: RunInfo
    endpoints: tuple[EndpointFigures, ...] = ()
    aggregate: EndpointFigures | None = None  # sum/mean over endpoints; None with no endpoint
    gpu: GpuState = Field(default_factory=GpuState)
    client: ClientFigures | None = None  # None when observing only (workload `none`)
    sessions: tuple[SessionRow, ...] = ()
    cost: CostFigures = Field(default_factory=CostFigures)
    events: tuple[str, ...] = ()  # app events new since the previous tick (already redacted)
    server_log: tuple[str, ...] = ()  # launched-server log lines new since the previous tick

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, line: str | bytes) -> Snapshot:
        return cls.model_validate_json(line)
