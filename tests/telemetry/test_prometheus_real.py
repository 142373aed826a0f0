"""`PrometheusSource` against a real Prometheus (Debian's package, 1-s scrapes) scraping real engines:
two simulated engines, recorded and synthetic pages (old names, both names, DP engines, SGLang, a
real vLLM 0.32 page), a 64-replica fake fleet and the real tiny vLLM. Figures read through Prometheus
must agree with the direct scraper (`EndpointMonitor`) over the same window while load runs.

Skipped, with the reason, when there is no prometheus binary (scripts/setup-prometheus.sh installs it).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import httpx
import pytest

from agentx_tui.engine import LaunchedServer, start_sim
from agentx_tui.errors import TargetError
from agentx_tui.snapshot import EndpointReading
from agentx_tui.telemetry import EndpointMonitor, MetricsReader, aggregate_endpoints
from agentx_tui.telemetry.prometheus import FleetSample, PrometheusSource

from . import pages
from .fleet import TTFT_P50, FakeFleet, PageServer, ReplicaSpec, fleet_process, vllm_page
from .prometheus_server import PrometheusServer, prometheus_server  # noqa: F401  (a fixture)

SIM_PROFILES = ("h200/llama-3.1-8b", "h100/llama-3.1-8b")  # two GPU UUIDs: the sim derives it from the profile
SIMS = '{agentx_group="sims"}'
RECORDED = '{agentx_group="recorded"}'
# The request phases and speculative decoding of two data-parallel engines, at the known shape
# (tests/telemetry/test_server_time.py): a quarter of the drafts accepted at it, the rest at less.
SPEC_ENGINES: dict[str, Any] = {
    "engines": 2,
    "draft_share": (0.25, 0.75),
    "accepted_at": (pages.ACCEPTED_AT, (0.4, 0.2, 0.0)),
}
BOTH_SPEC = ReplicaSpec(
    gen_per_s=120, prompt_per_s=3000, hit_rate=0.8, requests_per_s=4, running=6, waiting=2, kv_usage=0.3, naming="both"
)


# -- fixtures ---------------------------------------------------------------------------------------


@dataclass
class Recorded:
    """Pages whose counters grow linearly from t0 (so every rate is known), by kind → target."""

    server: PageServer
    t0: float
    targets: dict[str, str] = field(default_factory=dict)
    real_after: bool = False  # the real vLLM page: the "before" capture until the test flips it

    def elapsed(self, t: float) -> float:
        return max(0.0, t - self.t0)

    def page(self, kind: str, t: float) -> str:
        e = self.elapsed(t)
        if kind == "old":
            return pages.old_vllm(queries=40 * e, hits=25 * e, prompt=800 * e, gen=60 * e, itl=(3 * e, 8 * e, 10 * e))
        if kind == "dp":
            return pages.two_engines(
                gen0=50 * e, gen1=150 * e, hits0=30 * e, hits1=10 * e, queries0=100 * e, queries1=100 * e
            )
        if kind == "both":
            return vllm_page(BOTH_SPEC, t, self.t0)
        if kind == "sglang":
            return pages.sglang(prompt=1000 * e, gen=50 * e, cached=700 * e)
        if kind == "spec":
            return pages.phases_and_spec(requests=10 * e, steps=40 * e, drafts=400 * e, **SPEC_ENGINES)
        return (pages.REAL_AFTER if self.real_after else pages.REAL_BEFORE).read_text()


@dataclass
class Base:
    prom: PrometheusServer
    sims: list[LaunchedServer]
    recorded: Recorded
    fleet: FakeFleet  # the expected figures of the 64-replica fleet served by a child process


FLEET = '{agentx_group="fleet"}'


@pytest.fixture(scope="module")
def base(prometheus_server: PrometheusServer) -> Iterator[Base]:  # noqa: F811
    """Everything the shared Prometheus scrapes for this module, registered at once: its file_sd
    pick-up and the history the window needs then build up while the first tests run."""
    with contextlib.ExitStack() as stack:
        fleet = stack.enter_context(fleet_process(64, prometheus_server.sd / "fleet.json"))
        stack.callback(prometheus_server.remove_targets, "fleet")
        sims = [asyncio.run(start_sim(profile)) for profile in SIM_PROFILES]
        for sim in sims:
            stack.callback(sim.stop)
        server = PageServer()
        server.start()
        stack.callback(server.stop)
        recorded = Recorded(server, time.time())
        for kind in ("old", "dp", "both", "sglang", "real", "spec"):
            recorded.targets[kind] = server.serve(functools.partial(recorded.page, kind))
        groups: list[dict[str, object]] = [
            {"targets": [s.url.removeprefix("http://") for s in sims], "labels": {"agentx_group": "sims"}}
        ]
        groups += [
            {"targets": [target], "labels": {"agentx_group": "recorded", "page": kind}}
            for kind, target in recorded.targets.items()
        ]
        prometheus_server.set_targets("base", groups)
        stack.callback(prometheus_server.remove_targets, "base")
        prometheus_server.wait_scraped('{agentx_group=~"sims|recorded"}', len(sims) + len(recorded.targets))
        yield Base(prometheus_server, sims, recorded, fleet)


# -- load -------------------------------------------------------------------------------------------


class ChatLoad:
    """``per_server`` closed loops of streaming chat completions per server, sharing a long system
    prompt (prefix-cache hits), loop i asking for exactly ``max_tokens + 4·i`` tokens."""

    def __init__(self, client: httpx.AsyncClient, urls: list[str], *, per_server: int, max_tokens: int = 32) -> None:
        self._client, self._urls, self._per_server, self._max_tokens = client, urls, per_server, max_tokens
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.completed = 0

    async def __aenter__(self) -> ChatLoad:
        for url in self._urls:
            models = (await self._client.get(url + "/v1/models", timeout=10)).json()
            model = str(models["data"][0]["id"])
            prefix = f"run {time.time_ns()}: " + "The agent reads the repository, plans a change, calls a tool. " * 12
            self._tasks += [asyncio.create_task(self._loop(url, model, prefix, i)) for i in range(self._per_server)]
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # Let the requests in flight finish: the counters then settle, and run totals can be compared.
        self._stop.set()
        await asyncio.wait_for(asyncio.gather(*self._tasks), 60)

    async def _loop(self, url: str, model: str, prefix: str, user: int) -> None:
        step = 0
        while not self._stop.is_set():
            step += 1
            body = {
                "model": model,
                "messages": [
                    {"role": "system", "content": prefix},
                    {"role": "user", "content": f"user {user} step {step}: fix the failing test"},
                ],
                "stream": True,
                "stream_options": {"include_usage": True},
                # Loops of different lengths drift apart: their prefills (prompt tokens arrive in
                # one step per request) spread over time instead of landing together.
                "max_tokens": self._max_tokens + 4 * user,
                "min_tokens": self._max_tokens + 4 * user,
                "ignore_eos": True,
                "temperature": 0,
            }
            async with self._client.stream("POST", url + "/v1/chat/completions", json=body, timeout=60) as response:
                response.raise_for_status()
                async for _ in response.aiter_lines():
                    pass
            self.completed += 1


async def _direct_samples(monitors: dict[str, EndpointMonitor]) -> dict[str, EndpointReading]:
    now = time.time()
    results = await asyncio.gather(*(m.sample(now) for m in monitors.values()))
    return dict(zip(monitors, results, strict=True))


def _by_instance(sample: FleetSample) -> dict[str, EndpointReading]:
    return {f"http://{e.url}": e for e in sample.endpoints}


RATES = ("prompt_tokens_per_s", "generation_tokens_per_s", "cached_prompt_tokens_per_s")
# The source's window of W s holds W scrapes 1 s apart, the last just before the evaluation, and
# `rate()` gives the slope between the first and the last. The direct scraper keeps one point at or
# before its cutoff, so a window of W − 1.5 s spans the same W − 1 s when it samples right after
# each of those scrapes.
DIRECT_WINDOW_SHORTER_S = 1.5


def assert_agree(direct: EndpointReading, prom: EndpointReading, *, what: str, rel: float = 0.05) -> None:
    """Token rates within ``rel`` (5%), the window hit rate within 1 percentage point."""
    print(
        f"\n{what}: "
        + ", ".join(f"{n} {getattr(prom, n) / getattr(direct, n) - 1:+.2%}" for n in RATES if getattr(direct, n))
        + f", hit rate {(prom.prefix_hit_rate_window or 0) - (direct.prefix_hit_rate_window or 0):+.4f}"
    )
    for name in RATES:
        d, p = getattr(direct, name), getattr(prom, name)
        assert d is not None and d > 0 and p is not None, (what, name, d, p)
        assert p == pytest.approx(d, rel=rel), (what, name, d, p)
    assert direct.prefix_hit_rate_window is not None and prom.prefix_hit_rate_window is not None
    assert prom.prefix_hit_rate_window == pytest.approx(direct.prefix_hit_rate_window, abs=0.01), what


# The direct window's two ends must be read just after two of Prometheus's scrapes (below this, both
# see the same counters up to what the server serves meanwhile); a test process starved of CPU
# reads late, and its window is then not Prometheus's. Such a window says nothing about the figures:
# it is read again.
ALIGNED_WITHIN_S = 0.3
WINDOW_TRIES = 8


async def _scrape_times(client: httpx.AsyncClient, prom_url: str, scoped: str, span_s: int) -> list[float]:
    query = f"up{scoped}[{span_s}s]"
    answer = (await client.post(prom_url + "/api/v1/query", data={"query": query})).json()
    (series,) = answer["data"]["result"]
    return [float(t) for t, _ in series["values"]]


async def _scraped_after(client: httpx.AsyncClient, prom_url: str, scoped: str, after: float) -> None:
    """Wait until Prometheus holds a scrape later than ``after`` (half a second at most): a busy
    Prometheus scrapes some tens of ms behind its cadence, and a read that went out before its scrape
    would be aligned with the one before."""
    deadline = time.time() + 0.5
    while (await _scrape_times(client, prom_url, scoped, 2))[-1] <= after and time.time() < deadline:
        await asyncio.sleep(0.01)


Span = tuple[float, float]  # the first and last scrape a window holds


async def _counter_span(client: httpx.AsyncClient, prom_url: str, scoped: str, window_s: int, at: float) -> Span:
    """The first and last scrape that the source's window, evaluated at ``at``, holds of the counters."""
    query = f"vllm:generation_tokens_total{scoped}[{window_s}s]"
    answer = (await client.post(prom_url + "/api/v1/query", data={"query": query, "time": f"{at:.3f}"})).json()
    times = [float(t) for t, _ in answer["data"]["result"][0]["values"]]
    return times[0], times[-1]


def _misaligned(
    reads: list[tuple[float, float]], scrapes: list[float], window_s: int, source: Span | None = None
) -> str | None:
    """Why the direct window's ends (each read's start and duration; the first end is the last read
    at or before the monitor's cutoff) are not two scrapes ``window_s`` − 1 s apart, the ends of the
    source's window (``source``: the first and last scrape it holds, where known), or None."""
    cutoff = reads[-1][0] - (window_s - DIRECT_WINDOW_SHORTER_S)
    ends = (max((r for r in reads if r[0] <= cutoff), default=reads[0]), reads[-1])
    matched = []
    for started, took in ends:
        before = [s for s in scrapes if s <= started]
        if not before or started - before[-1] + took > ALIGNED_WITHIN_S:
            late = f"{started - before[-1]:.2f} s after a scrape" if before else "before every scrape"
            return f"a direct read at an end of its window started {late} and took {took:.2f} s"
        matched.append(before[-1])
    if abs(matched[1] - matched[0] - (window_s - 1)) > 0.5:
        return f"the direct window's ends are {matched[1] - matched[0]:.1f} s of scrapes apart, not {window_s - 1}"
    if source is not None and max(abs(source[0] - matched[0]), abs(source[1] - matched[1])) > 0.1:
        # A scrape missed at an end (an engine too busy to answer it in time), or the source read late.
        moved = f"{source[0] - matched[0]:+.2f} s and {source[1] - matched[1]:+.2f} s"
        return f"the source's window ends {moved} away from the direct one's"
    return None


async def aligned_pair(
    client: httpx.AsyncClient, prom_url: str, selector: str, url: str, window_s: int
) -> tuple[EndpointReading, EndpointReading]:
    """The same window read both ways: the direct scraper samples right after each of Prometheus's
    scrapes of ``url`` (their phase read from the last sample's timestamp), then the source is read
    before the next scrape, so both windows hold the same ``window_s`` instants. That premise is
    checked against the scrape times Prometheus stored; a window that misses it is read again.

    Queries are evaluated at the tick's instant however late the answer comes, so the source's
    deadlines are generous: a busy CI machine must not fail the read, and the window does not move."""
    instance = url.removeprefix("http://")
    scoped = selector[:-1] + f',instance="{instance}"}}'
    why = ""
    for _ in range(WINDOW_TRIES):
        monitor = EndpointMonitor(url, client=client, window_s=window_s - DIRECT_WINDOW_SHORTER_S, timeout_s=4)
        async with PrometheusSource(
            prom_url, selector=scoped, window_s=window_s, query_timeout_s=4, tick_budget_s=5
        ) as source:
            await source.start()
            last_scrape = (await _scrape_times(client, prom_url, scoped, 3))[-1]
            first = last_scrape + max(1, int(time.time() - last_scrape) + 1)
            reads: list[tuple[float, float]] = []
            for k in range(window_s + 1):
                await asyncio.sleep(max(0.0, first + k + 0.01 - time.time()))
                await _scraped_after(client, prom_url, scoped, first + k - 0.5)
                started = time.time()
                direct = await monitor.sample(started)
                reads.append((started, time.time() - started))
            evaluated = time.time()  # the source's queries are evaluated at this instant
            through = await source.sample(evaluated)
        assert through.up, through.status
        scrapes = await _scrape_times(client, prom_url, scoped, window_s + 5)
        span = await _counter_span(client, prom_url, scoped, window_s, evaluated)
        why = _misaligned(reads, scrapes, window_s, span) or ""
        if not why:
            return direct, through.endpoints[0]
        print(f"\n{url}: window read again: {why}")
    pytest.fail(
        f"{WINDOW_TRIES} windows in a row missed Prometheus's scrapes of {url} ({why}): the machine is too busy"
    )


async def agreement_run(
    prom_url: str, selector: str, urls: list[str], *, per_server: int, window_s: int, rel: float = 0.05
) -> None:
    """Idle baselines; under load, each replica's window figures both ways over the same window
    (`aligned_pair`), and their aggregates; then stop, let the counters settle, and compare the run
    totals (raw counters at the start and now), which must be equal."""
    async with (
        httpx.AsyncClient() as client,
        PrometheusSource(prom_url, selector=selector, window_s=window_s, query_timeout_s=4, tick_budget_s=5) as source,
    ):
        totals_monitors = {url: EndpointMonitor(url, client=client, timeout_s=4) for url in urls}
        discovery = await source.start()
        assert sorted(f"http://{r}" for r in discovery.replicas) == sorted(urls)
        assert (discovery.scrape_interval_s, discovery.window_s) == (1.0, window_s)
        await _direct_samples(totals_monitors)  # the run's start for both: idle, so both read the same counters
        async with ChatLoad(client, urls, per_server=per_server) as load:
            await asyncio.sleep(1.0)  # load in full swing before the first scrape of the window
            pairs = await asyncio.gather(*(aligned_pair(client, prom_url, selector, url, window_s) for url in urls))
        assert load.completed > 0
        for url, (direct, through) in zip(urls, pairs, strict=True):
            assert_agree(direct, through, what=url, rel=rel)
        agg_direct = aggregate_endpoints([d for d, _ in pairs])
        agg_prom = aggregate_endpoints([p for _, p in pairs])
        assert agg_direct is not None and agg_prom is not None
        assert_agree(agg_direct, agg_prom, what="aggregate", rel=rel)
        await asyncio.sleep(2.5)  # the last requests' counters, then one more scrape
        direct_totals = await _direct_samples(totals_monitors)
        fleet = await source.sample(time.time())
        assert fleet.up, fleet.status
        through_totals = _by_instance(fleet)
        for url in urls:
            assert through_totals[url].totals == direct_totals[url].totals, url
            assert direct_totals[url].totals.generation_tokens


# -- tests ------------------------------------------------------------------------------------------


@pytest.mark.vllm
@pytest.mark.slow
async def test_real_vllm_agrees_with_the_direct_scraper(prometheus_server: PrometheusServer, vllm_url: str) -> None:  # noqa: F811
    """First in the module: the fleet and the other targets of `base` are not yet scraped, so the
    CPU-bound tiny vLLM runs on a quiet machine."""
    prometheus_server.set_targets(
        "vllm", [{"targets": [vllm_url.removeprefix("http://")], "labels": {"agentx_group": "vllm"}}]
    )
    try:
        prometheus_server.wait_scraped('{agentx_group="vllm"}', 1, samples=2)
        # 12 s: the CPU-bound engine renders /metrics late at times (up to half a second while it
        # generates), which a longer window dilutes; its page and the direct read can still take their
        # counters that far apart at one end of the window: 1 run of 22 read 5.4% apart, so 8% here
        # (a wrong rule, such as an engine counted twice, is off by far more).
        await agreement_run(
            prometheus_server.url, '{agentx_group="vllm"}', [vllm_url], per_server=4, window_s=12, rel=0.08
        )
    finally:
        prometheus_server.remove_targets("vllm")


def test_the_window_premise_checks_only_the_window_ends() -> None:
    """The premise check of `aligned_pair` (cheap, no Prometheus needed): a late read in the middle of
    the window changes nothing; a late read at an end, or ends a scrape too far apart, does."""
    scrapes = [100.0 + k for k in range(14)]
    reads = [(100.01 + k, 0.05) for k in range(13)]
    assert _misaligned(reads, scrapes, 12) is None
    reads[5] = (105.6, 0.9)
    assert _misaligned(reads, scrapes, 12) is None
    late_end = [*reads[:-1], (112.2, 0.2)]  # 0.4 s after its scrape when its answer came
    assert "started 0.20 s after a scrape and took 0.20 s" in (_misaligned(late_end, scrapes, 12) or "")
    one_short = [r for r in reads if r[0] > 101.5]  # no read after scrape 1: the first end is scrape 2
    assert "10.0 s of scrapes apart, not 11" in (_misaligned(one_short, scrapes, 12) or "")
    assert _misaligned(reads, scrapes, 12, (101.0, 112.0)) is None
    lost_last = (101.0, 111.0)  # the window's last scrape failed: the source's window ends a scrape early
    assert "ends +0.00 s and -1.00 s away" in (_misaligned(reads, scrapes, 12, lost_last) or "")


@pytest.mark.slow
async def test_sims_agree_with_the_direct_scraper(base: Base) -> None:
    await agreement_run(base.prom.url, SIMS, [s.url for s in base.sims], per_server=8, window_s=8)


async def test_one_replica_tick_and_its_gpu(base: Base) -> None:
    one = f'{{agentx_group="sims",instance="{base.sims[0].url.removeprefix("http://")}"}}'
    async with PrometheusSource(base.prom.url, selector=one) as source:
        await source.start()
        ticks = [await source.sample(time.time()) for _ in range(5)]
    took = statistics.median(t.took_s for t in ticks)
    print(f"\nPrometheus source tick at 1 replica: median {took * 1000:.0f} ms of {len(ticks)} ticks")
    sample = ticks[-1]
    assert len(sample.endpoints) == 1 and sample.endpoints[0].up and took < 0.8
    (gpu,) = sample.gpu.gpus
    assert (gpu.name, gpu.source, sample.endpoints[0].gpu_count) == ("NVIDIA H200", "dcgm", 1)
    assert "1 GPU (distinct UUIDs)" in sample.gpu.status and "by scrape target" in sample.gpu.status


async def test_sim_gpus_through_prometheus(base: Base) -> None:
    async with PrometheusSource(base.prom.url, selector=SIMS) as source:
        await source.start()
        sample = await source.sample(time.time())
    assert len(sample.gpu.gpus) == 2 and {g.name for g in sample.gpu.gpus} == {"NVIDIA H200", "NVIDIA H100 80GB HBM3"}
    assert all(e.gpu_count == 1 and e.gpu_utilization is not None for e in sample.endpoints)
    assert "2 GPUs (distinct UUIDs)" in sample.gpu.status and "by scrape target" in sample.gpu.status


async def test_recorded_pages_old_names_both_names_dp_sglang_and_spec(base: Base) -> None:
    rec = base.recorded
    # 6 scrapes: more than the 4-s window, so rate() has the whole window (already there when the
    # agreement test ran first).
    base.prom.wait_scraped(RECORDED, len(rec.targets), samples=6)
    async with PrometheusSource(base.prom.url, selector=RECORDED, window_s=4) as source:
        discovery = await source.start()
        assert len(discovery.replicas) == 6 and discovery.window_s == 4
        # the real vLLM page's counters move once, from the "before" to the "after" capture
        rec.real_after = True
        await asyncio.sleep(1.5)
        sample = await source.sample(time.time())
    by_kind = {kind: next(e for e in sample.endpoints if e.url == target) for kind, target in rec.targets.items()}
    assert sample.up and all(e.up for e in sample.endpoints), sample.status

    old = by_kind["old"]  # vLLM ≤ 0.8: gpu_* names, prefix counters in blocks, the old ITL histogram
    assert (old.kv_cache_usage, old.running, old.waiting, old.block_size) == (0.25, 3, 1, 16)
    assert old.generation_tokens_per_s == pytest.approx(60, rel=0.02)
    assert old.prefix_hit_rate_window == pytest.approx(25 / 40, abs=0.005)
    assert old.itl.p50 == pytest.approx(0.026, rel=0.02)  # 0.01 + 0.04 × (0.5 − 0.3) / (0.8 − 0.3)
    q, h = old.totals.prefix_cache_queries, old.totals.prefix_cache_hits
    assert q is not None and h is not None and q > 0 and h / q == pytest.approx(25 / 40, abs=0.01)
    prompt = old.totals.prompt_tokens
    assert prompt is not None and q == pytest.approx(prompt * 40 * 16 / 800, rel=0.01)  # blocks × block size

    both = by_kind["both"]  # vLLM 0.9.2–0.10: old and new names side by side, counted once
    assert both.kv_cache_usage == pytest.approx(BOTH_SPEC.kv_usage)  # not the old gauge's different value
    assert both.prompt_tokens_per_s == pytest.approx(3000, rel=0.02)
    assert both.prefix_hit_rate_window == pytest.approx(0.8, abs=0.005)
    assert both.totals.prefix_cache_queries == pytest.approx(both.totals.prompt_tokens, rel=0.01)  # not 2×
    assert both.ttft.p50 == pytest.approx(TTFT_P50, rel=0.02)

    dp = by_kind["dp"]
    assert (dp.running, dp.waiting, dp.num_gpu_blocks) == (7, 4, 96) and dp.kv_cache_usage == pytest.approx(0.4)
    assert dp.generation_tokens_per_s == pytest.approx(200, rel=0.02)
    e0, e1 = dp.engines
    assert (e0.engine, e0.running, e1.engine, e1.running) == ("0", 2, "1", 5)
    assert e0.generation_tokens_per_s == pytest.approx(50, rel=0.02)
    assert e1.generation_tokens_per_s == pytest.approx(150, rel=0.02)
    assert e0.prefix_hit_rate_window == pytest.approx(0.3, abs=0.005)
    assert e1.prefix_hit_rate_window == pytest.approx(0.1, abs=0.005)

    sglang = by_kind["sglang"]
    assert (sglang.flavor, sglang.running, sglang.kv_cache_usage) == ("sglang", 7, 0.42)
    assert sglang.prefix_hit_rate_window == pytest.approx(0.7, abs=0.005)

    # The request phases and speculative decoding: every figure a ratio of two rates over one window, so
    # the shape exactly (the counters grow in step), as the direct reader gives it.
    spec = by_kind["spec"]
    assert (spec.server_queue_s_mean, spec.server_prefill_s_mean, spec.server_decode_s_mean) == pytest.approx(
        (0.1, 0.3, 0.56)
    )
    assert spec.server_step_tokens_mean == pytest.approx(48)
    assert spec.server_preemptions_per_request == pytest.approx(0.2)
    assert spec.spec_acceptance_length == pytest.approx(1 + 0.25 * 1.5 + 0.75 * 0.6)
    assert spec.spec_acceptance_rate == pytest.approx((0.25 * 1.5 + 0.75 * 0.6) / 3)
    assert spec.spec_acceptance_by_position == pytest.approx((0.5, 0.275, 0.05)) and spec.spec_draft_length == 3
    e0, e1 = spec.engines
    assert (e0.spec_acceptance_length, e1.spec_acceptance_length) == pytest.approx((2.5, 1.6))
    assert (e0.server_queue_s_mean, e1.server_queue_s_mean) == pytest.approx((0.1, 0.1))

    # The real vLLM 0.32 page: run totals through Prometheus = the direct reader's over the same pages.
    reader = MetricsReader("direct")
    reader.read(pages.REAL_BEFORE.read_text(), 0.0)
    direct = reader.read(pages.REAL_AFTER.read_text(), 1.0)
    real = by_kind["real"]
    assert real.totals == direct.totals and (real.totals.requests_finished or 0) > 0
    assert real.model == "/tmp/tel/model" and real.block_size == direct.block_size


async def test_an_unmatched_selector_and_a_down_prometheus_at_start(base: Base) -> None:
    async with PrometheusSource(base.prom.url, selector='{agentx_group="nobody"}') as source:
        with pytest.raises(TargetError) as info:
            await source.start()
    assert info.value.message == (
        f'Prometheus at {base.prom.url} has no vLLM or SGLang series matching {{agentx_group="nobody"}} '
        "(no target matches it)."
    )
    async with PrometheusSource("http://127.0.0.1:9", start_timeout_s=1) as source:
        with pytest.raises(TargetError) as info:
            await source.start()
    assert info.value.exit_code == 3 and "cannot be reached" in info.value.message


async def test_fleet_of_64_replicas(base: Base) -> None:
    fleet = base.fleet
    # Registered with the module's targets, so its history is there by now. An 8-s window: the
    # fleet's pages are computed a little after the timestamp Prometheus gives them (one busy
    # process serves all 72), and the longer the window, the less that shows in the rates.
    base.prom.wait_scraped(FLEET, 64 + len(fleet.nodes), samples=10)
    async with PrometheusSource(base.prom.url, selector=FLEET, window_s=8) as source:
        discovery = await source.start()
        ticks = []
        for _ in range(5):
            ticks.append(await source.sample(time.time()))
            await asyncio.sleep(0.2)
    sample = ticks[-1]
    took = statistics.median(t.took_s for t in ticks)
    print(f"\nPrometheus source tick at 64 replicas: median {took * 1000:.0f} ms of {len(ticks)} ticks")
    assert len(discovery.replicas) == 64 and sample.up and took < 0.8
    by_pod = {e.url: e for e in sample.endpoints}
    assert len(by_pod) == 64 and all(e.up for e in sample.endpoints)
    for i, spec in enumerate(fleet.specs):
        fig = by_pod[f"fleet/{fleet.pod(i)}"]
        assert fig.generation_tokens_per_s == pytest.approx(spec.gen_per_s, rel=0.05), i
        assert fig.prefix_hit_rate_window == pytest.approx(spec.hit_rate, abs=0.005), i
        assert fig.running == spec.running and fig.ttft.p50 == pytest.approx(TTFT_P50, rel=0.02)
        assert len(fig.engines) == (2 if spec.engines == 2 else 0)
        assert fig.gpu_count == 1 and fig.gpu_utilization == pytest.approx(fleet.gpu_util(i) / 100), i
    assert len(sample.gpu.gpus) == 64 and "mapped to 64 of 64 replicas by pod" in sample.gpu.status
    aggregate = aggregate_endpoints(sample.endpoints)
    assert aggregate is not None
    assert aggregate.generation_tokens_per_s == pytest.approx(sum(s.gen_per_s for s in fleet.specs), rel=0.05)


def test_fleet_groups_are_json() -> None:
    """The fleet helper's file_sd groups are what Prometheus reads (cheap, no Prometheus needed)."""
    fleet = FakeFleet(9)
    fleet.replica_targets = [f"127.0.0.1:{9000 + i}" for i in range(9)]
    fleet.dcgm_targets = ["127.0.0.1:9100", "127.0.0.1:9101"]
    groups = json.loads(json.dumps(fleet.target_groups()))
    assert len(groups) == 11 and groups[8]["labels"]["node"] == "node-1" and fleet.specs[7].engines == 2


async def test_prometheus_killed_mid_run_then_back(base: Base) -> None:
    """The shared Prometheus, SIGKILLed and started again on its port and storage (a Prometheus of
    its own would cost ~6 s: a new one scrapes only after its first 5-s discovery round). Last in
    the module: scrapes pause for that round after the restart, which later windows would see."""
    prom = base.prom
    # Deadlines well above a busy CI machine's answer times: a refused connection must show at once,
    # not by running out the budget.
    async with PrometheusSource(prom.url, selector=SIMS, query_timeout_s=2, tick_budget_s=3) as source:
        await source.start()
        before = await source.sample(time.time())
        prom.kill()
        try:
            down = await source.sample(time.time())
        finally:
            prom.start()
        back = await source.sample(time.time())
    assert before.up and all(e.up and e.running is not None for e in before.endpoints)
    sentence = f"Prometheus at {prom.url} cannot be reached (connection refused or host unreachable)"
    assert not down.up and down.status == sentence and down.took_s < 1.0
    for fig in down.endpoints:
        assert not fig.up and fig.status == f"down: {sentence}"
        assert fig.running is None and fig.kv_cache_usage is None and fig.generation_tokens_per_s is None
        assert fig.totals == next(e for e in before.endpoints if e.url == fig.url).totals  # kept, not zeroed
    # Back: its stored samples answer again at once (within the 5-min lookback), scrapes resume.
    assert back.up and all(e.up and e.running is not None for e in back.endpoints), back.status
