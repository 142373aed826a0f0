"""`PrometheusSource` against a fake Prometheus HTTP API (httpx.MockTransport: no server): query
building, vector answers → figures, naming generations, DP engines, run totals, GPUs, errors, auth."""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from agentx_tui.errors import TargetError, UsageError
from agentx_tui.telemetry import MetricsReader, _names, _promql, aggregate_endpoints
from agentx_tui.telemetry import _promapi as promapi
from agentx_tui.telemetry import _promfigures as promfigures
from agentx_tui.telemetry import _promgpus as promgpus
from agentx_tui.telemetry import _promstart as promstart
from agentx_tui.telemetry import prometheus as prometheus_module
from agentx_tui.telemetry._promstart import parse_duration
from agentx_tui.telemetry.prometheus import PrometheusSource, parse_prometheus_header

from . import pages

Item = dict[str, Any]
A = {"instance": "10.0.0.1:8000", "job": "vllm"}
B = {"instance": "10.0.0.2:8000", "job": "vllm"}
SEL = '{namespace="llm"}'
TOKEN = "tok-SECRET-4242"
ORG = "tenant-SECRET-77"


def item(name: str | None, value: float | str, **labels: str) -> Item:
    metric = dict(labels)
    if name:
        metric["__name__"] = name
    return {"metric": metric, "value": [1.7e9, str(value)]}


def vllm_series(
    target: dict[str, str],
    *,
    prompt: float = 1000,
    gen: float = 100,
    queries: float = 1000,
    hits: float = 600,
    engine: str = "0",
    running: float = 3,
    waiting: float = 1,
    kv: float = 0.25,
) -> list[Item]:
    labels = {**target, "engine": engine, "model_name": "m"}
    return [
        item("vllm:prompt_tokens_total", prompt, **labels),
        item("vllm:generation_tokens_total", gen, **labels),
        item("vllm:prompt_tokens_cached_total", hits, **labels),
        item("vllm:prefix_cache_queries_total", queries, **labels),
        item("vllm:prefix_cache_hits_total", hits, **labels),
        item("vllm:num_preemptions_total", 0, **labels),
        item("vllm:request_success_total", 7, finished_reason="length", **labels),
        item("vllm:request_success_total", 3, finished_reason="stop", **labels),
        item("vllm:num_requests_running", running, **labels),
        item("vllm:num_requests_waiting", waiting, **labels),
        item("vllm:kv_cache_usage_perc", kv, **labels),
        item(
            "vllm:cache_config_info",
            1,
            block_size="16",
            num_gpu_blocks="1000",
            enable_prefix_caching="True",
            **labels,
        ),
    ]


def kind_of(query: str) -> str:
    """Which of the source's queries this is, by its shape (the fake's routing)."""
    if query == "time()":
        return "clock"
    if "count_over_time" in query:
        return "spacing"
    if query.startswith('{__name__=~"DCGM_'):
        return "dcgm"
    if query.startswith("{__name__=~"):
        return "instant"
    if query.startswith("up"):
        return "up"
    return "quantiles" if "histogram_quantile" in query else "counters"


class FakeProm:
    """A Prometheus HTTP API answering from canned vectors, keyed by `kind_of`."""

    def __init__(self) -> None:
        self.vectors: dict[str, list[Item]] = {}
        self.targets: list[dict[str, Any]] | None = [{"labels": A, "scrapeInterval": "1s"}]
        self.metadata: list[dict[str, Any]] | None = None
        self.queries: list[str] = []
        self.headers: list[httpx.Headers] = []
        self.down = False
        self.delays: dict[str, float] = {}
        self.reply: httpx.Response | None = None

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.headers.append(request.headers)
        if self.down:
            raise httpx.ConnectError("connection refused", request=request)
        if self.reply is not None:
            return self.reply
        path = request.url.path
        if path == "/api/v1/status/buildinfo":
            return ok({"version": "2.42.0"})
        if path == "/api/v1/targets":
            if self.targets is None:
                return httpx.Response(404, text="404 page not found")
            return ok({"activeTargets": self.targets})
        if path == "/api/v1/targets/metadata":
            return ok(self.metadata or [])
        if path == "/api/v1/query":
            query = parse_qs(request.content.decode())["query"][0]
            self.queries.append(query)
            kind = kind_of(query)
            if kind in self.delays:
                await asyncio.sleep(self.delays[kind])
            return ok({"resultType": "vector", "result": self.vectors.get(kind, [])})
        return httpx.Response(404, text="404 page not found")


def ok(data: object) -> httpx.Response:
    return httpx.Response(200, json={"status": "success", "data": data})


def source(fake: Callable[[httpx.Request], Coroutine[None, None, httpx.Response]], **kwargs: Any) -> PrometheusSource:
    kwargs.setdefault("selector", SEL)
    return PrometheusSource("http://prom:9090", transport=httpx.MockTransport(fake), **kwargs)


# -- query building ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "matchers"),
    [
        (None, ()),
        ("", ()),
        ("{}", ()),
        ('{namespace="llm"}', ('namespace="llm"',)),
        ('namespace="llm"', ('namespace="llm"',)),
        (' { namespace = "llm" , job=~"vllm.*", }', ('namespace="llm"', 'job=~"vllm.*"')),
        ("{pod!~'tmp-.*',team!=`a,b`}", ("pod!~'tmp-.*'", "team!=`a,b`")),
        ('{a="x\\"y"}', ('a="x\\"y"',)),
    ],
)
def test_selector_forms(text: str | None, matchers: tuple[str, ...]) -> None:
    assert _promql.parse_selector(text).matchers == matchers


@pytest.mark.parametrize(
    "text",
    ['vllm:foo{a="b"}', '{a="b"', "{a=b}", '{__name__="x"}', '{a="b" c="d"}', '{a="b"} or vector(1)', "{1a=''}"],
)
def test_bad_selectors_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError) as info:
        PrometheusSource("http://prom:9090", selector=text)
    assert info.value.exit_code == 2
    assert info.value.message.startswith("--selector is not a label selector")


def test_query_strings() -> None:
    sel = _promql.parse_selector(SEL)
    assert _promql.counter_window("generation_tokens", sel, 10.0) == (
        "sum by (namespace, pod, instance, engine, dp_rank) ("
        'rate(vllm:generation_tokens_total{namespace="llm"}[10000ms]) or '
        'rate(sglang:generation_tokens_total{namespace="llm"}[10000ms]))'
    )
    # Δ for the hit rate; the new name first, so `or` keeps it where a server has both.
    assert _promql.counter_window("prefix_queries", sel, 4.0) == (
        "sum by (namespace, pod, instance, engine, dp_rank) ("
        'increase(vllm:prefix_cache_queries_total{namespace="llm"}[4000ms]) or '
        'increase(vllm:gpu_prefix_cache_queries_total{namespace="llm"}[4000ms]) or '
        'increase(sglang:prompt_tokens_total{namespace="llm"}[4000ms]))'
    )
    combined = _promql.window_counters(sel, 10.0)
    assert combined.count("label_replace(") == len(_names.COUNTERS)
    assert "label_replace(sum by (namespace, pod, instance, engine, dp_rank) (rate(vllm:prompt_tokens_total" in combined
    assert combined.endswith(', "agentx_figure", "request_preemptions_count", "", "")')
    # A histogram's Σ and count are read as counters by their own sample names (no `_total`) ...
    assert _promql.counter_window("request_queue_s_sum", sel, 10.0) == (
        "sum by (namespace, pod, instance, engine, dp_rank) ("
        'rate(vllm:request_queue_time_seconds_sum{namespace="llm"}[10000ms]) or '
        'rate(sglang:queue_time_seconds_sum{namespace="llm"}[10000ms]))'
    )
    # ... and the accepted tokens per draft position keep their position apart.
    assert _promql.counter_window("spec_accepted_at", sel, 10.0) == (
        "sum by (namespace, pod, instance, engine, dp_rank, position) ("
        'rate(vllm:spec_decode_num_accepted_tokens_per_pos_total{namespace="llm"}[10000ms]))'
    )
    # A figure of one label value picks it; a deprecated name's label is summed away, so that `or`
    # keeps its successor's series where a server has both (vLLM 0.32 writes both).
    assert _promql.counter_window("prompt_offload", sel, 10.0) == (
        "sum by (namespace, pod, instance, engine, dp_rank) (sum without (source) ("
        'rate(vllm:prompt_tokens_by_source_total{source="external_kv_transfer",namespace="llm"}[10000ms])))'
    )
    assert _promql.counter_window("offload_load_bytes", sel, 10.0) == (
        "sum by (namespace, pod, instance, engine, dp_rank) ("
        'rate(vllm:kv_offload_load_bytes_total{namespace="llm"}[10000ms]) or sum without (transfer_type) ('
        'rate(vllm:kv_offload_total_bytes_total{transfer_type="CPU_to_GPU",namespace="llm"}[10000ms])))'
    )
    assert _promql.window_quantiles(sel, 10.0).count("histogram_quantile(") == 3 * len(_names.HISTOGRAMS)
    itl = _promql.histogram_quantiles("itl", sel, 10.0)
    assert (
        itl.count("histogram_quantile(") == 3
        and "histogram_quantile(0.99, sum by (namespace, pod, instance, le)" in itl
    )
    assert 'rate(vllm:inter_token_latency_seconds_bucket{namespace="llm"}[10000ms]) or ' in itl
    assert 'rate(vllm:time_per_output_token_seconds_bucket{namespace="llm"}[10000ms])' in itl
    instant = _promql.instant_series(sel)
    assert instant.startswith('{__name__=~"vllm:cache_config_info|vllm:prompt_tokens_total|') and instant.endswith(
        '",namespace="llm"}'
    )
    assert "vllm:gpu_cache_usage_perc" in instant and "sglang:token_usage" in instant
    assert _promql.targets_up(_promql.Selector()) == "up"
    assert _promql.duration(0.25) == "250ms"


async def test_every_query_carries_the_selector() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A)
    async with source(fake, selector='{namespace="llm",team=~"a|b"}') as src:
        await src.start()
        await src.sample(0.0)
    assert {kind_of(q) for q in fake.queries} >= {"instant", "up", "dcgm", "counters", "quantiles", "clock"}
    for query in fake.queries:
        if query == "time()":
            continue
        blocks = re.findall(r"\{[^{}]*\}", query)
        assert blocks, query
        for block in blocks:
            assert 'namespace="llm",team=~"a|b"' in block or block.startswith('{__name__=~"DCGM'), query
        # every metric named outside a __name__ matcher is followed by its selector
        named = re.sub(r'__name__=~"[^"]*"', "", query)
        assert not re.search(r"[a-z]+:[a-z0-9_]+(?![a-z0-9_{])", named), query


def _code_strings(module: object) -> list[str]:
    """The string literals of a module's code (docstrings left out)."""
    tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_promql_lives_in_one_module() -> None:
    for module in (prometheus_module, promfigures, promgpus, promstart, promapi):
        for text in _code_strings(module):
            for fragment in ("rate(", "increase(", "histogram_quantile(", "sum by", "__name__=~"):
                assert fragment not in text, (module.__name__, text)
    assert any("histogram_quantile(" in text for text in _code_strings(_promql))


# -- answers → figures ----------------------------------------------------------------------------


def window_answers(fake: FakeProm, target: dict[str, str], engine: str = "0", scale: float = 1.0) -> None:
    """Answers of the two window queries, as Prometheus tags them (by figure, replica, engine)."""
    labels = {**target, "engine": engine}
    rates = {
        "prompt_tokens": 500.0,
        "generation_tokens": 50.0,
        "cached_prompt_tokens": 300.0,
        "preemptions": 0.0,
        "requests_finished": 2.0,
        "prefix_queries": 5000.0,
        "prefix_hits": 3000.0,
    }
    for name, value in rates.items():
        fake.vectors.setdefault("counters", []).append(
            item(None, value * scale, **labels, **{_promql.FIGURE_LABEL: name})
        )
    for name, base in (("ttft", 0.1), ("itl", 0.01), ("e2e", 2.0), ("queue_time", 0.0)):
        for q, factor in (("0.5", 1.0), ("0.9", 2.0), ("0.99", 3.0)):
            seconds: float | str = "NaN" if name == "queue_time" else base * factor  # an empty window: NaN → None
            tags = {_promql.QUANTILE_LABEL: q, _promql.FIGURE_LABEL: name}
            fake.vectors.setdefault("quantiles", []).append(item(None, seconds, **target, **tags))


async def test_figures_from_vector_answers() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A)
    window_answers(fake, A)
    async with source(fake) as src:
        discovery = await src.start()
        fake.vectors["instant"] = vllm_series(A, prompt=1500, gen=150, queries=1500, hits=900)
        sample = await src.sample(0.0)
    assert discovery.replicas == ("10.0.0.1:8000",)
    assert (discovery.scrape_interval_s, discovery.interval_source, discovery.window_s) == (1.0, "the targets API", 10)
    assert sample.up and sample.status.startswith("Prometheus http://prom:9090: 1 of 1 replicas reporting")
    (fig,) = sample.endpoints
    assert (fig.url, fig.up, fig.status, fig.flavor, fig.model) == ("10.0.0.1:8000", True, "up", "vllm", "m")
    assert (fig.running, fig.waiting, fig.kv_cache_usage) == (3, 1, 0.25)
    assert (fig.block_size, fig.num_gpu_blocks, fig.prefix_caching_enabled) == (16, 1000, True)
    assert (fig.prompt_tokens_per_s, fig.generation_tokens_per_s, fig.cached_prompt_tokens_per_s) == (500, 50, 300)
    assert (fig.preemptions_per_s, fig.requests_per_s) == (0, 2)
    assert fig.prefix_hit_rate_window == pytest.approx(0.6)
    assert fig.prefix_hit_rate_lifetime == pytest.approx(900 / 1500)
    assert (fig.ttft.p50, fig.ttft.p90, fig.ttft.p99) == pytest.approx((0.1, 0.2, 0.3))
    assert fig.itl.p90 == pytest.approx(0.02) and fig.e2e.p99 == pytest.approx(6.0)
    assert fig.queue_time.p50 is None
    totals = fig.totals
    assert (totals.prompt_tokens, totals.generation_tokens, totals.prefix_cache_hits) == (500, 50, 300)
    assert totals.requests_finished == 0 and totals.preemptions == 0
    assert fig.engines == () and fig.gpu_count is None
    aggregate = aggregate_endpoints(sample.endpoints)
    assert aggregate is not None and aggregate.generation_tokens_per_s == 50


async def test_cache_figures_from_the_window_answers_and_labelled_series() -> None:
    """Prompt tokens by source, offload traffic and residency percentiles, as the fleet source reads
    them: the by-source series of the instant read land in their figures' run totals (their `source`
    label picked, not summed over), the window's rates give the shares and the GB/s."""
    labels = {**A, "engine": "0", "model_name": "m"}

    def by_source(computed: float, gpu: float, offload: float) -> list[Item]:
        values = {"local_compute": computed, "local_cache_hit": gpu, "external_kv_transfer": offload}
        return [item("vllm:prompt_tokens_by_source_total", v, source=k, **labels) for k, v in values.items()]

    fake = FakeProm()
    fake.vectors["instant"] = [*vllm_series(A), *by_source(100, 800, 100)]
    window_answers(fake, A)
    tagged = {
        "prompt_computed": 50.0,
        "prompt_gpu_cache": 350.0,
        "prompt_offload": 100.0,
        "offload_load_bytes": 2e9,
        "offload_load_s": 0.04,
        "offload_store_bytes": 5e8,
    }
    for name, value in tagged.items():
        fake.vectors["counters"].append(item(None, value, **A, engine="0", **{_promql.FIGURE_LABEL: name}))
    for q, seconds in (("0.5", 12.0), ("0.9", 40.0), ("0.99", 55.0)):
        tags = {_promql.QUANTILE_LABEL: q, _promql.FIGURE_LABEL: "kv_block_idle_before_evict"}
        fake.vectors["quantiles"].append(item(None, seconds, **A, **tags))
    async with source(fake) as src:
        await src.start()
        fake.vectors["instant"] = [*vllm_series(A), *by_source(150, 1150, 200)]
        sample = await src.sample(0.0)
    (fig,) = sample.endpoints
    assert (fig.prompt_share_computed, fig.prompt_share_gpu_cache, fig.prompt_share_offload) == (0.1, 0.7, 0.2)
    assert fig.prompt_offload_tokens_per_s == 100
    assert fig.kv_offload_load_gb_per_s == 2.0 and fig.kv_offload_load_s_per_gb == pytest.approx(0.02)
    assert fig.kv_offload_store_gb_per_s == 0.5 and fig.kv_offload_store_s_per_gb is None  # its time: no answer
    assert (fig.kv_block_idle_before_evict.p50, fig.kv_block_idle_before_evict.p90) == (12.0, 40.0)
    assert fig.kv_block_reuse_gap.p50 is None
    t = fig.totals
    assert (t.prompt_tokens_computed, t.prompt_tokens_gpu_cache, t.prompt_tokens_offload) == (50, 350, 100)


async def test_old_and_new_names_of_one_series_are_counted_once() -> None:
    labels = {**A, "engine": "0", "model_name": "m"}
    both = [
        *vllm_series(A),
        item("vllm:gpu_prefix_cache_queries_total", 1000, **labels),
        item("vllm:gpu_prefix_cache_hits_total", 600, **labels),
        item("vllm:gpu_cache_usage_perc", 0.99, **labels),
    ]
    fake = FakeProm()
    fake.vectors["instant"] = both
    async with source(fake) as src:
        await src.start()
        fake.vectors["instant"] = [
            item(
                i["metric"]["__name__"],
                float(i["value"][1]) * 2,
                **{k: v for k, v in i["metric"].items() if k != "__name__"},
            )
            for i in both
        ]
        fig = (await src.sample(0.0)).endpoints[0]
    assert fig.totals.prefix_cache_queries == 1000 and fig.totals.prefix_cache_hits == 600  # not 2000/1200
    assert fig.kv_cache_usage == 0.5  # the new gauge (0.25 doubled), not the old one beside it (1.98)
    assert fig.prefix_hit_rate_lifetime == pytest.approx(0.6)


async def test_old_names_alone_and_block_counting_from_the_help_text() -> None:
    labels = {**A, "engine": "0", "model_name": "m"}

    def old(queries: float, hits: float) -> list[Item]:
        return [
            item("vllm:gpu_prefix_cache_queries_total", queries, **labels),
            item("vllm:gpu_prefix_cache_hits_total", hits, **labels),
            item("vllm:gpu_cache_usage_perc", 0.4, **labels),
            item("vllm:num_requests_running", 2, **labels),
            item("vllm:cache_config_info", 1, block_size="16", num_gpu_blocks="50", **labels),
        ]

    fake = FakeProm()
    fake.vectors["instant"] = old(100, 40)
    fake.metadata = [
        {"target": A, "type": "counter", "help": "GPU prefix cache queries, in terms of number of queried blocks."}
    ]
    async with source(fake) as src:
        await src.start()
        fake.vectors["instant"] = old(110, 45)
        fig = (await src.sample(0.0)).endpoints[0]
    assert fig.kv_cache_usage == 0.4 and fig.running == 2
    assert fig.totals.prefix_cache_queries == 10 * 16 and fig.totals.prefix_cache_hits == 5 * 16
    assert fig.prefix_hit_rate_lifetime == pytest.approx(45 / 110)  # a ratio: blocks cancel out


async def test_data_parallel_engines() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A, engine="0", running=2, kv=0.2) + vllm_series(
        A, engine="1", running=5, waiting=4, kv=0.6
    )
    window_answers(fake, A, engine="0")
    window_answers(fake, A, engine="1", scale=3.0)
    hits = [i for i, x in enumerate(fake.vectors["counters"]) if x["metric"][_promql.FIGURE_LABEL] == "prefix_hits"]
    fake.vectors["counters"][hits[1]] = item(None, 0.0, **A, engine="1", **{_promql.FIGURE_LABEL: "prefix_hits"})
    async with source(fake) as src:
        await src.start()
        fig = (await src.sample(0.0)).endpoints[0]
    assert (fig.running, fig.waiting) == (7, 5) and fig.kv_cache_usage == pytest.approx(0.4)
    assert fig.num_gpu_blocks == 2000
    assert fig.generation_tokens_per_s == 200
    assert fig.prefix_hit_rate_window == pytest.approx(3000 / 20000)
    e0, e1 = fig.engines
    assert (e0.engine, e0.running, e0.kv_cache_usage, e0.generation_tokens_per_s) == ("0", 2, 0.2, 50)
    assert (e1.engine, e1.running, e1.waiting, e1.kv_cache_usage, e1.generation_tokens_per_s) == ("1", 5, 4, 0.6, 150)
    assert e0.prefix_hit_rate_window == pytest.approx(0.6) and e1.prefix_hit_rate_window == 0


def _estimated(target: dict[str, str], engine: str, flops: float, nbytes: float) -> list[Item]:
    labels = {**target, "engine": engine, "model_name": "m"}
    return [
        item("vllm:estimated_flops_per_gpu_total", flops, **labels),
        item("vllm:estimated_read_bytes_per_gpu_total", nbytes, **labels),
        item("vllm:estimated_write_bytes_per_gpu_total", nbytes / 4, **labels),
    ]


async def test_estimated_work_of_data_parallel_engines() -> None:
    """vLLM's `--enable-mfu-metrics` counters through Prometheus: rates and totals summed over engines,
    and the engines that export them (one GPU's share is the sum ÷ the engines, as from a page)."""
    fake = FakeProm()
    instant = vllm_series(A, engine="0") + vllm_series(A, engine="1")
    fake.vectors["instant"] = instant + _estimated(A, "0", 1e15, 4e12) + _estimated(A, "1", 2e15, 4e12)
    for engine, flops_per_s in (("0", 2e14), ("1", 3e14)):
        tags = {**A, "engine": engine}
        for name, value in (("estimated_flops", flops_per_s), ("estimated_read_bytes", 8e11)):
            fake.vectors.setdefault("counters", []).append(item(None, value, **tags, **{_promql.FIGURE_LABEL: name}))
    async with source(fake) as src:
        await src.start()
        fake.vectors["instant"] = instant + _estimated(A, "0", 3e15, 8e12) + _estimated(A, "1", 5e15, 8e12)
        fig = (await src.sample(0.0)).endpoints[0]
    assert fig.estimating_engines == 2
    assert fig.estimated_flops_per_s == 5e14 and fig.estimated_read_bytes_per_s == 1.6e12
    assert fig.estimated_write_bytes_per_s is None  # no answer for it this tick: unknown, not 0
    assert fig.totals.estimated_flops == 5e15 and fig.totals.estimated_read_bytes == 8e12
    assert fig.totals.estimated_write_bytes == 2e12
    assert "vllm:estimated_flops_per_gpu_total" in _promql.window_counters(_promql.parse_selector(SEL), 10.0)


async def test_run_totals_handle_resets_and_new_series() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A, prompt=1000)
    async with source(fake) as src:
        await src.start()  # the run's start: nothing counted yet
        fake.vectors["instant"] = vllm_series(A, prompt=1400)
        assert (await src.sample(0.0)).endpoints[0].totals.prompt_tokens == 400
        fake.vectors["instant"] = vllm_series(A, prompt=250)  # restarted: the new value is the delta
        assert (await src.sample(0.0)).endpoints[0].totals.prompt_tokens == 650
        # a second replica appears mid-run: it started after the run did, all of its value counts
        fake.vectors["instant"] = vllm_series(A, prompt=300) + vllm_series(B, prompt=80)
        sample = await src.sample(0.0)
    a, b = sample.endpoints
    assert a.totals.prompt_tokens == 700 and b.totals.prompt_tokens == 80
    assert a.totals.requests_finished == 0 and b.totals.requests_finished == 10
    aggregate = aggregate_endpoints(sample.endpoints)
    assert aggregate is not None and aggregate.totals.prompt_tokens == 780


def _idle_before_evict(target: dict[str, str], counts: tuple[float, float, float], engine: str = "0") -> list[Item]:
    """One engine's `vllm:kv_block_idle_before_evict_seconds` buckets (le 1, 10, +Inf), cumulative."""
    labels = {**target, "engine": engine, "model_name": "m"}
    name = "vllm:kv_block_idle_before_evict_seconds_bucket"
    return [item(name, c, le=le, **labels) for le, c in zip(("1.0", "10.0", "+Inf"), counts, strict=True)]


async def test_residency_histograms_run_totals_per_bucket() -> None:
    """The run's residency observations, as the direct scraper counts them: per bucket, summed over
    engines, from zero at the run's start, a histogram reset (any bucket down) counting all it has."""
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A) + _idle_before_evict(A, (5, 8, 9))
    async with source(fake) as src:
        await src.start()
        fake.vectors["instant"] = vllm_series(A) + _idle_before_evict(A, (7, 12, 14))
        first = (await src.sample(0.0)).endpoints[0].totals
        fake.vectors["instant"] = (
            vllm_series(A) + _idle_before_evict(A, (1, 1, 2)) + _idle_before_evict(A, (0, 3, 3), engine="1")
        )
        second = (await src.sample(0.0)).endpoints[0].totals
    assert "vllm:kv_block_idle_before_evict_seconds_bucket" in _promql.instant_series(_promql.parse_selector(SEL))
    assert first.kv_block_idle_before_evict is not None
    assert first.kv_block_idle_before_evict.bounds == (1.0, 10.0)
    assert first.kv_block_idle_before_evict.counts == (2, 4, 5)
    assert second.kv_block_idle_before_evict is not None
    assert second.kv_block_idle_before_evict.counts == (2 + 1 + 0, 4 + 1 + 3, 5 + 2 + 3)
    assert first.kv_block_reuse_gap is None  # not exported: unknown, never an empty histogram


async def test_a_replica_that_vanishes_is_down_with_its_totals_kept() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A) + vllm_series(B)
    async with source(fake) as src:
        await src.start()
        fake.vectors["instant"] = vllm_series(A) + vllm_series(B, prompt=1300)
        await src.sample(0.0)
        fake.vectors["instant"] = vllm_series(A)
        fake.vectors["up"] = [item("up", 1, **A), item("up", 0, **B)]
        a, b = (await src.sample(0.0)).endpoints
        assert a.up and not b.up and b.status == "down: Prometheus's last scrape of it failed"
        assert b.running is None and b.prompt_tokens_per_s is None and b.totals.prompt_tokens == 300
        fake.vectors["up"] = []
        assert (await src.sample(0.0)).endpoints[1].status == "down: no series in Prometheus now"
        fake.vectors["instant"] = vllm_series(A) + vllm_series(B, prompt=1400)
        back = (await src.sample(0.0)).endpoints[1]
    assert back.up and back.totals.prompt_tokens == 400


async def test_sglang_replica() -> None:
    labels = {**B, "model_name": "s"}
    fake = FakeProm()
    fake.vectors["instant"] = [
        item("sglang:prompt_tokens_total", 1000, **labels),
        item("sglang:generation_tokens_total", 50, **labels),
        item("sglang:cached_tokens_total", 700, **labels),
        item("sglang:num_running_reqs", 7, **labels),
        item("sglang:num_queue_reqs", 2, **labels),
        item("sglang:token_usage", 0.42, **labels),
        item("sglang:cache_hit_rate", 0.5, **labels),
    ]
    async with source(fake) as src:
        await src.start()
        fig = (await src.sample(0.0)).endpoints[0]
    assert (fig.flavor, fig.model, fig.running, fig.waiting, fig.kv_cache_usage) == ("sglang", "s", 7, 2, 0.42)
    assert fig.prefix_hit_rate_lifetime == pytest.approx(0.7)
    assert fig.prefix_hit_rate_window is None  # no window answer; the counter exists, so no gauge fallback
    assert fig.block_size is None and fig.totals.preemptions is None


# -- scrape interval and window ---------------------------------------------------------------------


async def test_window_is_at_least_four_scrape_intervals() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A)
    fake.targets = [{"labels": A, "scrapeInterval": "15s"}, {"labels": {"instance": "other"}, "scrapeInterval": "5m"}]
    async with source(fake) as src:
        discovery = await src.start()
        await src.sample(0.0)
    assert (discovery.scrape_interval_s, discovery.window_s) == (15, 60)
    assert any("[60000ms]" in q for q in fake.queries)


async def test_scrape_interval_from_sample_spacing_without_a_targets_api() -> None:
    fake = FakeProm()
    fake.targets = None  # Thanos / Mimir
    fake.vectors["instant"] = vllm_series(A)
    fake.vectors["spacing"] = [item(None, 2.0)]  # two samples per minute
    async with source(fake, window_s=30) as src:
        discovery = await src.start()
        assert (discovery.scrape_interval_s, discovery.interval_source) == (30, "the spacing of the samples")
        assert src.window_s == 120
        fake.vectors["spacing"] = []
        discovery = await src.start()
    assert discovery.scrape_interval_s == 60 and discovery.interval_source.startswith("Prometheus's default")


async def test_reset_window_shrinks_it_to_the_floor() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A)
    async with source(fake, window_s=20) as src:
        await src.start()
        assert src.window_s == 20
        src.reset_window()
        assert src.window_s == 4  # 4 scrape intervals of 1 s


@pytest.mark.parametrize(("text", "seconds"), [("15s", 15), ("1m30s", 90), ("500ms", 0.5), ("2h", 7200)])
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "15", "s", "1x", "0s"])
def test_parse_duration_rejects(text: str) -> None:
    assert parse_duration(text) is None


# -- GPUs -----------------------------------------------------------------------------------------


def dcgm(util: float, uuid: str, **labels: str) -> list[Item]:
    base = {"gpu": labels.pop("gpu", "0"), "UUID": uuid, "modelName": "NVIDIA H200", **labels}
    return [
        item("DCGM_FI_DEV_GPU_UTIL", util, **base),
        item("DCGM_FI_DEV_FB_USED", 1024, **base),
        item("DCGM_FI_DEV_FB_FREE", 3072, **base),
        item("DCGM_FI_DEV_POWER_USAGE", 500, **base),
    ]


async def test_gpus_on_the_replicas_own_target_are_theirs() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A) + vllm_series(B)
    fake.vectors["dcgm"] = dcgm(80, "GPU-a", Hostname="vm", **A) + dcgm(40, "GPU-b", Hostname="vm", **B)
    async with source(fake) as src:
        assert (await src.start()).dcgm_scoped
        sample = await src.sample(0.0)
    a, b = sample.endpoints
    assert (a.gpu_count, a.gpu_utilization, b.gpu_count, b.gpu_utilization) == (1, 0.8, 1, 0.4)
    assert [g.uuid for g in sample.gpu.gpus] == ["GPU-a", "GPU-b"]
    g = sample.gpu.gpus[0]
    assert (g.source, g.host, g.power_w, g.memory_used_bytes, g.memory_total_bytes) == (
        "dcgm",
        "vm",
        500,
        1024 * 2**20,
        4096 * 2**20,
    )
    assert sample.gpu.status == (
        "DCGM via Prometheus: 2 GPUs (distinct UUIDs) on 1 host; mapped to 2 of 2 replicas by scrape target"
    )


async def test_a_fleet_s_gpu_energy_from_dcgm_s_field() -> None:
    """DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ since boot) through Prometheus: each GPU's joules since its
    first sample; a GPU without the field integrates its power."""

    def energy(uuid: str, mj: float) -> Item:
        return item("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", mj, gpu="0", UUID=uuid, modelName="NVIDIA H200", **A)

    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A)
    gpus = dcgm(80, "GPU-a", **A) + dcgm(40, "GPU-b", **A)
    fake.vectors["dcgm"] = [*gpus, energy("GPU-a", 7e9)]
    async with source(fake) as src:
        await src.start()
        first = await src.sample(0.0)
        fake.vectors["dcgm"] = [*gpus, energy("GPU-a", 7e9 + 2.5e6)]
        later = await src.sample(0.0)
    assert [(g.uuid, g.energy_j, g.energy_from) for g in first.gpu.gpus] == [
        ("GPU-a", 0.0, "counter"),
        ("GPU-b", 0.0, "power"),
    ]
    a, b = later.gpu.gpus
    assert (a.energy_j, a.energy_from) == (2500.0, "counter")
    assert b.energy_from == "power" and b.energy_j is not None and b.energy_j > 0  # 500 W × the ticks' gap
    assert "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" in _promql.dcgm_series(_promql.parse_selector(SEL))


async def test_gpus_mapped_by_pod_and_host_and_counted_by_uuid() -> None:
    pod_a = {"instance": "10.1.0.5:8000", "pod": "vllm-a", "namespace": "llm", "node": "n1"}
    pod_b = {"instance": "10.1.0.6:8000", "pod": "vllm-b", "namespace": "llm", "node": "n2"}
    pod_c = {"instance": "10.1.0.7:8000", "pod": "vllm-c", "namespace": "llm", "node": "n3"}
    pod_d = {"instance": "10.1.0.8:8000", "pod": "vllm-d", "namespace": "llm", "node": "n3"}
    exporter = {"instance": "10.9.0.1:9400", "pod": "dcgm-exporter-x", "namespace": "gpu-operator"}
    fake = FakeProm()
    fake.vectors["instant"] = [series for t in (pod_a, pod_b, pod_c, pod_d) for series in vllm_series(t)]
    fake.vectors["dcgm"] = (
        dcgm(90, "GPU-1", gpu="0", Hostname="n1", exported_pod="vllm-a", exported_namespace="llm", **exporter)
        + dcgm(70, "GPU-2", gpu="1", Hostname="n1", exported_pod="vllm-a", exported_namespace="llm", **exporter)
        # the same GPU again from a second job: one GPU
        + dcgm(70, "GPU-2", gpu="1", Hostname="n1", exported_pod="vllm-a", job="dup", **exporter)
        + dcgm(50, "GPU-3", Hostname="n2.cluster.local", **exporter)  # by host: n2 runs one replica
        + dcgm(10, "GPU-4", Hostname="n3", **exporter)  # n3 runs two replicas: not split
        + dcgm(10, "GPU-9", Hostname="n9", **exporter)  # another workload's GPU
    )
    async with source(fake) as src:
        await src.start()
        sample = await src.sample(0.0)
    a, b, c, d = sample.endpoints
    assert a.gpu_count == 2 and a.gpu_utilization == pytest.approx(0.8)
    assert (b.gpu_count, b.gpu_utilization) == (1, 0.5)
    assert c.gpu_count is None and d.gpu_count is None
    assert len(sample.gpu.gpus) == 5  # scoped: every GPU the selector matched, once per UUID
    assert "mapped to 2 of 4 replicas by host and pod" in sample.gpu.status
    assert "not split: n3 (2 replicas)" in sample.gpu.status


async def test_unscoped_dcgm_counts_only_the_gpus_mapped_to_replicas() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series({"instance": "gpu-node-1:8000"})
    unscoped = dcgm(60, "GPU-1", instance="gpu-node-1:9400", Hostname="gpu-node-1") + dcgm(
        5, "GPU-2", instance="other:9400", Hostname="other"
    )

    async def route(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1/query":
            query = parse_qs(request.content.decode())["query"][0]
            if query.startswith('{__name__=~"DCGM_'):
                # no DCGM series carries the selector's labels; all of them without it
                result = [] if "namespace" in query else unscoped
                return ok({"resultType": "vector", "result": result})
        return await fake(request)

    async with source(route) as src:
        assert not (await src.start()).dcgm_scoped
        sample = await src.sample(0.0)
    assert [g.uuid for g in sample.gpu.gpus] == ["GPU-1"] and sample.endpoints[0].gpu_count == 1
    assert "outside the selector (only those mapped to a replica are counted)" in sample.gpu.status


async def test_no_dcgm_series() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A)
    async with source(fake) as src:
        await src.start()
        sample = await src.sample(0.0)
    assert sample.gpu.gpus == () and sample.gpu.status == "no DCGM GPU series in Prometheus: GPUs not known"


# -- errors, auth ----------------------------------------------------------------------------------


def _refused(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


async def _slow(request: httpx.Request) -> httpx.Response:
    await asyncio.sleep(5)
    return ok({})


@pytest.mark.parametrize(
    ("handler", "error", "message"),
    [
        (_refused, TargetError, "Prometheus at http://prom:9090 cannot be reached (connection refused or host "),
        (_slow, TargetError, "Prometheus at http://prom:9090 did not answer within 0.2 s."),
        (lambda r: httpx.Response(401), TargetError, "Prometheus at http://prom:9090 refused access (HTTP 401)."),
        (lambda r: httpx.Response(403, text="forbidden"), TargetError, "refused access (HTTP 403)."),
        (lambda r: httpx.Response(200, text="<html>Grafana</html>"), TargetError, "not the Prometheus API."),
        (lambda r: httpx.Response(404, text="404 page not found"), TargetError, "has no Prometheus API at"),
        (
            lambda r: httpx.Response(
                400, json={"status": "error", "errorType": "bad_data", "error": 'parse error: unexpected "}"'}
            ),
            UsageError,
            'rejected a query: parse error: unexpected "}".',
        ),
        (
            lambda r: httpx.Response(503, json={"status": "error", "errorType": "unavailable", "error": "busy"}),
            TargetError,
            "failed a query (HTTP 503, unavailable): busy.",
        ),
    ],
)
async def test_start_errors_are_one_sentence(handler: Any, error: type[Exception], message: str) -> None:
    src = PrometheusSource("http://user:pw@prom:9090/", transport=httpx.MockTransport(handler), start_timeout_s=0.2)
    with pytest.raises(error) as info:
        await src.start()
    await src.aclose()
    exc = info.value
    assert isinstance(exc, TargetError | UsageError)
    assert message in exc.message and exc.message.endswith(".") and "\n" not in exc.message
    assert exc.message.count(". ") == 0 and "pw" not in str(exc) and "user" not in str(exc)
    assert exc.exit_code == (2 if error is UsageError else 3)


async def test_auth_hint_names_the_token_variable() -> None:
    async with source(lambda r: httpx.Response(401)) as src:  # type: ignore[arg-type, return-value]
        with pytest.raises(TargetError) as info:
            await src.start()
    assert info.value.hint is not None and "AGENTX_PROMETHEUS_TOKEN" in info.value.hint


async def test_no_series_for_the_selector() -> None:
    fake = FakeProm()
    fake.vectors["up"] = [item("up", 1, instance="x:1"), item("up", 1, instance="x:2")]
    async with source(fake) as src:
        with pytest.raises(TargetError) as info:
            await src.start()
    assert info.value.message == (
        'Prometheus at http://prom:9090 has no vLLM or SGLang series matching {namespace="llm"} '
        "(2 scrape targets match it)."
    )


async def test_down_mid_run_then_back() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A, prompt=1000)
    async with source(fake) as src:
        await src.start()
        fake.vectors["instant"] = vllm_series(A, prompt=1200)
        await src.sample(0.0)
        fake.down = True
        down = await src.sample(0.0)
        fake.down = False
        fake.vectors["instant"] = vllm_series(A, prompt=1500)
        back = await src.sample(0.0)
    sentence = "Prometheus at http://prom:9090 cannot be reached (connection refused or host unreachable)"
    assert not down.up and down.status == sentence
    (fig,) = down.endpoints
    assert not fig.up and fig.status == f"down: {sentence}"
    assert fig.running is None and fig.generation_tokens_per_s is None and fig.prefix_hit_rate_window is None
    assert fig.totals.prompt_tokens == 200  # kept, never zeroed
    assert down.gpu.status == f"DCGM via Prometheus: {sentence}"
    assert back.up and back.endpoints[0].up and back.endpoints[0].totals.prompt_tokens == 500


async def test_a_slow_query_is_cut_at_the_tick_budget_and_the_rest_is_kept() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A)
    window_answers(fake, A)
    async with source(fake, query_timeout_s=0.15, tick_budget_s=0.25) as src:
        await src.start()
        fake.delays["quantiles"] = 2.0
        sample = await src.sample(0.0)
    assert sample.took_s < 1.5  # cut at the budget, not after the 2 s the query would have taken
    fig = sample.endpoints[0]
    assert fig.up and fig.ttft.p50 is None and fig.itl.p50 is None and fig.generation_tokens_per_s == 50
    assert sample.status.endswith("some figures missing: Prometheus at http://prom:9090 did not answer within 0.15 s")


async def test_credentials_never_leak() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A)
    src = source(fake, token=TOKEN, headers={"X-Scope-OrgID": ORG})
    await src.start()
    await src.sample(0.0)
    assert fake.headers[0]["authorization"] == f"Bearer {TOKEN}" and fake.headers[0]["x-scope-orgid"] == ORG
    assert set(src.secrets) == {TOKEN, ORG}
    shown = [repr(src)]
    # A server that echoes what it was sent: its text is masked before it reaches a message.
    fake.reply = httpx.Response(
        500, json={"status": "error", "errorType": "internal", "error": f"tenant {ORG} token Bearer {TOKEN}"}
    )
    sample = await src.sample(0.0)
    shown += [sample.status, sample.gpu.status, *(e.status for e in sample.endpoints), repr(sample)]
    with pytest.raises(TargetError) as info:
        await src.start()
    shown += [str(info.value), repr(info.value)]
    fake.reply = httpx.Response(401, text=f"bad token {TOKEN}")
    with pytest.raises(TargetError) as info:
        await src.start()
    shown += [str(info.value)]
    await src.aclose()
    assert "tenant ******** token Bearer ********" in sample.status
    for text in shown:
        assert TOKEN not in text and ORG not in text, text
    assert "X-Scope-OrgID" in repr(src)  # header names are not secret


def test_credential_given_twice_is_refused() -> None:
    with pytest.raises(UsageError) as info:
        PrometheusSource("http://prom", token=TOKEN, headers={"authorization": f"Bearer {TOKEN}"})
    assert TOKEN not in str(info.value)


@pytest.mark.parametrize("url", ["prom:9090", "ftp://prom", "http://"])
def test_bad_url_is_a_usage_error(url: str) -> None:
    with pytest.raises(UsageError):
        PrometheusSource(url)


def test_parse_prometheus_header() -> None:
    assert parse_prometheus_header("X-Scope-OrgID: tenant-1") == ("X-Scope-OrgID", "tenant-1")
    assert parse_prometheus_header("Authorization:Bearer a:b") == ("Authorization", "Bearer a:b")
    for bad in ("Bearer SECRETVALUE", "X Bad: SECRETVALUE", "X-A:", ": SECRETVALUE", "X-A: SECRET\nVALUE"):
        with pytest.raises(UsageError) as info:
            parse_prometheus_header(bad)
        assert "SECRET" not in str(info.value)


async def test_a_slow_instant_read_is_a_down_tick_within_the_budget() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A)
    async with source(fake, query_timeout_s=0.1, tick_budget_s=0.2) as src:
        await src.start()
        fake.delays["instant"] = 2.0
        sample = await src.sample(0.0)
    assert sample.took_s < 1.5 and not sample.up  # well short of the 2 s the read would have taken
    assert sample.status == "Prometheus at http://prom:9090 did not answer within 0.1 s"
    assert sample.endpoints[0].status == "down: Prometheus at http://prom:9090 did not answer within 0.1 s"


async def test_auth_lost_mid_run_and_no_series_mid_run() -> None:
    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A)
    async with source(fake) as src:
        await src.start()
        fake.reply = httpx.Response(403)
        forbidden = await src.sample(0.0)
        fake.reply = None
        fake.vectors["instant"] = []
        empty = await src.sample(0.0)
    assert not forbidden.up and forbidden.status == "Prometheus at http://prom:9090 refused access (HTTP 403)"
    assert empty.up and empty.status == (
        'Prometheus at http://prom:9090 has no vLLM or SGLang series matching {namespace="llm"} now'
    )
    assert empty.endpoints[0].status == "down: no series in Prometheus now"


async def test_a_replica_with_block_counting_names_appearing_mid_run() -> None:
    labels = {**B, "engine": "0", "model_name": "old"}

    def old(queries: float) -> list[Item]:
        return [
            item("vllm:gpu_prefix_cache_queries_total", queries, **labels),
            item("vllm:gpu_prefix_cache_hits_total", queries / 2, **labels),
            item("vllm:cache_config_info", 1, block_size="16", num_gpu_blocks="50", **labels),
        ]

    fake = FakeProm()
    fake.vectors["instant"] = vllm_series(A)
    fake.metadata = [
        {"target": B, "type": "counter", "help": "Prefix cache queries, in terms of number of queried blocks."}
    ]
    async with source(fake) as src:
        await src.start()
        fake.vectors["instant"] = vllm_series(A) + old(10)
        await src.sample(0.0)  # reads the units in the background
        await asyncio.sleep(0.05)
        fake.vectors["instant"] = vllm_series(A) + old(30)
        fig = (await src.sample(0.0)).endpoints[1]
    assert fig.totals.prefix_cache_queries == 30 * 16  # first seen mid-run: all of its value counts


def page_series(text: str, target: dict[str, str]) -> list[Item]:
    """A /metrics page's samples as an instant read returns them: every series with the target's labels."""
    return [
        item(sample.name, sample.value, **target, **sample.labels)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    ]


async def test_request_phases_and_speculative_decoding_through_prometheus() -> None:
    """The known shape (pages.phases_and_spec, tests/telemetry/test_server_time.py) read from Prometheus:
    the window's rates of each histogram's Σ and count and of the speculative counters, the accepted
    tokens by their `position`; the run totals from two instant reads of the same pages as the direct
    reader's, and equal to its."""
    engines = {"engines": 2, "draft_share": (0.25, 0.75), "accepted_at": (pages.ACCEPTED_AT, (0.4, 0.2, 0.0))}
    before = pages.phases_and_spec(requests=0, steps=0, drafts=0, **engines)
    after = pages.phases_and_spec(requests=10, steps=40, drafts=400, **engines)
    fake = FakeProm()
    fake.vectors["instant"] = page_series(before, A)
    per_s = {  # each engine's rates over a 10-s window: 5 requests and 20 steps each; 25 and 75 drafts
        "request_queue_s_sum": 0.05,
        "request_queue_s_count": 0.5,
        "request_prefill_s_sum": 0.15,
        "request_prefill_s_count": 0.5,
        "request_decode_s_sum": 0.28,
        "request_decode_s_count": 0.5,
        "iteration_tokens_sum": 96.0,
        "iteration_tokens_count": 2.0,
        "request_prefill_computed_tokens_sum": 450.0,
        "request_prefill_computed_tokens_count": 0.5,
        "request_preemptions_sum": 0.1,
        "request_preemptions_count": 0.5,
    }
    counters = fake.vectors.setdefault("counters", [])
    for engine, drafts, at in (("0", 10.0, pages.ACCEPTED_AT), ("1", 30.0, (0.4, 0.2, 0.0))):
        tags = {**A, "engine": engine}
        spec = {"spec_drafts": drafts, "spec_draft_tokens": 3 * drafts, "spec_accepted_tokens": drafts * sum(at)}
        for name, value in {**per_s, **spec}.items():
            counters.append(item(None, value, **tags, **{_promql.FIGURE_LABEL: name}))
        for position, rate in enumerate(at):
            figure = {_promql.FIGURE_LABEL: "spec_accepted_at", "position": str(position)}
            counters.append(item(None, drafts * rate, **tags, **figure))
    async with source(fake) as src:
        await src.start()
        fake.vectors["instant"] = page_series(after, A)
        fig = (await src.sample(0.0)).endpoints[0]
    assert fig.server_queue_s_mean == pytest.approx(0.1) and fig.server_prefill_s_mean == pytest.approx(0.3)
    assert fig.server_decode_s_mean == pytest.approx(0.56) and fig.server_step_tokens_mean == pytest.approx(48)
    assert fig.server_preemptions_per_request == pytest.approx(0.2)
    assert fig.spec_acceptance_length == pytest.approx(1 + 0.25 * 1.5 + 0.75 * 0.6)
    assert fig.spec_acceptance_by_position == pytest.approx((0.5, 0.275, 0.05)) and fig.spec_draft_length == 3
    e0, e1 = fig.engines
    assert (e0.spec_acceptance_length, e1.spec_acceptance_length) == pytest.approx((2.5, 1.6))
    direct = MetricsReader("direct")
    direct.read(before, 0.0)
    assert fig.totals == direct.read(after, 10.0).totals
    assert fig.totals.spec_accepted_tokens_by_position == pytest.approx((80 + 120, 50 + 60, 20))
