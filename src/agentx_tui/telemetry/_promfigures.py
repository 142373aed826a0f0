"""Prometheus query answers → one `EndpointReading` per replica (pure: no I/O, no clock).

The instant read (every counter, gauge and cache-config series as it is now) says which replicas
exist and gives their gauges, lifetime hit rate and, through `RunTotals`, their run totals. The
window queries (grouped by replica and engine in PromQL) give rates, Δhits/Δqueries and latency
percentiles. A replica is identified by its ``namespace``/``pod``/``instance`` labels (`ReplicaKey`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from agentx_tui.snapshot import (
    BucketCounts,
    EndpointReading,
    EndpointTotals,
    EngineReading,
    Flavor,
    Percentiles,
)
from agentx_tui.snapshot.stat import ratio
from agentx_tui.telemetry import _names
from agentx_tui.telemetry._figures import cache_window, per_value_totals, server_time_window
from agentx_tui.telemetry._names import TOTAL_FIELDS
from agentx_tui.telemetry._promapi import Vector
from agentx_tui.telemetry._promql import ENGINE_LABELS, FIGURE_LABEL, QUANTILE_LABEL, REPLICA_LABELS
from agentx_tui.telemetry._window import Buckets, buckets_step, counter_step

ReplicaKey = tuple[str, ...]  # values of REPLICA_LABELS, "" where a series lacks the label
Rest = tuple[tuple[str, str], ...]  # a series' other labels, sorted
SeriesKey = tuple[str, str, Rest]  # (internal name, engine, rest): one counter series of one replica

_IDENTITY = frozenset({"__name__", *REPLICA_LABELS, *ENGINE_LABELS})
_AVERAGED = frozenset({"kv_usage", "hit_rate_gauge"})  # fractions: mean over series, not sum
_RATE_FIELDS = {
    "prompt_tokens_per_s": "prompt_tokens",
    "generation_tokens_per_s": "generation_tokens",
    "cached_prompt_tokens_per_s": "cached_prompt_tokens",
    "preemptions_per_s": "preemptions",
    "requests_per_s": "requests_finished",
    "estimated_flops_per_s": "estimated_flops",
    "estimated_read_bytes_per_s": "estimated_read_bytes",
    "estimated_write_bytes_per_s": "estimated_write_bytes",
}


def _sources(
    table: Mapping[str, tuple[str, ...]], suffix: Callable[[str], str]
) -> dict[str, list[tuple[str, int, str]]]:
    """series name → [(internal name, preference, the candidate)]; lower preference wins when a series
    has both. A candidate that picks one label value (`_names.split_source`) takes only its series.
    `suffix`: what an internal name's series add to their names in the table (`_total`…)."""
    out: dict[str, list[tuple[str, int, str]]] = defaultdict(list)
    for internal, candidates in table.items():
        for rank, name in enumerate(candidates):
            out[_names.family(name) + suffix(internal)].append((internal, rank, name))
    return dict(out)


_COUNTER_SOURCES = _sources(_names.COUNTERS, _names.counter_suffix)
_GAUGE_SOURCES = _sources(_names.GAUGES, lambda _internal: "")
_BUCKET_SOURCES = {
    _names.family(name) + "_bucket": internal
    for internal in _names.HISTOGRAM_TOTAL_FIELDS.values()
    for name in _names.HISTOGRAMS[internal]
}


def replica_key(labels: Mapping[str, str]) -> ReplicaKey:
    return tuple(labels.get(name, "") for name in REPLICA_LABELS)


def replica_url(key: ReplicaKey) -> str:
    """What the dashboard shows for a replica: ``namespace/pod`` where Kubernetes labels it, else
    its scrape ``instance``."""
    labels = dict(zip(REPLICA_LABELS, key, strict=True))
    if labels["pod"]:
        return f"{labels['namespace']}/{labels['pod']}" if labels["namespace"] else labels["pod"]
    return labels["instance"] or "(unlabelled replica)"


def engine_of(labels: Mapping[str, str]) -> str:
    return next((labels[name] for name in ENGINE_LABELS if labels.get(name)), "0")


def _engine_order(engine: str) -> tuple[int, str]:
    return (int(engine), "") if engine.isascii() and engine.isdigit() else (1 << 30, engine)


@dataclass
class ReplicaRead:
    """One replica's series in one instant read, in the internal vocabulary."""

    labels: dict[str, str]  # the labels of one of its series (for mapping GPUs to it)
    flavor: Flavor = "unknown"
    models: set[str] = field(default_factory=set)
    counters: dict[SeriesKey, float] = field(default_factory=dict)
    histograms: dict[SeriesKey, Buckets] = field(default_factory=dict)  # rest without ``le``
    gauges: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # internal → engine → values
    old_prefix_names: bool = False  # its prefix counters are the deprecated gpu_* ones
    block_size: int | None = None
    num_gpu_blocks: int | None = None
    prefix_caching_enabled: bool | None = None

    @property
    def engines(self) -> list[str]:
        seen = {key[1] for key in self.counters}
        for per_engine in self.gauges.values():
            seen.update(per_engine)
        return sorted(seen, key=_engine_order)

    def gauge(self, internal: str, engine: str | None = None) -> float | None:
        per_engine = self.gauges.get(internal)
        if not per_engine or (engine is not None and engine not in per_engine):
            return None
        engines = [engine] if engine is not None else list(per_engine)
        if internal in _AVERAGED:  # mean within an engine, then over engines, like the direct scraper
            means = [sum(per_engine[e]) / len(per_engine[e]) for e in engines]
            return sum(means) / len(means)
        return sum(sum(per_engine[e]) for e in engines)

    @property
    def estimating_engines(self) -> int | None:
        """Engines exporting vLLM's estimated-work counters (None: none does), as the scraper counts them."""
        engines = {engine for (name, engine, _) in self.counters if name in _names.ESTIMATED_WORK}
        return len(engines) or None

    @property
    def accepted_positions(self) -> tuple[str, ...]:
        """Its accepted-tokens-per-position counters, in position order (none: no speculation)."""
        return _names.positions((key[0] for key in self.counters), _names.ACCEPTED_AT)

    def lifetime(self, internal: str) -> float | None:
        values = [v for (name, _, _), v in self.counters.items() if name == internal]
        return sum(values) if values else None


def _label_int(labels: Mapping[str, str], name: str) -> int | None:
    try:
        return int(labels[name])
    except (KeyError, ValueError):
        return None


def _cache_config(read: ReplicaRead, infos: list[dict[str, str]]) -> None:
    if not infos:
        return
    read.block_size = _label_int(infos[0], "block_size")
    blocks = [_label_int(labels, "num_gpu_blocks") for labels in infos]
    read.num_gpu_blocks = None if any(b is None for b in blocks) else sum(b for b in blocks if b is not None)
    read.prefix_caching_enabled = {"true": True, "false": False}.get(infos[0].get("enable_prefix_caching", "").lower())


def _add_bucket(read: ReplicaRead, internal: str, labels: Mapping[str, str], value: float) -> None:
    try:
        upper = float(labels["le"])  # float("+Inf") is infinity
    except (KeyError, ValueError):
        return
    rest = tuple(sorted((k, v) for k, v in labels.items() if k not in _IDENTITY and k != "le"))
    read.histograms.setdefault((internal, engine_of(labels), rest), {})[upper] = value


def read_instant(vector: Vector) -> dict[ReplicaKey, ReplicaRead]:
    """The instant read, per replica. Where one series is exposed under two names of one figure (old
    and new vLLM names, same labels), only the preferred name's value is kept: counted once."""
    reads: dict[ReplicaKey, ReplicaRead] = {}
    infos: dict[ReplicaKey, list[dict[str, str]]] = defaultdict(list)
    # (replica, kind, internal, labels without name) → (preference, source name, value)
    chosen: dict[tuple[ReplicaKey, str, str, Rest], tuple[int, str, float]] = {}
    for labels, value in vector:
        name = labels.get("__name__", "")
        key = replica_key(labels)
        read = reads.get(key)
        if read is None:
            read = reads[key] = ReplicaRead(labels=labels)
        flavor = _names.flavor_of(name)
        if flavor is not None and read.flavor != "vllm":
            read.flavor = flavor
        if labels.get("model_name"):
            read.models.add(labels["model_name"])
        if name == _names.CACHE_CONFIG_INFO:
            infos[key].append(labels)
            continue
        if name in _BUCKET_SOURCES:
            _add_bucket(read, _BUCKET_SOURCES[name], labels, value)
            continue
        for kind, sources in (("counter", _COUNTER_SOURCES), ("gauge", _GAUGE_SOURCES)):
            for internal, rank, candidate in sources.get(name, ()):
                if not _names.picks(candidate, labels):
                    continue
                picked = _names.picked_label(candidate)
                unnamed = tuple(sorted((k, v) for k, v in labels.items() if k not in ("__name__", picked)))
                slot = (key, kind, internal, unnamed)
                if slot not in chosen or rank < chosen[slot][0]:
                    chosen[slot] = (rank, name, value)
    for (key, kind, internal, unnamed), (_, name, value) in chosen.items():
        read = reads[key]
        labels = dict(unnamed)
        engine = engine_of(labels)
        if kind == "gauge":
            read.gauges.setdefault(internal, {}).setdefault(engine, []).append(value)
            continue
        counted = _names.per_value_name(internal, labels)  # a per-value family: one counter per value
        if counted is None:
            continue
        per_value = _names.PER_VALUE.get(internal)
        rest = tuple((k, v) for k, v in unnamed if k not in _IDENTITY and k != per_value)
        read.counters[(counted, engine, rest)] = value
        if internal in _names.PREFIX_COUNTERS and name.removesuffix("_total") in _names.BLOCK_COUNTING_CANDIDATES:
            read.old_prefix_names = True
    for key, labels_list in infos.items():
        _cache_config(reads[key], labels_list)
    return reads


class RunTotals:
    """Reset-aware run totals per counter series, from successive instant reads (as `_window` does
    for pages): the first read is the run's start; each later read adds ``new - old``, or ``new``
    where the counter went down (a restart); a series first seen later started at zero, so all of
    its value counts. A series that vanishes (its target is down) keeps what it had added."""

    def __init__(self) -> None:
        self._started = False
        self._last: dict[tuple[ReplicaKey, SeriesKey], float] = {}
        self._added: dict[ReplicaKey, dict[str, float]] = defaultdict(dict)
        self._last_buckets: dict[tuple[ReplicaKey, SeriesKey], Buckets] = {}
        self._added_buckets: dict[ReplicaKey, dict[str, Buckets]] = defaultdict(dict)

    @property
    def started(self) -> bool:
        return self._started

    def add(self, reads: Mapping[ReplicaKey, ReplicaRead]) -> None:
        for replica, read in reads.items():
            added = self._added[replica]
            for series, value in read.counters.items():
                slot = (replica, series)
                step = counter_step(self._last.get(slot), value) if self._started else 0.0
                added[series[0]] = added.get(series[0], 0.0) + step
                self._last[slot] = value
            self._add_histograms(replica, read)
        self._started = True

    def _add_histograms(self, replica: ReplicaKey, read: ReplicaRead) -> None:
        """As for counters, per histogram series: any bucket going down means it was reset."""
        added = self._added_buckets[replica]
        for series, buckets in read.histograms.items():
            slot = (replica, series)
            # Every bound from the start, at zero: a histogram with nothing observed yet is known, empty.
            acc = added.setdefault(series[0], dict.fromkeys(buckets, 0.0))
            if self._started:
                for upper, count in buckets_step(self._last_buckets.get(slot), buckets).items():
                    acc[upper] = acc.get(upper, 0.0) + count
            self._last_buckets[slot] = dict(buckets)

    def of(self, replica: ReplicaKey, internal: str) -> float | None:
        return self._added.get(replica, {}).get(internal)

    def per_value(self, replica: ReplicaKey, internal: str) -> tuple[str, ...]:
        """The counters of a per-value family this replica has had, in value order (`_names.positions`)."""
        return _names.positions(self._added.get(replica, {}), internal)

    def buckets_of(self, replica: ReplicaKey, internal: str) -> BucketCounts | None:
        buckets = self._added_buckets.get(replica, {}).get(internal)
        return BucketCounts.of(buckets.items()) if buckets else None


class WindowAnswers:
    """The two window queries' answers (`_promql.window_counters`, `window_quantiles`), indexed by
    figure and replica once, so assembling N replicas stays linear. A query that failed this tick is
    None: its figures are None."""

    def __init__(self, counters: Vector | None = None, quantiles: Vector | None = None) -> None:
        self._counters = _index(counters)
        self._quantiles = _index(quantiles)

    def counter(self, internal: str, replica: ReplicaKey, engine: str | None = None) -> float | None:
        rows = self._counters.get((internal, replica)) if self._counters is not None else None
        if rows is None:
            return None
        values = [v for labels, v in rows if engine is None or engine_of(labels) == engine]
        return sum(values) if values else None

    def percentiles(self, internal: str, replica: ReplicaKey) -> Percentiles:
        rows = self._quantiles.get((internal, replica), []) if self._quantiles is not None else []
        by_q = {labels.get(QUANTILE_LABEL): v for labels, v in rows}
        return Percentiles(p50=by_q.get("0.5"), p90=by_q.get("0.9"), p99=by_q.get("0.99"))


def _index(vector: Vector | None) -> dict[tuple[str, ReplicaKey], Vector] | None:
    """By figure (a per-value family's answers by `internal:value`, as the instant read names them) and
    replica."""
    if vector is None:
        return None
    out: dict[tuple[str, ReplicaKey], Vector] = defaultdict(list)
    for labels, value in vector:
        figure = _names.per_value_name(labels.get(FIGURE_LABEL, ""), labels)
        if figure is not None:
            out[(figure, replica_key(labels))].append((labels, value))
    return dict(out)


def _hit_rate(read: ReplicaRead, answers: WindowAnswers, replica: ReplicaKey, engine: str | None) -> float | None:
    rate = ratio(answers.counter("prefix_hits", replica, engine), answers.counter("prefix_queries", replica, engine))
    if rate is None and read.lifetime("prefix_hits") is None:
        rate = read.gauge("hit_rate_gauge", engine)  # SGLang without a cached-token counter
    return rate


def totals_of(replica: ReplicaKey, totals: RunTotals, block_size: int | None, *, blocks: bool) -> EndpointTotals:
    values: dict[str, float | None] = {}
    for field_name, internal in TOTAL_FIELDS.items():
        value = totals.of(replica, internal)
        if value is not None and blocks and internal in _names.PREFIX_COUNTERS:
            value = value * block_size if block_size else None
        values[field_name] = value
    residency = {name: totals.buckets_of(replica, internal) for name, internal in _names.HISTOGRAM_TOTAL_FIELDS.items()}
    by_value = {
        name: per_value_totals([totals.of(replica, counter) for counter in totals.per_value(replica, internal)])
        for name, internal in _names.PER_VALUE_TOTAL_FIELDS.items()
    }
    return EndpointTotals(**values, **residency, **by_value)


def replica_figures(
    replica: ReplicaKey, read: ReplicaRead, answers: WindowAnswers, totals: EndpointTotals
) -> EndpointReading:
    model = next(iter(read.models)) if len(read.models) == 1 else None
    engines = read.engines
    accepted_at = read.accepted_positions
    rows: tuple[EngineReading, ...] = ()
    if len(engines) >= 2:
        rows = tuple(_engine_row(read, answers, replica, engine, accepted_at) for engine in engines)
    update: dict[str, object] = {name: answers.counter(internal, replica) for name, internal in _RATE_FIELDS.items()}
    update.update(
        running=read.gauge("running"),
        waiting=read.gauge("waiting"),
        kv_cache_usage=read.gauge("kv_usage"),
        block_size=read.block_size,
        num_gpu_blocks=read.num_gpu_blocks,
        prefix_caching_enabled=read.prefix_caching_enabled,
        prefix_hit_rate_window=_hit_rate(read, answers, replica, None),
        prefix_hit_rate_lifetime=ratio(read.lifetime("prefix_hits"), read.lifetime("prefix_queries")),
        ttft=answers.percentiles("ttft", replica),
        itl=answers.percentiles("itl", replica),
        e2e=answers.percentiles("e2e", replica),
        queue_time=answers.percentiles("queue_time", replica),
        estimating_engines=read.estimating_engines,
        kv_block_idle_before_evict=answers.percentiles("kv_block_idle_before_evict", replica),
        kv_block_reuse_gap=answers.percentiles("kv_block_reuse_gap", replica),
        kv_block_lifetime=answers.percentiles("kv_block_lifetime", replica),
        waiting_capacity=read.gauge("waiting_capacity"),
        waiting_deferred=read.gauge("waiting_deferred"),
        **cache_window(lambda name: answers.counter(name, replica)),
        **server_time_window(lambda name: answers.counter(name, replica), accepted_at),
        totals=totals,
        engines=rows,
    )
    identity = EndpointReading(url=replica_url(replica), up=True, status="up", flavor=read.flavor, model=model)
    return identity.model_copy(update=update)


def _engine_row(
    read: ReplicaRead, answers: WindowAnswers, replica: ReplicaKey, engine: str, accepted_at: tuple[str, ...]
) -> EngineReading:
    phases = server_time_window(lambda name: answers.counter(name, replica, engine), accepted_at)
    return EngineReading(
        engine=engine,
        running=read.gauge("running", engine),
        waiting=read.gauge("waiting", engine),
        kv_cache_usage=read.gauge("kv_usage", engine),
        prefix_hit_rate_window=_hit_rate(read, answers, replica, engine),
        generation_tokens_per_s=answers.counter("generation_tokens", replica, engine),
        server_queue_s_mean=phases["server_queue_s_mean"],
        spec_acceptance_length=phases["spec_acceptance_length"],
    )
