"""Prometheus text → `MetricsPage`: the figures of one scrape in the internal vocabulary (pure, no I/O).

The text is parsed by `prometheus_client`'s own parser; everything the parser or a strange value
can throw becomes a `PageError`, so no page, however malformed, escapes as an exception.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

from agentx_tui.telemetry import _names
from agentx_tui.telemetry._names import PageFlavor

# (internal name, engine, the other labels) — one Prometheus series.
SeriesKey = tuple[str, str, tuple[tuple[str, str], ...]]


class PageError(Exception):
    """The text is not a Prometheus exposition the parser accepts."""


@dataclass(frozen=True)
class Histogram:
    """One histogram series: cumulative bucket counts by upper bound (``+Inf`` included)."""

    buckets: tuple[tuple[float, float], ...]


@dataclass
class MetricsPage:
    """One scrape of a /metrics page, parsed: its figures by internal name, per engine."""

    flavor: PageFlavor | None = None
    counters: dict[SeriesKey, float] = field(default_factory=dict)
    histograms: dict[SeriesKey, Histogram] = field(default_factory=dict)
    # internal gauge name → engine → value (running/waiting summed, KV usage averaged within an engine)
    gauges: dict[str, dict[str, float]] = field(default_factory=dict)
    # internal counter names whose source counted KV blocks, not tokens
    block_counted: set[str] = field(default_factory=set)
    block_size: int | None = None
    num_gpu_blocks: int | None = None
    prefix_caching_enabled: bool | None = None
    # vLLM's native KV offloading (`--kv-offloading-size` GiB, `--kv-offloading-backend`), from
    # `cache_config_info`; the size summed over engines. None where the page does not say.
    kv_offloading_backend: str | None = None
    kv_offloading_size_gib: float | None = None
    kv_offloading_configured: bool | None = None  # the page says whether a size was set
    # every sample on the page by sample name, for other readers of the same page (DCGM)
    samples: dict[str, list[tuple[dict[str, str], float]]] = field(default_factory=dict)

    @property
    def engines(self) -> list[str]:
        seen = {key[1] for key in self.counters} | {key[1] for key in self.histograms}
        for per_engine in self.gauges.values():
            seen.update(per_engine)
        return sorted(seen, key=_engine_order)


def _engine_order(engine: str) -> tuple[int, str]:
    return (int(engine), "") if engine.isascii() and engine.isdigit() else (1 << 30, engine)


@dataclass
class _Raw:
    samples: dict[str, list[tuple[dict[str, str], float]]]
    help: dict[str, str]
    types: dict[str, str]


def _wanted(name: str) -> bool:
    return name in _names.WANTED_NAMES or name.startswith(_names.WANTED_PREFIXES)


# A tiny-model vLLM page has ~130 lines the scraper reads per engine; the parser costs ~25 µs a line,
# so this bounds one parse to about half a second even for a page crafted to be all relevant lines
# (and still holds ~150 engines of a real page).
MAX_RELEVANT_LINES = 20_000


def _relevant_lines(text: str) -> str:
    """Only the lines of families the scraper reads.

    A vLLM page is mostly histograms nobody here reads (and process/HTTP metrics); the parser is
    pure Python, so dropping them first makes a scrape about 3× cheaper. Parsing stays the parser's:
    this only looks at the name each line starts with.
    """
    kept: list[str] = []
    for line in text.splitlines():
        if len(kept) > MAX_RELEVANT_LINES:
            raise PageError(f"the page has over {MAX_RELEVANT_LINES} metric lines")
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE") and _wanted(parts[2]):
                kept.append(line)
        elif _wanted(_sample_name(line)):
            kept.append(line)
    return "\n".join(kept) + "\n"


def _sample_name(line: str) -> str:
    """The metric name a sample line starts with, or "" for a line that has none (`{`, blanks)."""
    words = line.split("{", 1)[0].split(None, 1)
    return words[0] if words else ""


def _read(text: str) -> _Raw:
    samples: dict[str, list[tuple[dict[str, str], float]]] = defaultdict(list)
    helps: dict[str, str] = {}
    types: dict[str, str] = {}
    relevant = _relevant_lines(text)
    try:
        for family in text_string_to_metric_families(relevant):
            helps[family.name] = family.documentation or ""
            types[family.name] = family.type
            for sample in family.samples:
                value = float(sample.value)
                if math.isfinite(value):
                    samples[sample.name].append((dict(sample.labels), value))
    except Exception as exc:  # the parser raises ValueError, IndexError, TypeError… on bad input
        raise PageError(f"unparseable /metrics ({type(exc).__name__})") from exc
    return _Raw(dict(samples), helps, types)


def _split(labels: dict[str, str], drop: tuple[str, ...] = ()) -> tuple[str, tuple[tuple[str, str], ...]]:
    engine = next((labels[name] for name in _names.ENGINE_LABELS if name in labels), "0")
    rest = tuple(sorted((k, v) for k, v in labels.items() if k not in _names.ENGINE_LABELS and k not in drop))
    return engine, rest


Samples = list[tuple[dict[str, str], float]]


def _samples(raw: _Raw, candidate: str, suffixes: tuple[str, ...]) -> Samples:
    """The samples of `candidate` (a family, or one label value of it: `_names.split_source`) under the
    first of `suffixes` the page has."""
    name = _names.family(candidate)
    for suffix in suffixes:
        found = raw.samples.get(name + suffix)
        if found:
            return [(labels, value) for labels, value in found if _names.picks(candidate, labels)]
    return []


def _first_present(raw: _Raw, candidates: tuple[str, ...], suffixes: tuple[str, ...]) -> tuple[str, Samples] | None:
    for candidate in candidates:
        found = _samples(raw, candidate, suffixes)
        if found:
            return candidate, found
    return None


def _parse_counters(raw: _Raw, page: MetricsPage, engine_version: str | None) -> None:
    for internal, candidates in _names.COUNTERS.items():
        # A typed counter's samples carry `_total`; an untyped page may spell the bare name. A
        # histogram's `_sum` and `_count` are read by their own sample names.
        present = _first_present(raw, candidates, tuple(dict.fromkeys((_names.counter_suffix(internal), ""))))
        if present is None:
            continue
        source, samples = present
        help_text = raw.help.get(source) or raw.help.get(source + "_total", "")
        if internal in _names.PREFIX_COUNTERS and _names.counts_blocks(source, help_text, engine_version):
            page.block_counted.add(internal)
        # The label a candidate picks names its figure, as a per-value family's label names each counter.
        dropped = tuple(label for label in (_names.picked_label(source), _names.PER_VALUE.get(internal)) if label)
        for labels, value in samples:
            name = _names.per_value_name(internal, labels)
            if name is None:
                continue
            engine, rest = _split(labels, drop=dropped)
            key = (name, engine, rest)
            page.counters[key] = page.counters.get(key, 0.0) + value


def _parse_gauges(raw: _Raw, page: MetricsPage) -> None:
    for internal, candidates in _names.GAUGES.items():
        present = _first_present(raw, candidates, ("",))
        if present is None:
            continue
        grouped: dict[str, list[float]] = defaultdict(list)
        for labels, value in present[1]:
            grouped[_split(labels)[0]].append(value)
        average = internal in ("kv_usage", "hit_rate_gauge")
        page.gauges[internal] = {
            engine: (sum(values) / len(values) if average else sum(values)) for engine, values in grouped.items()
        }


def _parse_histograms(raw: _Raw, page: MetricsPage) -> None:
    for internal, candidates in _names.HISTOGRAMS.items():
        present = _first_present(raw, candidates, ("_bucket",))
        if present is None:
            continue
        grouped: dict[tuple[str, tuple[tuple[str, str], ...]], dict[float, float]] = defaultdict(dict)
        for labels, value in present[1]:
            try:
                upper = float(labels["le"])
            except (KeyError, ValueError):
                continue
            if math.isnan(upper):
                continue
            buckets = grouped[_split(labels, drop=("le",))]
            buckets[upper] = buckets.get(upper, 0.0) + value
        for (engine, rest), buckets in grouped.items():
            if math.inf in buckets:
                page.histograms[(internal, engine, rest)] = Histogram(tuple(sorted(buckets.items())))


def _label_int(labels: dict[str, str], name: str) -> int | None:
    try:
        return int(labels[name])
    except (KeyError, ValueError):
        return None


def _parse_cache_config(raw: _Raw, page: MetricsPage) -> None:
    infos = raw.samples.get(_names.CACHE_CONFIG_INFO, [])
    if not infos:
        return
    page.block_size = _label_int(infos[0][0], "block_size")
    blocks = [_label_int(labels, "num_gpu_blocks") for labels, _ in infos]
    page.num_gpu_blocks = None if any(b is None for b in blocks) else sum(b for b in blocks if b is not None)
    enabled = infos[0][0].get("enable_prefix_caching", "").lower()
    page.prefix_caching_enabled = {"true": True, "false": False}.get(enabled)
    if all("kv_offloading_size" in labels for labels, _ in infos):
        sizes = [_label_float(labels, "kv_offloading_size") for labels, _ in infos]
        page.kv_offloading_configured = any(size is not None for size in sizes)
        page.kv_offloading_size_gib = sum(s for s in sizes if s is not None) if page.kv_offloading_configured else None
        page.kv_offloading_backend = infos[0][0].get("kv_offloading_backend") or None


def _label_float(labels: dict[str, str], name: str) -> float | None:
    """A number label; None for vLLM's "None" (not set) or anything else that is not a finite number."""
    try:
        value = float(labels[name])
    except (KeyError, ValueError):
        return None
    return value if math.isfinite(value) else None


def parse_page(text: str, engine_version: str | None = None) -> MetricsPage:
    """Parse one /metrics page; raises `PageError` (only) when the text cannot be parsed."""
    raw = _read(text)
    page = MetricsPage(samples=raw.samples)
    _parse_counters(raw, page, engine_version)
    _parse_gauges(raw, page)
    _parse_histograms(raw, page)
    _parse_cache_config(raw, page)
    flavors = {_names.flavor_of(name) for name in raw.samples} - {None}
    if flavors:
        page.flavor = "vllm" if "vllm" in flavors else "sglang"
    return page
