"""The rows a set of figures lists (users, steps of the step curve, the retention curve, endpoints,
task-time bars, lost load workers) and the frontier's axis: small models shared by the tick's Snapshot
and the report's figures."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from agentx_tui.snapshot.base import Frozen

UserState = Literal["prefill", "decoding", "tool", "waiting", "paused", "done", "error"]


class UserRow(Frozen):
    """One row of the users table: a user (one of the `-u N` slots of simulated load, running one session
    after another), a sub-agent while it runs (`parent`), or a real agent's session through `--proxy`
    (`real`)."""

    user: int
    session: int  # how many sessions this user has started (1-based)
    state: UserState
    step: int
    steps_total: int
    context_tokens: int
    last_ttft_s: float | None = None
    decode_tokens_per_s: float | None = None  # rolling mean over this session's requests
    # 1 / mean r_i (E2E latency per output token) over this session: its E2E-normalized interactivity
    e2e_interactivity_tokens_per_s: float | None = None
    output_tokens: int = 0  # over all sessions of this user
    requests: int = 0
    errors: int = 0
    endpoint: str = ""
    parent: int | None = None  # for sub-agents: the parent user id
    interactivity_tokens_per_s: float | None = None  # 1 / mean per-request ITL over this session
    # Σ hit ÷ Σ reused prompt tokens of this session's calls (docs/metrics.md §4, "Where the prefix went"):
    # how much of what it sent again the server still had cached. None: nothing reused yet, or no
    # cached_tokens from the server.
    prefix_hit_share: float | None = None
    label: str = ""  # what the session replays (a trace file name), or a real session's short id
    real: bool = False  # a proxied session of a real agent (agentx_tui.proxy), not a simulated user
    # A real session's own name (its session header's value or the request's `user` field), for the
    # screen only: excluded from every serialisation (the recording, the report's `users_detail`), as
    # docs/capture.md promises that no header value is ever written. "" for inferred sessions.
    name: str = Field(default="", exclude=True)

    @model_serializer(mode="wrap")
    def _write(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A field added since a release is written only when set: a row read from a file of that release
        # (a report's `users_detail`) is written back as it was read.
        out: dict[str, Any] = handler(self)
        return {k: v for k, v in out.items() if k not in _ADDED_LATER or k in self.model_fields_set}


_ADDED_LATER = frozenset({"prefix_hit_share"})


class StepRow(Frozen):
    """One row of the step curve (docs/metrics.md, "Tasks"): the completed calls whose step (a call's
    place in its agent's loop) falls in [step, step_last]."""

    step: int  # the bucket's first step
    step_last: int
    requests: int
    context_tokens_mean: float | None = None
    ttft_p50_s: float | None = None
    ttft_p90_s: float | None = None
    e2e_p50_s: float | None = None
    e2e_p90_s: float | None = None


class ProbeRow(Frozen):
    """A tier sweep's probe (docs/sweeps.md, "A tier sweep"): a short window that tells where p90
    interactivity crosses the tiers, never a point (it stands on no frontier and feeds no tier read).
    Its figures are over its window, as a point's are; `purpose` says what it was for."""

    index: int  # 1-based, in the order the probes were measured
    users: int
    purpose: str  # "bracketing tiers 30 50 75 100", "tier 50"
    tiers: tuple[float, ...] = ()  # the tiers it was for
    warmup_s: float  # from its users' setting to its window's opening
    duration_s: float  # its window's length
    window_start_s: float  # run-elapsed seconds at which its window opened
    requests: int | None = None  # counted for its latencies, as a point's
    e2e_interactivity_p90_tokens_per_s: float | None = None
    interactivity_p90_tokens_per_s: float | None = None
    total_tokens_per_s: float | None = None
    total_tokens_per_s_per_gpu: float | None = None
    error_rate: float | None = None
    steady: bool | None = None  # whether its load was steady when its window opened (sweep/steady.py)
    steady_reason: str | None = None


class WorkerLossRow(Frozen):
    """A load worker that died during the run (docs/scale.md, "A lost load worker"): when it was seen, how
    it ended, the users it drove, and whether a fresh worker took them again. The report's `worker_losses`
    lists them; `at_s` and `restarted_at_s` are run-elapsed seconds, `point` the sweep point (1-based) it
    was lost in (None in a plain run)."""

    at_s: float
    worker: int  # 1-based, of `workers`
    workers: int
    pid: int | None = None  # None for a Ray actor whose process id is not known
    how: str  # how it ended, in words: "SIGKILL", "exit code 1", "Ray actor died: …"
    users: int  # the run's users then
    users_lost: int  # its share of them
    users_left: int  # the users the other workers still drove
    point: int | None = None
    restarted_at_s: float | None = None  # when a fresh worker took its users again; None: never
    restart_error: str | None = None  # why a fresh worker could not be started

    @property
    def words(self) -> str:
        """The loss in one sentence, as the log and the headless output say it when it happens."""
        return lost_worker_words(
            self.worker, self.workers, self.pid, self.how, self.users_lost, self.users_left, self.users
        )


def lost_worker_words(worker: int, workers: int, pid: int | None, how: str, lost: int, left: int, users: int) -> str:
    """ "load worker 2 of 2 (pid 1234) died (SIGKILL): its 8 users are gone; 8 of 16 remain": one rule for the
    pool's event and the headless line (`worker` 1-based)."""
    process = f" (pid {pid})" if pid is not None else ""
    gone = f"its {lost} user is gone" if lost == 1 else f"its {lost} users are gone"
    return f"load worker {worker} of {workers}{process} died ({how}): {gone}; {left} of {users} remain"


def restarted_worker_words(worker: int, workers: int, pid: int | None, users: int) -> str:
    """ "load worker 2 of 2 restarted (pid 1240): its 8 users run again": the pool's event and the headless
    line when a fresh worker takes a lost one's users (`pid`: the fresh worker's, where known)."""
    process = f" (pid {pid})" if pid is not None else ""
    back = f"its {users} user runs again" if users == 1 else f"its {users} users run again"
    return f"load worker {worker} of {workers} restarted{process}: {back}"


def lost_users_reason(losses: Sequence[WorkerLossRow]) -> str | None:
    """Why the run's load was not what it says, in words: the lost workers whose users no fresh worker
    took again (a plain run never restarts one; a sweep that stopped could not). None when there are none:
    one rule for the report's `partial` and AgentX's `load_workers` rule."""
    kept = [loss for loss in losses if loss.restarted_at_s is None]
    if not kept:
        return None
    first = kept[0]
    if len(kept) == 1:
        return (
            f"load worker {first.worker} of {first.workers} died at {first.at_s:.0f} s ({first.how}): "
            f"{first.users_lost} of {first.users} users were not driven from then on"
        )
    lost = sum(loss.users_lost for loss in kept)
    return (
        f"{len(kept)} load workers died (the first at {first.at_s:.0f} s, {first.how}): "
        f"{lost} users were not driven from then on"
    )


# Which ceiling of the roofline binds (docs/metrics.md, "Roofline"): the larger of MFU and MBU.
RooflineBound = Literal["compute", "memory"]


# The retention curve's idle-time buckets by their lower edges, in seconds; the last one has no upper edge.
IDLE_BUCKETS_S = (0.0, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0)
_LAST_SPAN_S = 120.0  # how far past 120 s the last bucket reaches when an idle time is placed inside it


def idle_bucket(idle_s: float) -> int:
    """The bucket of an idle time: low ≤ idle < high (a negative one, clocks a hair apart, is the first)."""
    return max(bisect_right(IDLE_BUCKETS_S, idle_s) - 1, 0)


def idle_place(idle_s: float) -> tuple[int, float]:
    """Where a chart places an idle time (the agents' think p50/p90): its bucket, and how far into the
    bucket it lies, 0–1, linearly (the last bucket taken as `_LAST_SPAN_S` wide)."""
    bucket = idle_bucket(idle_s)
    low = IDLE_BUCKETS_S[bucket]
    high = IDLE_BUCKETS_S[bucket + 1] if bucket + 1 < len(IDLE_BUCKETS_S) else low + _LAST_SPAN_S
    return bucket, min(1.0, (idle_s - low) / (high - low))


class RetentionRow(Frozen):
    """One bucket of the retention curve (docs/metrics.md §4, "Where the prefix went"): the calls whose
    session had been idle for `idle_s_low` ≤ idle < `idle_s_high` seconds before them (None: no upper
    bound), the prompt tokens they sent again, and the share of those the server still had cached."""

    idle_s_low: float
    idle_s_high: float | None = None
    requests: int = 0
    reused_tokens: int = 0
    hit_share: float | None = None  # Σ hit ÷ Σ reused; None when the server reported no cached_tokens


# The x-axis a sweep's frontier is read on (docs/sweeps.md): AgentX's North Star, E2E-normalized
# interactivity (1 / p90 of E2E latency per output token), or decode interactivity (1 / p90 of ITL).
FrontierAxis = Literal["e2e_interactivity", "decode_interactivity"]


class EndpointRow(Frozen):
    """One endpoint's whole-run figures (the report's `endpoints`, docs/metrics.md). Written with the keys
    it was given (null ones included), so that a row of an older report is written back as it was read."""

    @model_serializer(mode="wrap")
    def _write_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        written: dict[str, Any] = handler(self)
        return {key: value for key, value in written.items() if key in self.model_fields_set}

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
    # Where its prompt tokens came from and its offload tier (snapshot/cache.py).
    prompt_share_computed: float | None = None
    prompt_share_gpu_cache: float | None = None
    prompt_share_offload: float | None = None
    kv_offload_load_gb_per_s: float | None = None
    kv_offload_store_gb_per_s: float | None = None
    kv_block_idle_before_evict_p50_s: float | None = None
    kv_block_idle_before_evict_p90_s: float | None = None
    kv_block_reuse_gap_p50_s: float | None = None
    kv_block_reuse_gap_p90_s: float | None = None
    kv_offload_cpu: bool | None = None
    kv_offload_cpu_bytes: float | None = None
    # Where a request's time went on it, and its speculative decoding, over the run (snapshot/servertime.py).
    server_queue_s_mean: float | None = None
    server_prefill_s_mean: float | None = None
    server_decode_s_mean: float | None = None
    server_step_tokens_mean: float | None = None
    server_prefill_computed_tokens_mean: float | None = None
    server_preemptions_per_request: float | None = None
    spec_acceptance_length: float | None = None
    spec_acceptance_rate: float | None = None
    spec_acceptance_by_position: list[float] | None = None
    spec_draft_length: int | None = None
    spec_golden_acceptance_length: float | None = None
    spec_acceptance_vs_golden: float | None = None


class TaskTimeBar(Frozen):
    """One bar of the completed tasks' wall-time distribution (`task_s_histogram`): the tasks whose wall
    time is at most `upper_s` and above the bar before (edges on a 1-2-5 scale; empty bars left out)."""

    upper_s: float
    tasks: int
