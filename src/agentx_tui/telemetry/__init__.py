"""Telemetry core: server /metrics scraping, GPU sampling (NVML, DCGM), history, the Snapshot type.

EndpointMonitor       one server's /metrics → EndpointFigures per tick (windowed rates, totals)
MetricsReader         the same without I/O: Prometheus text in, EndpointFigures out
aggregate_endpoints   several EndpointFigures → one (url="aggregate")
DcgmMonitor           a dcgm-exporter page → GpuState
NvmlSampler           local GPUs via NVML in a worker thread → GpuState
PrometheusSource      a fleet's vLLM/SGLang and DCGM series read from Prometheus → FleetSample per tick
describe_page         the naming and KV block size of a /metrics page (the attach probe)
quantile              Prometheus histogram_quantile over cumulative buckets
"""

from agentx_tui.telemetry._window import quantile
from agentx_tui.telemetry.aggregate import aggregate_endpoints
from agentx_tui.telemetry.dcgm import DcgmMonitor, gpus_from_samples
from agentx_tui.telemetry.endpoint import EndpointMonitor, MetricsReader, PageSummary, ServerIdentity, describe_page
from agentx_tui.telemetry.nvml import NvmlSampler
from agentx_tui.telemetry.prometheus import (
    PROMETHEUS_TOKEN_ENV,
    FleetDiscovery,
    FleetSample,
    PrometheusSource,
    check_selector,
    parse_prometheus_header,
)

__all__ = [
    "PROMETHEUS_TOKEN_ENV",
    "DcgmMonitor",
    "EndpointMonitor",
    "FleetDiscovery",
    "FleetSample",
    "MetricsReader",
    "NvmlSampler",
    "PageSummary",
    "PrometheusSource",
    "ServerIdentity",
    "aggregate_endpoints",
    "check_selector",
    "describe_page",
    "gpus_from_samples",
    "parse_prometheus_header",
    "quantile",
]
