"""The report as a typed model (docs/metrics.md): what `ReportBuilder` builds, the writers write,
`--check` reads and `compare` loads back from a file.

Its JSON is the contract, and it is flat: one key per figure (`REPORT_KEYS`, in that order), then, for
a sweep, `points`, `frontier`, `tiers`, `sweep_stop_reason` and every tier's own keys
(`total_tokens_per_s_per_gpu_at_100` and its `_ci_low`/`_ci_high`, `tokens_per_dollar_total_at_100`,
`usd_per_million_total_tokens_at_100`; read on the North Star, and again with `_decode` after T on
decode interactivity; then `agents_per_gpu_at_100`, on the frontier's own axis). Those per-tier keys are
the `tiers` list written flat (the frontier axis's reads, then the other axis's), so the model keeps the
list only (`tiers`, typed `TierRead`) and writes the keys from it; a file that has the keys without the
list (a hand-written one) gets its tiers from the keys.

Reading a file back (`Report.model_validate(json.load(f))`) and dumping it (`model_dump()`) gives the
same JSON: a key the file does not have reads as None and is not written back, so an older report (one
without the newer keys) loads and stays as it was. The builder sets every key. A list entry this
version cannot read as its model (an older report's endpoint, a hand-written point) is kept as the JSON
object it is.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from agentx_tui.report._keys import parse_tier_key, tier_report_keys
from agentx_tui.snapshot import FrontierAxis, PointFigures, StepRow, TierRead, UserRow
from agentx_tui.sweep import DECODE, NORTH_STAR

JsonObject = dict[str, Any]
# Written after the tiers' flat keys, as they always were: what the run and the writer add at the end.
_LAST_KEYS = ("server_exit_code", "server_log_tail", "checks")


class EndpointRow(BaseModel):
    """One endpoint's whole-run figures (`endpoints` in docs/metrics.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str | None = None
    up: bool | None = None
    status: str | None = None
    flavor: str | None = None
    model: str | None = None
    engine_version: str | None = None
    output_tokens_per_s: float | None = None
    prompt_tokens_per_s: float | None = None
    cached_prompt_tokens_per_s: float | None = None
    total_tokens_per_s: float | None = None
    prefix_cache_hit_rate_server: float | None = None
    preemptions: float | None = None
    requests_finished: float | None = None
    prefix_cache_hit_rate_server_lifetime: float | None = None
    kv_cache_usage_mean: float | None = None
    kv_cache_usage_max: float | None = None
    block_size: int | None = None
    num_gpu_blocks: int | None = None
    prompt_tokens: float | None = None
    generation_tokens: float | None = None
    cached_prompt_tokens: float | None = None
    prefix_cache_queries: float | None = None
    prefix_cache_hits: float | None = None


class TaskTimeBar(BaseModel):
    """One bar of the completed tasks' wall-time distribution (`task_s_histogram`): the tasks whose wall
    time is at most `upper_s` and above the bar before (edges on a 1-2-5 scale; empty bars left out)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    upper_s: float
    tasks: int


class CheckRow(BaseModel):
    """One `--check` and its outcome (`CheckResult`), as the report file keeps it (`checks`)."""

    model_config = ConfigDict(frozen=True)

    expr: str
    key: str
    op: str
    threshold: float
    value: float | None
    passed: bool

    @property
    def shown_value(self) -> str:
        return "n/a" if self.value is None else f"{self.value:.6g}"

    @property
    def verdict_detail(self) -> str:
        """What the summary says after the check: the figure, or that it is unknown (a failure)."""
        if self.value is None:
            return "the figure is unknown: the run could not measure it, so the check fails"
        return f"measured {self.shown_value}"


# A list entry is read as its model where it fits, else kept as the JSON object it is.
_MODEL_FIRST = Field(union_mode="left_to_right")
Endpoint = Annotated[EndpointRow | JsonObject, _MODEL_FIRST]
User = Annotated[UserRow | JsonObject, _MODEL_FIRST]
Point = Annotated[PointFigures | JsonObject, _MODEL_FIRST]
Step = Annotated[StepRow | JsonObject, _MODEL_FIRST]


class Report(BaseModel):
    """The run's report: every key of docs/metrics.md, None where a figure is unknown."""

    # Keys this version does not know (a newer report's) are left out rather than refused: `compare`
    # reads reports of other versions.
    model_config = ConfigDict(frozen=True, extra="ignore")

    # --- the contract keys (CONTRACT_KEYS, in their documented order) ---
    target: str | None = None
    model: str | None = None
    engine_version: str | None = None
    workload: str | None = None
    users: int | None = None
    duration_s: float | None = None
    requests_completed: int | float | None = None  # the servers' counter (a float) when observing only
    requests_failed: int | None = None
    error_rate: float | None = None
    output_tokens_per_s: float | None = None
    prompt_tokens_per_s: float | None = None
    cached_prompt_tokens_per_s: float | None = None
    total_tokens_per_s: float | None = None
    per_user_output_tokens_per_s_p50: float | None = None
    ttft_p50_s: float | None = None
    ttft_p90_s: float | None = None
    ttft_p99_s: float | None = None
    itl_p50_s: float | None = None
    itl_p90_s: float | None = None
    itl_p99_s: float | None = None
    prefix_cache_hit_rate_server: float | None = None
    prefix_cache_hit_rate_client: float | None = None
    prefix_cache_hit_rate_ceiling: float | None = None
    kv_cache_usage_mean: float | None = None
    kv_cache_usage_max: float | None = None
    preemptions: float | None = None
    gpu_util_mean: float | None = None
    gpu_power_w_mean: float | None = None
    usd_per_gpu_hour: float | None = None
    gpus: int | None = None
    usd_spent: float | None = None
    tokens_per_dollar_total: float | None = None
    tokens_per_dollar_output: float | None = None
    usd_per_million_output_tokens: float | None = None
    endpoints: list[Endpoint] | None = None
    users_detail: list[User] | None = None
    interactivity_p50_tokens_per_s: float | None = None
    interactivity_p90_tokens_per_s: float | None = None
    total_tokens_per_s_per_gpu: float | None = None
    output_tokens_per_s_per_gpu: float | None = None
    gpus_source: str | None = None
    e2e_p90_s: float | None = None
    client_cpu_cores_mean: float | None = None
    client_loop_lag_p99_s: float | None = None
    client_saturated: bool | None = None
    workers: int | None = None
    proxied_requests: int | None = None
    proxied_sessions: int | None = None
    proxy_added_ttft_p50_s: float | None = None
    proxy_added_ttft_p99_s: float | None = None
    captured_sessions: int | None = None
    capture_dir: str | None = None
    total_tokens_per_s_per_gpu_ci_low: float | None = None
    total_tokens_per_s_per_gpu_ci_high: float | None = None
    interactivity_p90_tokens_per_s_ci_low: float | None = None
    interactivity_p90_tokens_per_s_ci_high: float | None = None
    ci_method: str | None = None
    stopped_early: bool | None = None
    stop_reason: str | None = None
    schedule_lag_p50_s: float | None = None
    schedule_lag_p90_s: float | None = None
    schedule_lag_p99_s: float | None = None
    e2e_interactivity_p50_tokens_per_s: float | None = None
    e2e_interactivity_p75_tokens_per_s: float | None = None
    e2e_interactivity_p90_tokens_per_s: float | None = None
    e2e_interactivity_p90_tokens_per_s_ci_low: float | None = None
    e2e_interactivity_p90_tokens_per_s_ci_high: float | None = None
    frontier_axis: FrontierAxis | None = None
    tasks_completed: int | None = None
    tasks_running: int | None = None
    tasks_failed: int | None = None
    task_s_p50: float | None = None
    task_s_p90: float | None = None
    task_model_share: float | None = None
    steps_per_task_mean: float | None = None
    tokens_per_task_mean: float | None = None
    output_tokens_per_task_mean: float | None = None
    usd_per_task: float | None = None
    tasks_per_hour_per_gpu: float | None = None
    step_curve: list[Step] | None = None

    # --- how each figure was obtained (EXTRA_KEYS) ---
    partial: bool | None = None
    partial_reason: str | None = None
    simulated: bool | None = None
    agentx_version: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    samples: int | None = None
    throughput_source: str | None = None
    output_tokens: int | float | None = None  # the client's count, or the servers' counter (a float)
    prompt_tokens: int | float | None = None
    cached_prompt_tokens: int | float | None = None
    output_tokens_per_s_server: float | None = None
    prompt_tokens_per_s_server: float | None = None
    cached_prompt_tokens_per_s_server: float | None = None
    total_tokens_per_s_server: float | None = None
    prefix_cache_hit_rate_server_source: str | None = None
    prefix_cache_hit_rate_server_lifetime: float | None = None
    users_max: int | None = None
    sessions_completed: int | None = None
    errors_by_kind: dict[str, int] | None = None
    gpu_power_w_mean_source: str | None = None
    price_source: str | None = None
    cost_mode: str | None = None
    client_saturated_reason: str | None = None
    client_cpu_us_per_token: float | None = None
    sessions_started: int | None = None
    precision: float | None = None
    output_scale: float | None = None
    schedule_behind: bool | None = None
    schedule_users_needed: int | None = None
    task_s_histogram: list[TaskTimeBar] | None = None

    # --- a sweep only (SWEEP_KEYS; the tiers' flat keys follow `sweep_stop_reason`) ---
    points: list[Point] | None = None
    frontier: list[int] | None = None
    tiers: list[TierRead] | None = None
    sweep_stop_reason: str | None = None

    # --- added at the end: a launched server that died under the run, and the `--check`s ---
    server_exit_code: int | None = None
    server_log_tail: list[str] | None = None
    checks: list[CheckRow] | None = None

    @model_validator(mode="before")
    @classmethod
    def _tiers_from_flat_keys(cls, data: Any) -> Any:
        """Take the tiers' flat keys out of the input; they make the tiers where the list is missing."""
        if not isinstance(data, dict) or not any(parse_tier_key(k) for k in data):
            return data
        data = dict(data)
        flat = {k: data.pop(k) for k in list(data) if parse_tier_key(k)}
        if data.get("tiers") is None:
            data["tiers"] = _tiers_of(flat, data.get("frontier_axis"), has_axis="frontier_axis" in data)
        return data

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> JsonObject:
        out = {k: v for k, v in handler(self).items() if k in self.model_fields_set}
        last = {k: out.pop(k) for k in _LAST_KEYS if k in out}
        if self.tiers is not None:
            out.update(tier_report_keys(self.tiers, agents_axis=self.frontier_axis))
        return {**out, **last}

    @property
    def is_sweep(self) -> bool:
        return bool(self.points) or bool(self.tiers)

    def has(self, key: str) -> bool:
        """Whether the report has `key` at all (an older one lacks the newer keys)."""
        return key in self.model_fields_set

    def figure(self, key: str) -> float | None:
        """The number under `key` in the report's JSON (a tier's flat key too); None when it is null,
        missing, not a number (true/false, text) or not finite."""
        value = self.model_dump().get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return None
        return float(value)


def _tiers_of(flat: JsonObject, frontier_axis: Any, *, has_axis: bool) -> list[JsonObject]:
    """`{"total_tokens_per_s_per_gpu_at_100": 9e3, …}` → `[{"tier": 100.0, "total_tokens_per_s_per_gpu": 9e3, …}]`.

    A key with `_decode` after T is a read on decode interactivity; one without, on the North Star in a
    report that names its frontier axis, else (an older report) of no axis. `agents_per_gpu_at_T` goes
    to the read at T on the frontier's axis."""
    plain: FrontierAxis | None = NORTH_STAR if has_axis else None
    agents_axis: FrontierAxis | None = frontier_axis if frontier_axis in (NORTH_STAR, DECODE) else plain
    tiers: dict[tuple[float, FrontierAxis | None], JsonObject] = {}
    for key, value in flat.items():
        parsed = parse_tier_key(key)
        if parsed is None:
            continue
        axis = agents_axis if parsed.figure == "agents_per_gpu" else DECODE if parsed.decode else plain
        read = tiers.setdefault((parsed.tier, axis), {"tier": parsed.tier})
        if axis is not None:
            read["axis"] = axis
        read[parsed.figure] = value
    return list(tiers.values())
