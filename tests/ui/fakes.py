"""A deterministic Snapshot stream and recording controls for the dashboard's tests and bench."""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentx_tui.snapshot import (
    ClientHealth,
    ClientReading,
    ClientTotals,
    CostReading,
    EndpointReading,
    EndpointTotals,
    Figures,
    FrontierAxis,
    GpuReading,
    GpuState,
    Percentiles,
    PointFigures,
    RetentionRow,
    RunInfo,
    RunState,
    Snapshot,
    StepRow,
    SweepPhase,
    SweepState,
    TaskReading,
    TierRead,
    UserRow,
    UserState,
)
from agentx_tui.sweep import DECODE, NORTH_STAR, read_tiers, view_fronts

URL = "http://10.0.0.7:8000"
SECRET = "sk-test-Zq9X8c7V6b5N4m3"
_STATES: tuple[UserState, ...] = ("decoding", "prefill", "tool", "waiting", "decoding", "tool")
GIB = 1024**3


# A cache that holds an idle agent's context for about 30 s: (lowest idle s, highest, calls, reused
# tokens, hit share) per bucket, the last one empty; the agents idle 4.2 s at p50 and 38 s at p90.
RETENTION = (
    (0.0, 1.0, 410, 5_100_000, 1.0),
    (1.0, 2.0, 260, 3_300_000, 0.99),
    (2.0, 5.0, 520, 6_800_000, 0.97),
    (5.0, 10.0, 300, 4_000_000, 0.93),
    (10.0, 30.0, 160, 2_200_000, 0.58),
    (30.0, 60.0, 70, 980_000, 0.14),
    (60.0, 120.0, 12, 170_000, 0.02),
)


def retention_figures(cached_reported: bool = True) -> Figures:
    """The client's whole-run split of its prompts (measure/reuse.py), the curve above."""
    rows = [
        RetentionRow(
            idle_s_low=low,
            idle_s_high=high,
            requests=n,
            reused_tokens=tokens,
            hit_share=share if cached_reported else None,
        )
        for low, high, n, tokens, share in RETENTION
    ]
    reused = sum(r.reused_tokens for r in rows)
    hit = sum(r.reused_tokens * (r.hit_share or 0.0) for r in rows)
    return Figures(
        prefix_reused_tokens=reused,
        prefix_evicted_share=1 - hit / reused if cached_reported else None,
        retention_curve=rows,
        think_s_p50=4.2,
        think_s_p90=38.0,
    )


def make_snapshot(
    seq: int = 42,
    *,
    sessions: int = 12,
    users: int | None = None,
    elapsed_s: float | None = None,
    state: RunState = "running",
    gpus: int = 2,
    price: bool = True,
    cached_reported: bool = True,
    server_log: Sequence[str] = (),
    events: Sequence[str] = (),
    offload: bool = False,
    spec: bool = False,
) -> Snapshot:
    """A plausible tick of an H200 run; every figure is a fixed function of `seq`, so tests repeat. Its
    server records KV residency (--kv-cache-metrics, 1 in 10 blocks) and its request phases; with
    `offload` it offloads KV to 500 GB of CPU memory, and a fifth of the prompt tokens come from there;
    with `spec` it speculates (k = 3, acceptance length 2.5 against a golden 2.49)."""
    wave = 0.5 + 0.5 * math.sin(seq / 5)
    output_tps = 9000 + 3000 * wave
    prompt_tps = 200_000 + 50_000 * wave
    cached_tps = prompt_tps * 0.9
    elapsed = float(seq) if elapsed_s is None else elapsed_s
    offloaded = 0.2 if offload else 0.0
    sources = (0.1 * prompt_tps, (0.9 - offloaded) * prompt_tps, offloaded * prompt_tps)
    cache = {
        "prompt_share_computed": 0.1,
        "prompt_share_gpu_cache": 0.9 - offloaded,
        "prompt_share_offload": offloaded,
        "prompt_computed_tokens_per_s": sources[0],
        "prompt_gpu_cache_tokens_per_s": sources[1],
        "prompt_offload_tokens_per_s": sources[2],
        "kv_block_idle_before_evict": Percentiles(p50=12.0 + 4 * wave, p90=41.0),
        "kv_block_reuse_gap": Percentiles(p50=3.2, p90=9.5),
        "kv_block_lifetime": Percentiles(p50=95.0, p90=300.0),
        "kv_cache_metrics_sample": 0.1,
        "kv_offload_cpu": offload,
        "kv_offload_cpu_bytes": 500e9 if offload else None,
        "waiting_capacity": 3.0,
        "waiting_deferred": 2.0 if offload else 0.0,
    }
    # vLLM's request phases over the window: 30 ms queued, 150 ms in prefill (the client's TTFT mean
    # 210 ms leaves 30 ms outside the server), 4.1 s decoding; 2 K tokens an engine step.
    cache.update(
        server_queue_s_mean=0.03,
        server_prefill_s_mean=0.15,
        server_decode_s_mean=4.1,
        server_step_tokens_mean=2048.0,
        server_prefill_computed_tokens_mean=1900.0,
        server_preemptions_per_request=0.01,
    )
    if spec:
        cache.update(
            spec_draft_length=3,
            spec_acceptance_length=2.5,
            spec_acceptance_rate=0.5,
            spec_acceptance_by_position=(0.8, 0.5, 0.2),
            spec_golden_acceptance_length=2.49,
            spec_golden_source="DeepSeek-V4 MTP, on, k = 3: InferenceX dsv4_mtp.yaml",
            spec_acceptance_vs_golden=2.5 / 2.49,
        )
    if offload:
        # A fifth of 200–250 K prompt tok/s at 128 KiB a token (Llama-3.1-8B): about 5–7 GB/s loaded.
        cache.update(
            kv_offload_load_gb_per_s=sources[2] * 131072 / 1e9,
            kv_offload_store_gb_per_s=1.4 + wave,
            kv_offload_load_s_per_gb=0.021,
            kv_offload_store_s_per_gb=0.022,
        )
    endpoint = EndpointReading(
        url=URL,
        up=True,
        status="up",
        flavor="vllm",
        model="meta-llama/Llama-3.1-8B-Instruct",
        engine_version="0.32.0",
        max_model_len=131072,
        running=min(sessions, 256),
        waiting=3.0,
        kv_cache_usage=0.55 + 0.4 * wave,
        block_size=16,
        num_gpu_blocks=120_000,
        prefix_caching_enabled=True,
        prefix_hit_rate_window=0.88 + 0.05 * wave,
        prefix_hit_rate_lifetime=0.9,
        prompt_tokens_per_s=prompt_tps,
        generation_tokens_per_s=output_tps,
        cached_prompt_tokens_per_s=cached_tps,
        preemptions_per_s=0.5 * wave,
        requests_per_s=22.5,
        ttft=Percentiles(p50=0.17, p90=0.42, p99=0.9),
        itl=Percentiles(p50=0.008, p90=0.013, p99=0.03),
        totals=EndpointTotals(
            prompt_tokens=prompt_tps * elapsed, generation_tokens=output_tps * elapsed, preemptions=12.0
        ),
        **cache,
    )
    gpu_rows = tuple(
        GpuReading(
            index=i,
            name="NVIDIA H200",
            source="nvml",
            utilization=0.8 + 0.15 * wave - 0.1 * i,
            memory_used_bytes=(120 - 10 * i) * GIB,
            memory_total_bytes=141 * GIB,
            power_w=600.0 - 40 * i,
            power_limit_w=700.0,
            temperature_c=64.0 + i,
        )
        for i in range(gpus)
    )
    rows = tuple(
        UserRow(
            user=u,
            session=1 + (seq + u) // 30,
            state=_STATES[(seq + u) % len(_STATES)],
            step=(seq + u) % 30 + 1,
            steps_total=30,
            context_tokens=12_000 + 1_500 * ((seq + u) % 30),
            last_ttft_s=0.1 + 0.01 * (u % 7),
            decode_tokens_per_s=95.0 + (u % 11),
            output_tokens=400 * (seq + u),
            requests=seq + u,
            endpoint=URL,
            interactivity_tokens_per_s=92.0 + (u % 9),
            e2e_interactivity_tokens_per_s=61.0 + (u % 13),
            prefix_hit_share=(0.99 - 0.06 * (u % 5)) if cached_reported else None,
        )
        for u in range(sessions)
    )
    total_tps = prompt_tps + output_tps
    usd_hour = 2.90 * gpus
    cost = (
        CostReading(
            usd_per_gpu_hour=2.90,
            gpus=gpus,
            price_source="preset H200 rental (SemiAnalysis, July 2026)",
            mode="rental",
            usd_spent=usd_hour * elapsed / 3600,
            tokens_per_dollar_total=total_tps * 3600 / usd_hour,
            tokens_per_dollar_output=output_tps * 3600 / usd_hour,
            usd_per_million_output_tokens=usd_hour * 1e6 / (output_tps * 3600),
            gpus_source="NVML of this machine (the server runs here)" if gpus else None,
        )
        if price
        else CostReading()
    )
    return Snapshot(
        seq=seq,
        time=1_800_000_000.0 + elapsed,
        elapsed_s=elapsed,
        run=RunInfo(
            target=f"attach {URL}",
            workload="coding-agent",
            users=sessions if users is None else users,
            state=state,
            started_at=1_800_000_000.0,
        ),
        endpoints=(endpoint,),
        aggregate=endpoint,
        gpu=GpuState(status=f"{gpus} GPUs via NVML", gpus=gpu_rows) if gpus else GpuState(),
        client=ClientReading(
            window=Figures(
                output_tokens_per_s=output_tps,
                prompt_tokens_per_s=prompt_tps,
                cached_prompt_tokens_per_s=cached_tps if cached_reported else None,
                total_tokens_per_s=total_tps,
                prefix_cache_hit_rate_client=0.9 if cached_reported else None,
                prefix_cache_hit_rate_ceiling=0.94,
                per_user_output_tokens_per_s_p50=101.0,
                interactivity_p50_tokens_per_s=98.0,
                interactivity_p90_tokens_per_s=87.5,
                e2e_interactivity_p50_tokens_per_s=74.0,
                e2e_interactivity_p90_tokens_per_s=58.5,
                ttft_p50_s=0.18,
                ttft_p90_s=0.45,
                itl_p50_s=0.009,
                itl_p90_s=0.014,
                prefix_evicted_share=0.08 if cached_reported else None,
                # Where the North Star's time went: of the p90 tail's r_i, 38% before the first token and
                # 7% in decode stalls.
                ttft_s_mean=0.21,
                north_star_ttft_share=0.38,
                north_star_stall_share=0.07,
                median_ttft_share=0.22,
                output_tokens_p50=310,
                decode_stall_share=0.04,
                decode_stalls_per_request=0.6,
            ),
            run=retention_figures(cached_reported),
            requests_per_s=22.5,
            totals=ClientTotals(
                requests_completed=100 + seq,
                prompt_tokens=int(prompt_tps * elapsed),
                cached_prompt_tokens=int(cached_tps * elapsed),
                output_tokens=int(output_tps * elapsed),
                cached_tokens_reported=cached_reported,
            ),
        ),
        client_health=ClientHealth(workers=1, cpu_cores=0.31, loop_lag_p99_s=0.004, cpu_us_per_token=18.4),
        sessions=rows,
        cost=cost,
        events=tuple(events),
        server_log=tuple(server_log),
    )


# A sweep's measured points (users, p90 interactivity tok/s/user, total tok/s per GPU). The 16-user
# point is below the frontier (the 32-user one beats it on both axes), as noise makes happen.
SWEEP_USERS = (8, 16, 32, 64, 128, 196)
SWEEP_MEASURED = ((8, 186.0, 21_000.0), (16, 139.0, 36_000.0), (32, 142.0, 61_000.0), (64, 96.0, 104_000.0))
SWEEP_TIERS = (30.0, 50.0, 75.0, 100.0, 150.0, 200.0)
SWEEP_USD_PER_GPU_HOUR = 2.90
# 95% intervals, as fractions of the value: each point's throughput and p90 interactivity, each tier's read.
SWEEP_TPUT_CI, SWEEP_X_CI, SWEEP_TIER_CI = 0.25, 0.12, 0.08


def pareto(points: Sequence[tuple[float, float]]) -> tuple[int, ...]:
    """Indices of the points no other point beats on both axes, by interactivity (x) ascending."""
    best = [
        i for i, (x, y) in enumerate(points) if not any(ox >= x and oy >= y and (ox, oy) != (x, y) for ox, oy in points)
    ]
    return tuple(sorted(best, key=lambda i: points[i][0]))


def sweep_tiers(points: Sequence[tuple[float, float]], frontier: Sequence[int]) -> tuple[TierRead, ...]:
    """Tier reads by straight lines between frontier points; null outside the measured range, with why."""
    xy = [points[i] for i in frontier]
    reads = []
    for tier in SWEEP_TIERS:
        if not xy or tier < xy[0][0]:
            slowest = f" ({xy[0][0]:.0f} tok/s/user)" if xy else ""
            reads.append(TierRead(tier=tier, note=f"below the slowest point measured{slowest}"))
            continue
        if tier > xy[-1][0]:
            reads.append(TierRead(tier=tier, note=f"above the fastest point measured ({xy[-1][0]:.0f} tok/s/user)"))
            continue
        for (x0, y0), (x1, y1) in itertools.pairwise(xy):
            if x0 <= tier <= x1:
                per_gpu = y0 + (y1 - y0) * (tier - x0) / (x1 - x0)
                break
        else:
            per_gpu = xy[0][1]
        usd_per_m = SWEEP_USD_PER_GPU_HOUR * 1e6 / (per_gpu * 3600)
        reads.append(
            TierRead(
                tier=tier,
                total_tokens_per_s_per_gpu=per_gpu,
                tokens_per_dollar_total=1e6 / usd_per_m,
                usd_per_million_total_tokens=usd_per_m,
                total_tokens_per_s_per_gpu_ci_low=per_gpu * (1 - SWEEP_TIER_CI),
                total_tokens_per_s_per_gpu_ci_high=per_gpu * (1 + SWEEP_TIER_CI),
            )
        )
    return tuple(reads)


def make_sweep_state(
    measured: int = 4,
    *,
    mode: Literal["list", "auto"] = "list",
    phase: SweepPhase = "measure",
    phase_left_s: float | None = 41.0,
    stop_reason: str | None = None,
) -> SweepState:
    """A list sweep over SWEEP_USERS with the first `measured` points done and the next in progress
    (none in progress with `phase="done"`)."""
    rows = SWEEP_MEASURED[:measured]
    xy = [(x, y) for _, x, y in rows]
    frontier = pareto(xy)
    points = tuple(
        PointFigures(
            index=i,
            users=users,
            warmup_s=30.0,
            duration_s=120.0,
            window_start_s=30.0 + 150.0 * i,
            interactivity_p90_tokens_per_s=x,
            total_tokens_per_s_per_gpu=y,
            total_tokens_per_s=2 * y,
            total_tokens_per_s_per_gpu_ci_low=y * (1 - SWEEP_TPUT_CI),
            total_tokens_per_s_per_gpu_ci_high=y * (1 + SWEEP_TPUT_CI),
            interactivity_p90_tokens_per_s_ci_low=x * (1 - SWEEP_X_CI),
            interactivity_p90_tokens_per_s_ci_high=x * (1 + SWEEP_X_CI),
            ci_method="throughput: batch means over 10 sub-windows; p90 interactivity: bootstrap over session trees",
            gpus=2,
            usd_per_gpu_hour=SWEEP_USD_PER_GPU_HOUR,
        )
        for i, (users, x, y) in enumerate(rows)
    )
    done = phase == "done"
    planned = SWEEP_USERS if mode == "list" else (*(users for users, _, _ in rows), 8 * 2**measured)
    return SweepState(
        mode=mode,
        planned_users=planned,
        tiers=sweep_tiers(xy, frontier),
        points=points,
        frontier=frontier,
        current=None if done else measured,
        current_users=None if done else planned[measured],
        phase=phase,
        phase_left_s=None if done else phase_left_s,
        warmup_s=30.0,
        point_duration_s=120.0,
        stop_reason=stop_reason,
    )


# The same points on the North Star: E2E-normalized p90 interactivity (tok/s/user) and tasks per hour per
# GPU, by users. Waiting before the first token makes every point slower end to end than it decodes,
# and the 16-user point, below the decode frontier, stands on the North Star's.
SWEEP_E2E = {8: 150.0, 16: 118.0, 32: 101.0, 64: 58.0}
SWEEP_TASKS = {8: 2.1, 16: 3.4, 32: 5.6, 64: 7.9}


def make_north_star_sweep_state(measured: int = 4, **kwargs: Any) -> SweepState:
    """`make_sweep_state` as a sweep now measures it: its frontier and tiers on the North Star, the
    decode view beside it under the North Star policy (sweep/pareto.py and sweep/tiers.py read both), tasks/h/GPU."""
    state = make_sweep_state(measured, **kwargs)
    points = tuple(
        point.updated(
            e2e_interactivity_p90_tokens_per_s=SWEEP_E2E[point.users],
            intervals={
                "e2e_interactivity_p90_tokens_per_s": (
                    SWEEP_E2E[point.users] * (1 - SWEEP_X_CI),
                    SWEEP_E2E[point.users] * (1 + SWEEP_X_CI),
                )
            },
            tasks_per_hour_per_gpu=SWEEP_TASKS[point.users],
        )
        for point in state.points
    )
    north_star, decode = view_fronts(points, NORTH_STAR)

    def tiers(front: tuple[int, ...], axis: FrontierAxis) -> tuple[TierRead, ...]:
        reads = read_tiers(points, front, SWEEP_TIERS, usd_per_gpu_hour=SWEEP_USD_PER_GPU_HOUR, gpus=1, axis=axis)
        return tuple(
            read.model_copy(
                update={
                    "total_tokens_per_s_per_gpu_ci_low": read.total_tokens_per_s_per_gpu * (1 - SWEEP_TIER_CI),
                    "total_tokens_per_s_per_gpu_ci_high": read.total_tokens_per_s_per_gpu * (1 + SWEEP_TIER_CI),
                }
            )
            if read.total_tokens_per_s_per_gpu is not None
            else read
            for read in reads
        )

    return state.model_copy(
        update={
            "points": points,
            "frontier_axis": NORTH_STAR,
            "frontier": north_star,
            "tiers": tiers(north_star, NORTH_STAR),
            "secondary_frontier": decode,
            "secondary_tiers": tiers(decode, DECODE),
        }
    )


def make_north_star_sweep_snapshot(seq: int = 42, **kwargs: Any) -> Snapshot:
    """`make_sweep_snapshot` on the North Star: the 128-user point live at 41 tok/s/user end to end."""
    snap = make_sweep_snapshot(seq, sweep=make_north_star_sweep_state(), **kwargs)
    assert snap.client is not None
    client = snap.client.model_copy(
        update={"window": snap.client.window.updated(e2e_interactivity_p90_tokens_per_s=41.0)}
    )
    return snap.model_copy(update={"client": client})


def make_sweep_snapshot(seq: int = 42, *, sweep: SweepState | None = None, **kwargs: Any) -> Snapshot:
    """`make_snapshot` mid-sweep: the 128-user point being measured, its live p90 interactivity 64 tok/s."""
    snap = make_snapshot(seq, **kwargs)
    assert snap.client is not None
    client = snap.client.model_copy(
        update={
            "window": snap.client.window.updated(
                interactivity_p90_tokens_per_s=64.0, interactivity_p50_tokens_per_s=88.0
            )
        }
    )
    return snap.model_copy(update={"sweep": sweep or make_sweep_state(), "client": client})


# A coding agent's step curve: steps 1…8 alone, then 9–16, 17–32, 33–64 (docs/metrics.md, "Tasks");
# the context grows from the shared 12 K prefix, and latency with it.
TASK_BUCKETS = ((1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7), (8, 8), (9, 16), (17, 32), (33, 64))


def make_task_figures(completed: int = 42, *, price: bool = True, gpus: int | None = 2) -> TaskReading:
    """A coding-agent run's task figures after `completed` tasks; none of the figures when 0."""
    if completed == 0:
        return TaskReading(tasks_running=12)
    curve = tuple(
        StepRow(
            step=first,
            step_last=last,
            requests=completed * (last - first + 1) if last <= 32 else completed * 6,
            context_tokens_mean=12_400.0 + 1_450.0 * (first + last) / 2,
            ttft_p50_s=0.06 + 0.004 * (first + last) / 2,
            ttft_p90_s=0.15 + 0.01 * (first + last) / 2,
            e2e_p50_s=2.1 + 0.035 * (first + last) / 2,
            e2e_p90_s=3.4 + 0.06 * (first + last) / 2,
        )
        for first, last in TASK_BUCKETS
    )
    tokens = 1_020_000.0
    tokens_per_dollar = 1.09e9  # the fake stream's tokens per dollar, about
    return TaskReading(
        tasks_completed=completed,
        tasks_running=12,
        tasks_failed=1,
        task_s_p50=252.0,
        task_s_p90=381.0,
        task_model_share=0.62,
        steps_per_task_mean=37.4,
        tokens_per_task_mean=tokens,
        output_tokens_per_task_mean=14_900.0,
        usd_per_task=tokens / tokens_per_dollar if price else None,
        tasks_per_hour_per_gpu=7.9 if gpus else None,
        step_curve=curve,
        task_s_histogram=((200.0, 9), (500.0, completed - 9)),
    )


def make_tasks_snapshot(seq: int = 42, *, completed: int = 42, **kwargs: Any) -> Snapshot:
    """`make_snapshot` of a run whose agents have completed `completed` tasks (none shown when 0)."""
    snap = make_snapshot(seq, **kwargs)
    price, gpus = kwargs.get("price", True), kwargs.get("gpus", 2)
    return snap.model_copy(update={"tasks": make_task_figures(completed, price=price, gpus=gpus)})


FLEET_DOWN = (5, 41)  # replicas that do not answer in `make_fleet_snapshot`


def fleet_url(index: int) -> str:
    return f"http://10.0.{1 + index // 200}.{10 + index % 200}:8000"


def make_fleet_snapshot(
    seq: int = 42, *, replicas: int = 64, down: Sequence[int] = FLEET_DOWN, **kwargs: Any
) -> Snapshot:
    """`make_snapshot` over `replicas` endpoints behind a router: loads spread over the fleet, some
    replicas' GPU utilisation unknown, the `down` ones not answering."""
    base = make_snapshot(seq, **kwargs)
    endpoints: list[EndpointReading] = []
    for i in range(replicas):
        url = fleet_url(i)
        if i in down:
            endpoints.append(EndpointReading(url=url, up=False, status="down: connection refused", flavor="vllm"))
            continue
        # A fixed spread over replicas, swaying with `seq`, so histories move and the load order changes a little.
        load = min(max((i * 0.618) % 1.0 + 0.08 * math.sin(seq / 2 + i), 0.0), 1.0)
        endpoints.append(
            EndpointReading(
                url=url,
                up=True,
                status="up",
                flavor="vllm",
                model="meta-llama/Llama-3.1-8B-Instruct",
                engine_version="0.32.0",
                running=float(4 + round(28 * load)),
                waiting=float(round(6 * load - 3)) if load > 0.5 else 0.0,
                kv_cache_usage=0.12 + 0.86 * load,
                prefix_hit_rate_window=0.78 + 0.15 * ((i * 0.37) % 1.0),
                prompt_tokens_per_s=20_000 + 60_000 * load,
                generation_tokens_per_s=700 + 2_100 * load,
                gpu_count=2,
                gpu_utilization=None if i % 9 == 4 else 0.35 + 0.6 * load,
            )
        )
    up = [ep for ep in endpoints if ep.up]

    def total(name: str) -> float:
        return sum(getattr(ep, name) or 0.0 for ep in up)

    utils = [ep.gpu_utilization for ep in up if ep.gpu_utilization is not None]
    aggregate = (base.aggregate or endpoints[0]).model_copy(
        update={
            "url": f"{len(endpoints)} endpoints",
            "running": total("running"),
            "waiting": total("waiting"),
            "kv_cache_usage": total("kv_cache_usage") / len(up),
            "prefix_hit_rate_window": total("prefix_hit_rate_window") / len(up),
            "prompt_tokens_per_s": total("prompt_tokens_per_s"),
            "generation_tokens_per_s": total("generation_tokens_per_s"),
            "gpu_count": 2 * len(up),
            "gpu_utilization": sum(utils) / len(utils),
        }
    )
    return base.model_copy(update={"endpoints": tuple(endpoints), "aggregate": aggregate})


class FakeSource:
    """Yields the given snapshots, then either ends or waits to be cancelled.

    `interval_s` spaces them in time; with `manual=True` only the first comes at once and each
    further one waits for `release()`, so a test decides exactly what the dashboard has seen.
    """

    def __init__(
        self,
        snapshots: Sequence[Snapshot],
        *,
        interval_s: float = 0.0,
        end: bool = False,
        manual: bool = False,
    ) -> None:
        self.items = list(snapshots)
        self.interval_s = interval_s
        self.end = end
        self.manual = manual
        self.delivered = 0
        self._released = 0
        self._wakeup: asyncio.Event | None = None

    def release(self, count: int = 1) -> None:
        self._released += count
        if self._wakeup is not None:
            self._wakeup.set()

    async def snapshots(self) -> AsyncIterator[Snapshot]:
        self._wakeup = asyncio.Event()
        for index, snap in enumerate(self.items):
            if self.manual:
                while index > self._released:
                    self._wakeup.clear()
                    await self._wakeup.wait()
            if self.interval_s:
                await asyncio.sleep(self.interval_s)
            self.delivered += 1
            yield snap
        if not self.end:
            await asyncio.Event().wait()


@dataclass
class FakeLiveControls:
    """Records every call, like the runtime would take them."""

    users: int = 12
    paused: bool = False
    workload: str = "coding-agent"
    calls: list[tuple[str, tuple[object, ...]]] = field(default_factory=list)

    def pause(self) -> None:
        self.paused = True
        self.calls.append(("pause", ()))

    def resume(self) -> None:
        self.paused = False
        self.calls.append(("resume", ()))

    def workloads(self) -> list[tuple[str, str]]:
        return [("chat", "multi-turn chat"), ("coding-agent", "a coding agent"), ("deep-research", "long tools")]

    def set_workload(self, name: str) -> str | None:
        self.calls.append(("set_workload", (name,)))
        self.workload = name
        return None

    def set_users(self, users: int) -> None:
        self.users = users
        self.calls.append(("set_users", (users,)))

    def set_price(self, usd_per_gpu_hour: float | None, gpus: int | None) -> None:
        self.calls.append(("set_price", (usd_per_gpu_hour, gpus)))

    def reset_windows(self) -> None:
        self.calls.append(("reset_windows", ()))

    async def shutdown(self, reason: str | None = None) -> None:
        self.calls.append(("shutdown", (reason,)))


@dataclass
class FakeReplayControls:
    length: int = 100
    position: int = 0
    speed: float = 1.0
    paused: bool = False
    calls: list[tuple[str, tuple[object, ...]]] = field(default_factory=list)

    def pause(self) -> None:
        self.paused = True
        self.calls.append(("pause", ()))

    def resume(self) -> None:
        self.paused = False
        self.calls.append(("resume", ()))

    def step(self, ticks: int = 1) -> None:
        self.position = min(max(self.position + ticks, 0), self.length - 1)
        self.paused = True
        self.calls.append(("step", (ticks,)))

    def seek(self, index: int) -> None:
        self.position = index
        self.calls.append(("seek", (index,)))

    def set_speed(self, speed: float) -> None:
        self.speed = speed
        self.calls.append(("set_speed", (speed,)))
