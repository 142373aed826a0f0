"""A small, hand-checkable Snapshot stream: every figure is a simple function of the tick index.

Tick i (0–4) is at time 1000 + 2i, so a five-tick run lasts 8 s. Two endpoints (A and B), a load
driver, two GPUs and a rental price, each of which a test can switch off.
"""

from __future__ import annotations

from agentx_tui.report import Report, ReportBuilder
from agentx_tui.snapshot import (
    ClientReading,
    ClientTotals,
    CostReading,
    EndpointReading,
    EndpointTotals,
    Figures,
    GpuReading,
    GpuState,
    RunInfo,
    Snapshot,
    UserRow,
)
from agentx_tui.telemetry.aggregate import aggregate_endpoints

A = "http://10.0.0.1:8000"
B = "http://10.0.0.2:8000"
SECRET = "sk-report-test-8c7V6b5N4m3"


def endpoint_a(i: int) -> EndpointReading:
    return EndpointReading(
        url=A,
        up=True,
        status="up",
        flavor="vllm",
        model="tiny",
        engine_version="0.32.0",
        kv_cache_usage=0.1 * (i + 1),
        prefix_hit_rate_window=0.6,
        prefix_hit_rate_lifetime=0.55,
        prompt_tokens_per_s=500.0,
        generation_tokens_per_s=50.0,
        totals=EndpointTotals(
            prompt_tokens=1000.0 * i,
            generation_tokens=100.0 * i,
            cached_prompt_tokens=600.0 * i,
            prefix_cache_queries=1000.0 * i,
            prefix_cache_hits=600.0 * i,
            preemptions=float(i),
            requests_finished=2.0 * i,
        ),
    )


def endpoint_b(i: int) -> EndpointReading:
    return EndpointReading(
        url=B,
        up=True,
        status="up",
        flavor="vllm",
        model="tiny",
        engine_version="0.32.0",
        kv_cache_usage=0.2,
        prefix_hit_rate_window=0.2,
        prompt_tokens_per_s=250.0,
        generation_tokens_per_s=25.0,
        totals=EndpointTotals(
            prompt_tokens=500.0 * i,
            generation_tokens=50.0 * i,
            cached_prompt_tokens=100.0 * i,
            prefix_cache_queries=500.0 * i,
            prefix_cache_hits=100.0 * i,
            preemptions=0.0,
            requests_finished=1.0 * i,
        ),
    )


def client(i: int, *, cached_reported: bool = True) -> ClientReading:
    return ClientReading(
        window=Figures(
            output_tokens_per_s=70.0 + i,
            prompt_tokens_per_s=700.0,
            total_tokens_per_s=770.0 + i,
            prefix_cache_hit_rate_client=0.45,
            ttft_p50_s=0.1,
            ttft_p90_s=0.25,
            ttft_p99_s=0.4,
            e2e_interactivity_p90_tokens_per_s=40.0 + i,  # the North Star, the window's
        ),
        run=Figures(
            ttft_p50_s=0.1,
            ttft_p90_s=0.2,
            ttft_p99_s=0.3,
            itl_p50_s=0.01,
            itl_p90_s=0.02,
            itl_p99_s=0.05,
            per_user_output_tokens_per_s_p50=42.0,
            e2e_interactivity_p50_tokens_per_s=60.0,
            e2e_interactivity_p75_tokens_per_s=50.0,
            e2e_interactivity_p90_tokens_per_s=45.0,
            # Σcached / Σprompt and the ceiling over the run's requests, as the totals below give them
            prefix_cache_hit_rate_client=700 / 1500 if cached_reported and i else None,
            prefix_cache_hit_rate_ceiling=900 / 1500 if i else None,
        ),
        totals=ClientTotals(
            requests_completed=3 * i,
            requests_failed=1 if i >= 4 else 0,
            prompt_tokens=1500 * i,
            cached_prompt_tokens=700 * i if cached_reported else 0,
            output_tokens=150 * i,
            sessions_completed=i // 2,
            ceiling_cacheable_tokens=900 * i,
            cached_tokens_reported=cached_reported,
            errors_by_kind={"timeout": 1} if i >= 4 else {},
        ),
    )


def gpus(i: int) -> GpuState:
    return GpuState(
        status="2 GPUs",
        gpus=(
            GpuReading(index=0, name="NVIDIA H200", utilization=0.5, power_w=300.0 + 10 * i),
            GpuReading(index=1, name="NVIDIA H200", utilization=0.1 * i, power_w=200.0),
        ),
    )


def cost(i: int) -> CostReading:
    spent = 2.0 * 2 * (0.5 + 2 * i) / 3600
    return CostReading(
        usd_per_gpu_hour=2.0,
        gpus=2,
        price_source="--gpu-price",
        mode="rental",
        usd_spent=spent,
        tokens_per_dollar_total=1650 * i / spent,
        tokens_per_dollar_output=150 * i / spent,
        usd_per_million_output_tokens=spent * 1e6 / (150 * i) if i else None,
        tokens_per_dollar_total_window=1.3e9,
    )


def sessions(i: int) -> tuple[UserRow, ...]:
    return tuple(
        UserRow(
            user=u,
            session=1,
            state="decoding",
            step=i,
            steps_total=6,
            context_tokens=100 * i,
            decode_tokens_per_s=40.0 + u,
            output_tokens=75 * i,
            requests=i,
            endpoint=A,
        )
        for u in range(2)
    )


def snap(
    i: int,
    *,
    with_client: bool = True,
    with_gpus: bool = True,
    with_price: bool = True,
    two_endpoints: bool = True,
    cached_reported: bool = True,
    events: tuple[str, ...] = (),
) -> Snapshot:
    eps = (endpoint_a(i), endpoint_b(i)) if two_endpoints else (endpoint_a(i),)
    return Snapshot(
        seq=i + 1,
        time=1000.0 + 2 * i,
        elapsed_s=0.5 + 2 * i,
        run=RunInfo(
            target="attach http://10.0.0.1:8000",
            workload="chat",
            users=2 if i < 2 else 3,
            state="running",
            started_at=999.5,
        ),
        endpoints=eps,
        aggregate=aggregate_endpoints(eps),
        gpu=gpus(i) if with_gpus else GpuState(),
        client=client(i, cached_reported=cached_reported) if with_client else None,
        sessions=sessions(i) if with_client else (),
        cost=cost(i) if with_price else CostReading(),
        events=events,
    )


def stream(n: int = 5, **kw: bool) -> list[Snapshot]:
    return [snap(i, **kw) for i in range(n)]  # type: ignore[arg-type]


def built(snaps: list[Snapshot], partial_reason: str | None = None) -> Report:
    """The report a run of these ticks writes."""
    builder = ReportBuilder()
    for s in snaps:
        builder.add(s)
    return builder.build(partial_reason=partial_reason)
