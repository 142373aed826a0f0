"""The simulator's ``/metrics``: vLLM V1 metric names, types, labels and histogram buckets (copied
from vLLM 0.32's ``vllm/v1/metrics/loggers.py`` and ``buckets.py``), plus DCGM-exporter GPU gauges,
all in one private `CollectorRegistry` per server so that several simulators can share a process.
"""

from __future__ import annotations

import bisect
import itertools
import math
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from typing import cast

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from agentx_tui.sim.kvcache import Eviction
from agentx_tui.sim.offload import CpuTier
from agentx_tui.sim.profiles import SimProfile
from agentx_tui.sim.scheduler import SimRequest

# prometheus_client's own formatting of bucket bounds (an untyped function).
_go_float = cast(Callable[[float], str], floatToGoString)

# vLLM's own histogram bounds (v1/metrics/loggers.py), written compactly: they are data, not code.
# fmt: off
REQUEST_LATENCY_BUCKETS = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
    40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
)
TTFT_BUCKETS = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
    2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)
ITL_BUCKETS = (
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0,
    2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
)
# fmt: on
ITERATION_TOKENS_BUCKETS = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
REQUEST_NUM_PREEMPTIONS_BUCKETS = (1, 2, 3, 4, 5, 10, 20)  # v1/metrics/buckets.py
# vLLM's `KV_CACHE_RESIDENCY_BUCKETS` (v1/metrics/buckets.py) and the offloading connector's
# `TRANSFER_SIZE_BUCKETS` (distributed/kv_transfer/kv_connector/v1/offloading/metrics.py).
# fmt: off
KV_RESIDENCY_BUCKETS = (
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5,
    10, 20, 30, 60, 120, 300, 600, 1200, 1800,
)
# fmt: on
TRANSFER_SIZE_BUCKETS = (1e6, 5e6, 10e6, 20e6, 40e6, 60e6, 80e6, 100e6, 150e6, 200e6)
CACHE_HIT_SOURCES = ("device", "host", "p2p", "disk", "external_unspecified")
GIB = 1 << 30
FINISH_REASONS = ("stop", "length", "abort", "error", "repetition")


def request_tokens_buckets(max_model_len: int) -> list[float]:
    """vLLM's 1-2-5 series capped at ``max_model_len``."""
    out: list[float] = []
    exponent = 0
    while True:
        for mantissa in (1, 2, 5):
            value = mantissa * 10**exponent
            if value > max_model_len:
                return out
            out.append(value)
        exponent += 1


class VllmMetrics:
    def __init__(self, profile: SimProfile, registry: CollectorRegistry) -> None:
        labels = ["model_name", "engine"]
        values = (profile.model_id, "0")
        self.registry = registry
        self._model = profile.model_id

        def gauge(name: str, doc: str) -> Gauge:
            return Gauge(name, doc, labels, registry=registry).labels(*values)

        def counter(name: str, doc: str) -> Counter:
            return Counter(name, doc, labels, registry=registry).labels(*values)

        def histogram(name: str, doc: str, buckets: tuple[float, ...] | list[float]) -> Histogram:
            return Histogram(name, doc, labels, buckets=buckets, registry=registry).labels(*values)

        self.running = gauge("vllm:num_requests_running", "Number of requests in model execution batches.")
        self.waiting = gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.")
        by_reason = Gauge(
            "vllm:num_requests_waiting_by_reason",
            "Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; "
            "'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). "
            "Sum of all reasons equals vllm:num_requests_waiting.",
            [*labels, "reason"],
            registry=registry,
        )
        self.waiting_capacity = by_reason.labels(*values, "capacity")
        self.waiting_deferred = by_reason.labels(*values, "deferred")
        self.kv_usage = gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
        self.prefix_queries = counter(
            "vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens."
        )
        self.prefix_hits = counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.")
        self.external_queries = counter(
            "vllm:external_prefix_cache_queries",
            "External prefix cache queries from KV connector cross-instance cache sharing, in terms of number "
            "of queried tokens.",
        )
        self.external_hits = counter(
            "vllm:external_prefix_cache_hits",
            "External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of "
            "cached tokens.",
        )
        self.preemptions = counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.")
        self.prompt_tokens = counter("vllm:prompt_tokens", "Number of prefill tokens processed.")
        by_source = Counter(
            "vllm:prompt_tokens_by_source",
            "Number of prompt tokens by source.",
            [*labels, "source"],
            registry=registry,
        )
        self.prompt_computed = by_source.labels(*values, "local_compute")
        self.prompt_cache_hit = by_source.labels(*values, "local_cache_hit")
        self.prompt_external = by_source.labels(*values, "external_kv_transfer")
        self.prompt_cached = counter("vllm:prompt_tokens_cached", "Number of cached prompt tokens (local + external).")
        cached_by_source = Counter(
            "vllm:prompt_tokens_cached_by_source",
            "Prefix-cache hit tokens by the cache tier that supplied them: device (local HBM), host (offloaded "
            "to DRAM), disk, p2p (transferred from another vLLM instance) or external_unspecified. Counted at "
            "admission; sums to vllm:prefix_cache_hits + vllm:external_prefix_cache_hits.",
            [*labels, "source"],
            registry=registry,
        )
        tiers = {source: cached_by_source.labels(*values, source) for source in CACHE_HIT_SOURCES}
        self.cached_device, self.cached_host = tiers["device"], tiers["host"]
        self.generation_tokens = counter("vllm:generation_tokens", "Number of generation tokens processed.")
        # vLLM's estimated work (`--enable-mfu-metrics`, vllm/v1/metrics/perf.py): the simulator always
        # exports it, from the FLOPs and bytes of the steps its time model times (sim/timing.py).
        work = "(for Model Flops Utilization calculations)."
        self.estimated_flops = counter(
            "vllm:estimated_flops_per_gpu", f"Estimated number of floating point operations per GPU {work}"
        )
        self.estimated_read_bytes = counter(
            "vllm:estimated_read_bytes_per_gpu", f"Estimated number of bytes read from memory per GPU {work}"
        )
        self.estimated_write_bytes = counter(
            "vllm:estimated_write_bytes_per_gpu", f"Estimated number of bytes written to memory per GPU {work}"
        )
        success = Counter(
            "vllm:request_success",
            "Count of successfully processed requests.",
            [*labels, "finished_reason"],
            registry=registry,
        )
        self.success = {reason: success.labels(*values, reason) for reason in FINISH_REASONS}
        token_buckets = request_tokens_buckets(profile.max_model_len)
        self.req_prompt = histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", token_buckets)
        self.req_generation = histogram(
            "vllm:request_generation_tokens", "Number of generation tokens processed.", token_buckets
        )
        self.req_max_tokens = histogram(
            "vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", token_buckets
        )
        self.req_max_generation = histogram(
            "vllm:request_max_num_generation_tokens",
            "Histogram of maximum number of requested generation tokens.",
            token_buckets,
        )
        self.iteration_tokens = histogram(
            "vllm:iteration_tokens_total",
            "Histogram of number of tokens per engine_step.",
            ITERATION_TOKENS_BUCKETS,
        )
        self.ttft = histogram(
            "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", TTFT_BUCKETS
        )
        self.itl = FastHistogram(
            "vllm:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds.",
            dict(zip(labels, values, strict=True)),
            ITL_BUCKETS,
        )
        registry.register(self.itl)
        self.tpot = histogram(
            "vllm:request_time_per_output_token_seconds",
            "Histogram of time_per_output_token_seconds per request.",
            ITL_BUCKETS,
        )
        self.e2e = histogram(
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            REQUEST_LATENCY_BUCKETS,
        )
        self.queue_time = histogram(
            "vllm:request_queue_time_seconds",
            "Histogram of time spent in WAITING phase for request.",
            REQUEST_LATENCY_BUCKETS,
        )
        self.inference_time = histogram(
            "vllm:request_inference_time_seconds",
            "Histogram of time spent in RUNNING phase for request.",
            REQUEST_LATENCY_BUCKETS,
        )
        self.prefill_time = histogram(
            "vllm:request_prefill_time_seconds",
            "Histogram of time spent in PREFILL phase for request.",
            REQUEST_LATENCY_BUCKETS,
        )
        self.decode_time = histogram(
            "vllm:request_decode_time_seconds",
            "Histogram of time spent in DECODE phase for request.",
            REQUEST_LATENCY_BUCKETS,
        )
        self.req_preemptions = histogram(
            "vllm:request_num_preemptions",
            "Histogram of the number of times a request was preempted.",
            REQUEST_NUM_PREEMPTIONS_BUCKETS,
        )
        self.req_prefill_computed = histogram(
            "vllm:request_prefill_kv_computed_tokens",
            "Histogram of new KV tokens computed during prefill (excluding cached tokens).",
            token_buckets,
        )
        # Speculative decoding (v1/spec_decode/metrics.py): only when the engine speculates, as in vLLM.
        self._spec_counters: tuple[Counter, Counter, Counter] | None = None
        self._accepted_per_pos: list[Counter] = []
        if profile.spec is not None:
            self._spec_counters = (
                counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts."),
                counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens."),
                counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens."),
            )
            per_pos = Counter(
                "vllm:spec_decode_num_accepted_tokens_per_pos",
                "Accepted tokens per draft position.",
                [*labels, "position"],
                registry=registry,
            )
            positions = range(profile.spec.num_speculative_tokens)
            self._accepted_per_pos = [per_pos.labels(*values, str(pos)) for pos in positions]
        # With --kv-cache-metrics (the simulator records every block: its sample rate is 1).
        self.kv_block_lifetime = self._residency(
            "vllm:kv_block_lifetime_seconds", "Histogram of KV cache block lifetime from allocation to eviction."
        )
        self.kv_block_idle = self._residency(
            "vllm:kv_block_idle_before_evict_seconds", "Histogram of idle time before KV cache block eviction."
        )
        self.kv_block_reuse_gap = self._residency(
            "vllm:kv_block_reuse_gap_seconds",
            "Histogram of time gaps between consecutive KV cache block accesses. Only the most recent accesses "
            "are recorded (ring buffer).",
        )
        offloading = profile.num_cpu_blocks > 0
        info = {
            "block_size": str(profile.block_size),
            "cache_dtype": "auto",
            "enable_prefix_caching": "True",
            "gpu_memory_utilization": str(profile.gpu.scheduler.gpu_memory_utilization),
            "kv_cache_memory_bytes": str(profile.kv_cache_memory_bytes),
            "kv_cache_size_tokens": str(profile.num_gpu_blocks * profile.block_size),
            # vLLM's --kv-offloading-size is in GiB; its native backend offloads to CPU memory.
            "kv_offloading_backend": "native",
            "kv_offloading_size": str(profile.cpu_kv_bytes / GIB) if offloading else "None",
            "num_cpu_blocks": str(profile.num_cpu_blocks) if offloading else "None",
            "num_gpu_blocks": str(profile.num_gpu_blocks),
            "num_gpu_blocks_override": "None",
            "engine": "0",
        }
        Gauge(
            "vllm:cache_config_info",
            "Information of the LLMEngine CacheConfig",
            list(info),
            registry=registry,
        ).labels(**info).set(1)

    def step_work(self, flops: float, read_bytes: float, write_bytes: float) -> None:
        """One step's work on each GPU of the engine (its share of a tensor-parallel step)."""
        self.estimated_flops.inc(flops)
        self.estimated_read_bytes.inc(read_bytes)
        self.estimated_write_bytes.inc(write_bytes)

    def _residency(self, name: str, doc: str) -> FastHistogram:
        histogram = FastHistogram(
            name,
            doc + " Sampled metrics (controlled by --kv-cache-metrics-sample).",
            {"model_name": self._model, "engine": "0"},
            KV_RESIDENCY_BUCKETS,
        )
        self.registry.register(histogram)
        return histogram

    def observe_evictions(self, evictions: Sequence[Eviction]) -> None:
        for event in evictions:
            self.kv_block_lifetime.observe(event.lifetime_s)
            self.kv_block_idle.observe(event.idle_s)
            for gap in event.reuse_gaps_s:
                self.kv_block_reuse_gap.observe(gap)

    def count_drafts(self, drafts: int, draft_tokens: int, accepted: int, accepted_per_pos: Sequence[int]) -> None:
        """Verified drafts (speculative decoding): requests' verify steps, their draft tokens, those
        accepted, and those accepted at each position."""
        assert self._spec_counters is not None, "drafts counted by an engine that does not speculate"
        num_drafts, num_draft_tokens, num_accepted = self._spec_counters
        num_drafts.inc(drafts)
        num_draft_tokens.inc(draft_tokens)
        num_accepted.inc(accepted)
        for counter, count in zip(self._accepted_per_pos, accepted_per_pos, strict=True):
            if count:
                counter.inc(count)

    def prompt_counted(self, req: SimRequest) -> int:
        """A request's prompt tokens once its prefill is done (its first token), by where their KV came
        from: computed, the GPU cache ("local"), the CPU tier (a KV connector's: "external"). Returns
        the computed ones."""
        cached = req.num_cached_prompt or 0
        external = req.num_offloaded_prompt
        self.prompt_tokens.inc(req.num_prompt)
        self.prompt_cached.inc(cached)
        self.prompt_computed.inc(req.num_prompt - cached)
        self.prompt_cache_hit.inc(cached - external)
        self.prompt_external.inc(external)
        self.cached_device.inc(cached - external)
        self.cached_host.inc(external)
        return req.num_prompt - cached

    def request_finished(self, req: SimRequest) -> None:
        """A request's end, onto the per-request histograms, by vLLM's phases (v1/metrics/stats.py):
        queued = arrival → first scheduled (a preempted request's later schedulings do not count),
        prefill = first scheduled → first token, decode = first → last token, inference = first
        scheduled → last token; so TTFT = queued + prefill and inference = prefill + decode, exactly."""
        reason = req.finish_reason or "error"
        self.success[reason].inc()
        if req.first_token is None or req.finished_at is None:
            return
        last = req.last_token if req.last_token is not None else req.finished_at
        self.e2e.observe(req.finished_at - req.arrival)
        self.req_prompt.observe(req.num_prompt)
        self.req_generation.observe(req.num_output)
        self.req_max_tokens.observe(req.max_tokens)
        self.req_max_generation.observe(req.max_tokens)
        if req.first_scheduled is not None:
            self.queue_time.observe(req.first_scheduled - req.arrival)
            self.inference_time.observe(last - req.first_scheduled)
            self.prefill_time.observe(req.first_token - req.first_scheduled)
        self.decode_time.observe(last - req.first_token)
        self.req_preemptions.observe(req.num_preemptions)
        self.req_prefill_computed.observe(req.num_prompt - (req.num_cached_prompt or 0))
        if req.num_output > 1:
            self.tpot.observe((last - req.first_token) / (req.num_output - 1))


class FastHistogram(Collector):
    """A histogram observed once per generated token, exposed exactly as prometheus_client exposes one
    (name, labels, ``le`` strings, ``_created``). prometheus_client's takes a lock and increments two
    counters per observation; this is a bisect and two additions (the simulator runs on one thread, and
    /metrics is answered on it too), and `observe_n` records a whole step's worth of equal latencies."""

    def __init__(self, name: str, doc: str, labels: dict[str, str], buckets: Sequence[float]) -> None:
        self.name, self.doc, self.labels = name, doc, labels
        self.bounds = [float(b) for b in buckets]
        if self.bounds[-1] != math.inf:
            self.bounds.append(math.inf)
        self._le = [_go_float(b) for b in self.bounds]
        self.counts = [0] * len(self.bounds)
        self.sum = 0.0
        self.created = time.time()

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    def observe_n(self, value: float, n: int) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += n
        self.sum += value * n

    def collect(self) -> Iterator[HistogramMetricFamily]:
        family = HistogramMetricFamily(self.name, self.doc, labels=list(self.labels))
        cumulative = list(itertools.accumulate(self.counts))
        family.add_metric(list(self.labels.values()), list(zip(self._le, cumulative, strict=True)), self.sum)
        family.samples.append(Sample(f"{self.name}_created", dict(self.labels), self.created))
        yield family


class OffloadCollector(Collector):
    """The offloading connector's families for the CPU tier (vLLM's names, units and size buckets), read
    from the tier's totals at scrape time: bytes and seconds each way, each transfer's size, failed
    store allocations (never, here: a full tier drops its least recently used block)."""

    def __init__(self, profile: SimProfile, tier: CpuTier) -> None:
        self._tier = tier
        self._labels = {"model_name": profile.model_id, "engine": "0"}
        self._sizes = {
            "load": FastHistogram(
                "vllm:kv_offload_load_size",
                "Histogram of KV offload load operation size, in bytes.",
                self._labels,
                TRANSFER_SIZE_BUCKETS,
            ),
            "store": FastHistogram(
                "vllm:kv_offload_store_size",
                "Histogram of KV offload store operation size, in bytes.",
                self._labels,
                TRANSFER_SIZE_BUCKETS,
            ),
        }
        tier.loaded.observe = self._sizes["load"].observe
        tier.stored.observe = self._sizes["store"].observe

    def collect(self) -> Iterator[CounterMetricFamily | HistogramMetricFamily]:
        names, values = list(self._labels), list(self._labels.values())
        ways = (
            ("load", self._tier.loaded, "loaded from offload storage to GPU"),
            ("store", self._tier.stored, "stored from GPU to offload storage"),
        )
        for way, totals, words in ways:
            moved = CounterMetricFamily(f"vllm:kv_offload_{way}_bytes", f"Total bytes {words}.", labels=names)
            moved.add_metric(values, totals.bytes)
            yield moved
            took = CounterMetricFamily(
                f"vllm:kv_offload_{way}_time", f"Total {way} time ({words}), in seconds.", labels=names
            )
            took.add_metric(values, totals.seconds)
            yield took
            yield from self._sizes[way].collect()
        failures = CounterMetricFamily(
            "vllm:kv_offload_allocation_failure",
            "Number of KV offload store allocation attempts that failed.",
            labels=names,
        )
        failures.add_metric(values, 0.0)
        yield failures


class DcgmCollector(Collector):
    """DCGM-exporter gauges for the simulated GPU(s), computed at scrape time. Each engine instance
    has its own GPU UUIDs (`engine.new_gpu_uuids`); the ``Hostname`` label is this machine's."""

    _FIELDS = (
        ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "util_pct"),
        ("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", "mem_copy_util_pct"),
        ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", "power_w"),
        ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", "temp_c"),
        ("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", "sm_clock_mhz"),
        ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", "fb_used_mib"),
        ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", "fb_free_mib"),
    )
    _LABELS = ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname")
    _ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"

    def __init__(self, profile: SimProfile, gpu_uuids: Sequence[str], sample: Callable[[], dict[str, float]]) -> None:
        self._sample = sample
        host = socket.gethostname()
        # A tensor-parallel engine spreads its work evenly, so every GPU of it reads the same.
        self._series = [
            [str(i), gpu_uuid, f"00000000:{i:02X}:00.0", f"nvidia{i}", profile.gpu.name, host]
            for i, gpu_uuid in enumerate(gpu_uuids)
        ]

    def collect(self) -> Iterator[GaugeMetricFamily | Metric]:
        sample = self._sample()
        for name, doc, key in self._FIELDS:
            family = GaugeMetricFamily(name, doc, labels=self._LABELS)
            for values in self._series:
                family.add_metric(values, sample[key])
            yield family
        # A counter whose samples carry no `_total`, as dcgm-exporter writes it (and Prometheus stores it).
        energy = Metric(self._ENERGY, "Total energy consumption since boot (in mJ).", "counter")
        for values in self._series:
            energy.add_sample(self._ENERGY, dict(zip(self._LABELS, values, strict=True)), sample["energy_mj"])
        yield energy


class SimCollector(Collector):
    """The simulator's own health, beside vLLM's families: whether it keeps up with its model time."""

    def __init__(self, profile: SimProfile, lag: Callable[[], float], lost: Callable[[], float]) -> None:
        self._lag, self._lost = lag, lost
        self._values = [profile.model_id, "0"]

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        labels = ["model_name", "engine"]
        lag = GaugeMetricFamily(
            "agentx_sim:engine_lag_seconds",
            "Worst lag of the simulated engine behind wall time over the last 1-2 s.",
            labels=labels,
        )
        lag.add_metric(self._values, self._lag())
        yield lag
        lost = CounterMetricFamily(
            "agentx_sim:engine_lost_seconds",
            "Simulated-GPU time given up because the simulator fell too far behind wall time.",
            labels=labels,
        )
        lost.add_metric(self._values, self._lost())
        yield lost
        cpu = CounterMetricFamily("agentx_sim:cpu_seconds", "CPU time used by the simulator process.", labels=labels)
        cpu.add_metric(self._values, time.process_time())
        yield cpu
