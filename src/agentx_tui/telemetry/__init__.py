"""Telemetry: what the servers and their GPUs say about themselves, read once per tick into the
Snapshot's figures (the models are `snapshot`'s): a server's /metrics page, a fleet's series in
Prometheus, GPUs through NVML or a DCGM exporter. Nothing here stalls or stops a tick: scrapes have a
hard deadline, NVML runs in its own thread, and a read that fails becomes figures that say so (a server
down or slow, a GPU source's status) instead of an exception. Only what runs before the run raises:
the `--prometheus` checks and `PrometheusSource.start()`.

EndpointMonitor       one server's /metrics → EndpointReading per tick (windowed rates, run totals)
MetricsReader         the same without I/O: Prometheus text in, EndpointReading out
ServerIdentity        what the attach probe learnt of a server, carried into each of its figures
describe_page         the naming and KV block size of a /metrics page (the attach probe): a PageSummary
aggregate_endpoints   several EndpointReading → one (url="aggregate")
DcgmMonitor           a dcgm-exporter page (--gpu-metrics URL) → GpuState
gpus_from_samples     the GPUs that DCGM series describe (an exporter's page, or the simulator's own)
NvmlSampler           local GPUs via NVML in a worker thread → GpuState
PrometheusSource      a fleet's vLLM/SGLang and DCGM series read from Prometheus (--prometheus URL):
                      FleetDiscovery when it starts, then a FleetSample per tick
check_selector, parse_prometheus_header   its --selector and --prometheus-header, checked before a run
PROMETHEUS_TOKEN_ENV  the environment variable that holds its bearer token
quantile              Prometheus histogram_quantile over cumulative buckets
"""

from agentx_tui.snapshot import histogram_quantile as quantile
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
