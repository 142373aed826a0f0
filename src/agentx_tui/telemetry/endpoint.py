"""`EndpointMonitor`: one server's /metrics, scraped once per tick into `EndpointReading`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal, TypedDict, Unpack

import httpx

from agentx_tui.snapshot import EndpointReading, EndpointTotals, Flavor, GpuReading
from agentx_tui.telemetry import _names
from agentx_tui.telemetry._energy import EnergyMeter
from agentx_tui.telemetry._fetch import FetchError, fetch_text
from agentx_tui.telemetry._figures import page_figures
from agentx_tui.telemetry._names import PageFlavor
from agentx_tui.telemetry._parse import MetricsPage, PageError, parse_page
from agentx_tui.telemetry._window import WindowState
from agentx_tui.telemetry.dcgm import gpus_from_samples


@dataclass(frozen=True)
class PageSummary:
    """What the attach probe reads from the head of a /metrics page."""

    flavor: PageFlavor | None = None
    block_size: int | None = None


def describe_page(text: str) -> PageSummary:
    """Naming and KV block size of a (possibly truncated) page; empty for a page that cannot be parsed."""
    head, _, _ = text.rpartition("\n")  # a page cut at a byte cap ends in half a line
    try:
        page = parse_page(head)
    except PageError:
        return PageSummary()
    return PageSummary(flavor=page.flavor, block_size=page.block_size)


class ServerIdentity(TypedDict, total=False):
    """What the attach probe learnt of a server, carried into each of its `EndpointReading`; each
    unknown when left out (`flavor` "unknown")."""

    model: str | None
    engine_version: str | None
    max_model_len: int | None
    flavor: Flavor
    # The share of KV blocks the residency histograms sample (vLLM's --kv-cache-metrics-sample), where
    # the run knows it: a server it launched, the simulator. vLLM does not export it.
    kv_cache_metrics_sample: float | None


class MetricsReader:
    """The pure half of a monitor: text pages in, figures out, state kept between pages."""

    def __init__(self, url: str, *, window_s: float = 10.0, **identity: Unpack[ServerIdentity]) -> None:
        self.url = url
        self.model = identity.get("model")
        self.engine_version = identity.get("engine_version")
        self.max_model_len = identity.get("max_model_len")
        self.kv_cache_metrics_sample = identity.get("kv_cache_metrics_sample")
        # "unknown" is resolved from the page's metric names; "sim" is kept (it publishes vLLM names).
        self.flavor: Flavor = identity.get("flavor", "unknown")
        self._state = WindowState(window_s)
        self._totals = EndpointTotals()
        self.dcgm_gpus: tuple[GpuReading, ...] = ()
        self._energy = EnergyMeter()  # of the GPUs its page describes (the simulator's)
        self._sim_lost: float | None = None

    def reset_window(self) -> None:
        self._state.reset_window()

    def _identity(self, *, up: bool, status: str, flavor: Flavor) -> EndpointReading:
        return EndpointReading(
            url=self.url,
            up=up,
            status=status,
            flavor=flavor,
            model=self.model,
            engine_version=self.engine_version,
            max_model_len=self.max_model_len,
            kv_cache_metrics_sample=self.kv_cache_metrics_sample,
        )

    def down(self, reason: str, *, answered: bool = False) -> EndpointReading:
        """Figures for a tick without a page: all None, run totals kept."""
        status = f"no metrics: {reason}" if answered else f"down: {reason}"
        return self._identity(up=answered, status=status, flavor=self.flavor).model_copy(
            update={"totals": self._totals}
        )

    def slow(self, reason: str) -> EndpointReading:
        """Figures for a tick whose page came too late: the server is up, its figures unknown."""
        return self._identity(up=True, status=f"slow: {reason}", flavor=self.flavor).model_copy(
            update={"totals": self._totals}
        )

    def read(self, text: str, now: float) -> EndpointReading:
        try:
            page = parse_page(text, self.engine_version)
        except PageError as exc:
            self.dcgm_gpus = ()
            return self.down(str(exc), answered=True)
        return self.read_page(page, now)

    def read_page(self, page: MetricsPage, now: float) -> EndpointReading:
        source: Literal["dcgm", "sim"] = "sim" if self.flavor == "sim" else "dcgm"
        self.dcgm_gpus = gpus_from_samples(page.samples, source, energy=self._energy, now=now)
        flavor: Flavor = self.flavor
        if flavor == "unknown" and page.flavor is not None:
            flavor = page.flavor
        if page.flavor is None:
            return self.down("the page has no vLLM or SGLang metrics", answered=True)
        self._state.add(page, now)
        figures = page_figures(page, self._state, self._identity(up=True, status="up", flavor=flavor))
        self._totals = figures.totals
        if _names.SIM_LAG in page.samples:
            figures = figures.model_copy(update=self._sim_health(page))
        return figures

    def _sim_health(self, page: MetricsPage) -> dict[str, float | None]:
        lag = max((value for _, value in page.samples.get(_names.SIM_LAG, [])), default=None)
        lost_now = sum(value for _, value in page.samples.get(_names.SIM_LOST, []))
        lost = None if self._sim_lost is None else max(0.0, lost_now - self._sim_lost)
        self._sim_lost = lost_now
        return {"sim_lag_s": lag, "sim_lost_s": lost}


class EndpointMonitor:
    """Scrapes ``url + "/metrics"`` with a hard deadline, so a slow server never stalls a tick."""

    def __init__(
        self,
        url: str,
        *,
        client: httpx.AsyncClient,
        window_s: float = 10.0,
        timeout_s: float = 0.8,
        **identity: Unpack[ServerIdentity],
    ) -> None:
        self.url = url.rstrip("/")
        self._client = client
        self._timeout_s = timeout_s
        self._reader = MetricsReader(self.url, window_s=window_s, **identity)

    @property
    def dcgm_gpus(self) -> tuple[GpuReading, ...]:
        """GPUs described by DCGM series on the same page (the simulator publishes them)."""
        return self._reader.dcgm_gpus

    def reset_window(self) -> None:
        self._reader.reset_window()

    async def sample(self, now: float) -> EndpointReading:
        try:
            text = await fetch_text(self._client, self.url + "/metrics", self._timeout_s)
        except FetchError as exc:
            self._reader.dcgm_gpus = ()
            if exc.timed_out and await self._healthy():
                # Busy, not gone: a server swamped by load answers /metrics late; say so, keep it up.
                return self._reader.slow(f"/metrics took over {self._timeout_s:g} s; /health answers")
            return self._reader.down(exc.reason, answered=exc.answered)
        return self._reader.read(text, now)

    async def _healthy(self) -> bool:
        """A quick /health, for a /metrics scrape that timed out: slow or down?"""
        try:
            async with asyncio.timeout(min(self._timeout_s, 0.5)):
                response = await self._client.get(self.url + "/health")
            return response.status_code == 200
        except (TimeoutError, httpx.HTTPError):
            return False
