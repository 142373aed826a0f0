"""`EndpointMonitor` over HTTP (httpx's MockTransport: no server), DCGM series on the same page."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from agentx_tui.telemetry import EndpointMonitor

from .pages import counters_only

DCGM_PAGE = """\
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-aaa",modelName="NVIDIA H200"} 87
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-bbb",modelName="NVIDIA H200"} 12
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-aaa",modelName="NVIDIA H200"} 612.5
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-aaa",modelName="NVIDIA H200"} 1024
# TYPE DCGM_FI_DEV_FB_FREE gauge
DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-aaa",modelName="NVIDIA H200"} 3072
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-aaa",modelName="NVIDIA H200"} 61
# TYPE DCGM_FI_DEV_SM_CLOCK gauge
DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-aaa",modelName="NVIDIA H200"} 1980
"""


def _client(handler: httpx.MockTransport) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=handler)


async def test_sample_reads_metrics_and_dcgm_from_one_page() -> None:
    pages = iter([counters_only(100, 10) + DCGM_PAGE, counters_only(300, 30) + DCGM_PAGE])
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, text=next(pages))

    async with _client(httpx.MockTransport(handler)) as client:
        monitor = EndpointMonitor("http://sim:1/", client=client, model="m", flavor="sim", max_model_len=4096)
        await monitor.sample(0.0)
        figs = await monitor.sample(2.0)
    assert seen == ["http://sim:1/metrics", "http://sim:1/metrics"]
    assert (figs.url, figs.flavor, figs.model, figs.max_model_len) == ("http://sim:1", "sim", "m", 4096)
    assert figs.prompt_tokens_per_s == pytest.approx(100)
    g0, g1 = monitor.dcgm_gpus
    assert (g0.index, g0.name, g0.uuid, g0.source) == (0, "NVIDIA H200", "GPU-aaa", "sim")
    assert g0.utilization == pytest.approx(0.87) and g0.power_w == 612.5
    assert g0.memory_used_bytes == 1024 * 2**20 and g0.memory_total_bytes == 4096 * 2**20
    assert (g0.temperature_c, g0.sm_clock_mhz, g0.power_limit_w) == (61, 1980, None)
    assert g1.utilization == pytest.approx(0.12) and g1.power_w is None and g1.memory_total_bytes is None


async def test_down_keeps_run_totals_and_recovers() -> None:
    state = {"fail": False, "prompt": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        if state["fail"]:
            raise httpx.ConnectError("refused", request=request)
        state["prompt"] += 100
        return httpx.Response(200, text=counters_only(state["prompt"], 0))

    async with _client(httpx.MockTransport(handler)) as client:
        monitor = EndpointMonitor("http://v", client=client)
        await monitor.sample(0.0)
        await monitor.sample(1.0)
        state["fail"] = True
        down = await monitor.sample(2.0)
        state["fail"] = False
        back = await monitor.sample(3.0)
    assert not down.up and down.status == "down: connection refused or host unreachable"
    assert down.prompt_tokens_per_s is None and down.totals.prompt_tokens == 100
    assert back.up and back.totals.prompt_tokens == 200
    assert back.prompt_tokens_per_s == pytest.approx(200 / 3)


async def test_a_slow_server_is_cut_off_at_the_timeout() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5)
        return httpx.Response(200, text="")

    async with _client(httpx.MockTransport(handler)) as client:
        monitor = EndpointMonitor("http://slow", client=client, timeout_s=0.1)
        loop = asyncio.get_running_loop()
        started = loop.time()
        figs = await monitor.sample(0.0)
        took = loop.time() - started
    assert not figs.up and figs.status == "down: no answer within 0.1 s"  # /health is silent too
    assert took < 3.0  # cut off: the server would have taken 5 s


async def test_a_slow_metrics_page_with_a_healthy_server_is_slow_not_down() -> None:
    state = {"prompt": 0}

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/health":
            return httpx.Response(200)
        state["prompt"] += 100
        if state["prompt"] > 200:  # swamped by load: the page comes late, the server lives
            await asyncio.sleep(5)
        return httpx.Response(200, text=counters_only(state["prompt"], 0))

    async with _client(httpx.MockTransport(handler)) as client:
        monitor = EndpointMonitor("http://busy", client=client, timeout_s=0.1)
        await monitor.sample(0.0)
        await monitor.sample(1.0)
        slow = await monitor.sample(2.0)
    assert slow.up and slow.status == "slow: /metrics took over 0.1 s; /health answers"
    assert slow.prompt_tokens_per_s is None and slow.totals.prompt_tokens == 100  # unknown, not 0


async def test_http_error_status_means_no_metrics() -> None:
    async with _client(httpx.MockTransport(lambda r: httpx.Response(404, text="nope"))) as client:
        figs = await EndpointMonitor("http://x", client=client).sample(0.0)
    assert figs.up and figs.status == "no metrics: HTTP 404 from http://x/metrics"
    assert figs.running is None
