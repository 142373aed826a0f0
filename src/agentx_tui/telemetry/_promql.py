"""Every PromQL string the Prometheus source sends, and the user's label selector merged into each.

Metric names come from the scraper's own name table (`_names`), so the direct scraper and the
Prometheus source accept the same servers. Prometheus stores a counter under its sample name, so the
table's family names get their ``_total`` (vLLM and SGLang both expose counters through
prometheus_client, which always writes it) and histograms their ``_bucket``.

Counted once (vLLM 0.9.2–0.10 expose some counters under both names): the candidates of one figure
are joined with PromQL's ``or``. ``or`` matches series on all their labels except the metric name
(and functions such as `rate()` drop the name anyway), so where a server exposes a figure under both
names with the same labels, only the first (newest) name's series is kept; series of other replicas,
which differ in ``instance``/``pod``, all pass. The raw instant read does the same per series in
Python (`_promfigures`).

Figures are grouped by the replica labels plus the data-parallel engine labels in PromQL, so one query
covers every replica: the number of queries per tick does not grow with the fleet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from agentx_tui.telemetry import _names

# Labels that tell replicas apart: `instance` for any scrape, `pod`/`namespace` where Kubernetes
# service discovery adds them. A label a series lacks groups as "" in PromQL, so any subset works.
REPLICA_LABELS: Final[tuple[str, ...]] = ("namespace", "pod", "instance")
ENGINE_LABELS: Final[tuple[str, ...]] = _names.ENGINE_LABELS
QUANTILE_LABEL: Final = "agentx_quantile"  # added by the quantile queries; no exporter uses it
FIGURE_LABEL: Final = "agentx_figure"  # which figure a series of a combined query answers
QUANTILES: Final[tuple[float, ...]] = (0.5, 0.9, 0.99)

# dcgm-exporter fields the direct reader (`dcgm.py`) reads, with the same units.
DCGM_FIELDS: Final[tuple[str, ...]] = (
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_FB_RESERVED",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_POWER_MGMT_LIMIT",
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_SM_CLOCK",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
)

# Counters read as window deltas (`increase`) rather than rates: the hit rate is Δhits/Δqueries.
DELTA_COUNTERS: Final[frozenset[str]] = _names.PREFIX_COUNTERS
# The deprecated prefix counters that may count KV blocks (see `_names.counts_blocks`).
BLOCK_COUNTING_CANDIDATES: Final[tuple[str, ...]] = tuple(sorted(_names.BLOCK_COUNTING_CANDIDATES))


class SelectorError(ValueError):
    """The --selector text is not a list of label matchers."""


_MATCHER = re.compile(
    r"""\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)\s*"""
)


@dataclass(frozen=True)
class Selector:
    """Label matchers to add to every series selector, as PromQL text (``a="b",c=~"d.*"``)."""

    matchers: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return "{" + ",".join(self.matchers) + "}"

    def series(self, name: str) -> str:
        """``name{matchers}``: one metric, selector merged. A name of the name table that picks one value
        of a label (``family{label=value}``, `_names.split_source`) gets that matcher too."""
        family, label, value = _names.split_source(name)
        matchers = (*((f'{label}="{value}"',) if label else ()), *self.matchers)
        return family + ("{" + ",".join(matchers) + "}" if matchers else "")

    def names(self, names: tuple[str, ...] | list[str]) -> str:
        """``{__name__=~"a|b",matchers}``: several metrics in one selector."""
        pattern = "|".join(names)  # metric names hold no regex metacharacters
        return "{" + ",".join((f'__name__=~"{pattern}"', *self.matchers)) + "}"


def parse_selector(text: str | None) -> Selector:
    """``{namespace="llm", job=~"vllm.*"}`` (braces optional) → `Selector`; raises `SelectorError`.

    Parsed rather than pasted, so a selector cannot change the shape of the queries it is merged into,
    and a mistake is said before anything runs.
    """
    body = (text or "").strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    elif "{" in body or "}" in body:
        raise SelectorError("a label selector is a list of label matchers in braces, with no metric name")
    matchers: list[str] = []
    pos = 0
    while pos < len(body) and body[pos:].strip():
        match = _MATCHER.match(body, pos)
        if match is None:
            raise SelectorError(f"cannot read a label matcher at character {pos + 1} of the selector")
        label, op, value = match.groups()
        if label == "__name__":
            raise SelectorError("the selector must not match on __name__: metric names are chosen by agentx-tui")
        matchers.append(f"{label}{op}{value}")
        pos = match.end()
        if pos < len(body):
            if body[pos] != ",":
                raise SelectorError(f"expected a comma at character {pos + 1} of the selector")
            pos += 1
    return Selector(tuple(matchers))


def duration(seconds: float) -> str:
    """A PromQL range in whole milliseconds (``10000ms``): exact, and valid in every Prometheus 2.x."""
    return f"{max(1, round(seconds * 1000))}ms"


def _by(labels: tuple[str, ...]) -> str:
    return "by (" + ", ".join(labels) + ")"


GROUP_BY_ENGINE: Final = _by(REPLICA_LABELS + ENGINE_LABELS)
GROUP_BY_REPLICA_LE: Final = _by((*REPLICA_LABELS, "le"))


def _with_suffix(candidate: str, suffix: str) -> str:
    """``family{label=value}`` + ``_total`` → ``family_total{label=value}``: the sample name Prometheus stores."""
    family, label, value = _names.split_source(candidate)
    return family + suffix + (f"{{{label}={value}}}" if label else "")


def counter_series_names(internal: str) -> tuple[str, ...]:
    """The sample names Prometheus stores a counter of the table under (a histogram's `_sum`/`_count` as
    they are, a counter with its `_total`)."""
    return tuple(_with_suffix(name, _names.counter_suffix(internal)) for name in _names.COUNTERS[internal])


def counter_window(internal: str, sel: Selector, window_s: float) -> str:
    """Per replica and engine (and per value of a per-value family's label): the window rate of a
    counter, or its increase for the prefix counters."""
    function = "increase" if internal in DELTA_COUNTERS else "rate"
    parts = []
    for name in counter_series_names(internal):
        part = f"{function}({sel.series(name)}[{duration(window_s)}])"
        picked = _names.picked_label(name)
        # Without the label it picks, a deprecated name's series matches its successor's in the `or`.
        parts.append(f"sum without ({picked}) ({part})" if picked else part)
    per_value = _names.PER_VALUE.get(internal)
    group = _by(REPLICA_LABELS + ENGINE_LABELS + (per_value,)) if per_value else GROUP_BY_ENGINE
    return f"sum {group} ({' or '.join(parts)})"


def histogram_quantiles(internal: str, sel: Selector, window_s: float) -> str:
    """Per replica: p50, p90 and p99 over the window, as `histogram_quantile` gives them, in one query.

    Each quantile is tagged with a label of its own so that the three results survive the ``or``.
    """
    rates = " or ".join(
        f"rate({sel.series(_with_suffix(n, '_bucket'))}[{duration(window_s)}])" for n in _names.HISTOGRAMS[internal]
    )
    buckets = f"sum {GROUP_BY_REPLICA_LE} ({rates})"
    return " or ".join(
        f'label_replace(histogram_quantile({q:g}, {buckets}), "{QUANTILE_LABEL}", "{q:g}", "", "")' for q in QUANTILES
    )


def _tagged(parts: dict[str, str]) -> str:
    """Several grouped queries as one: each answer tagged with its figure's name, so none collides
    in the ``or``. One HTTP request per tick instead of one per figure keeps the client's cost per
    tick small (each request costs this process a few ms of CPU; the load generator shares it)."""
    return " or ".join(f'label_replace({q}, "{FIGURE_LABEL}", "{name}", "", "")' for name, q in parts.items())


def window_counters(sel: Selector, window_s: float) -> str:
    """Every counter's `counter_window`, in one query."""
    return _tagged({name: counter_window(name, sel, window_s) for name in _names.COUNTERS})


def window_quantiles(sel: Selector, window_s: float) -> str:
    """Every histogram's `histogram_quantiles`, in one query."""
    return _tagged({name: histogram_quantiles(name, sel, window_s) for name in _names.HISTOGRAMS})


def _instant_names() -> tuple[str, ...]:
    names: list[str] = [_names.CACHE_CONFIG_INFO]
    for internal in _names.COUNTERS:
        names.extend(map(_names.family, counter_series_names(internal)))
    for candidates in _names.GAUGES.values():
        names.extend(map(_names.family, candidates))
    for internal in _names.HISTOGRAM_TOTAL_FIELDS.values():  # the run's residency observations, per bucket
        names.extend(_names.family(n) + "_bucket" for n in _names.HISTOGRAMS[internal])
    # SGLang's counters serve two figures, a labelled family several: list each name once.
    return tuple(dict.fromkeys(names))


INSTANT_NAMES: Final[tuple[str, ...]] = _instant_names()


def instant_series(sel: Selector) -> str:
    """Every counter, gauge, residency-histogram bucket and cache-config series as it is now, per series
    (run totals need them raw)."""
    return sel.names(INSTANT_NAMES)


def dcgm_series(sel: Selector) -> str:
    return sel.names(DCGM_FIELDS)


# Prometheus's clock, to measure its offset from ours (every query of a tick is evaluated at one instant).
PROMETHEUS_NOW: Final = "time()"


def targets_up(sel: Selector) -> str:
    """Prometheus's own health of each scrape target the selector matches."""
    return sel.series("up")


def samples_per_minute(sel: Selector) -> str:
    """The most samples any replica's running-requests gauge got in the last 2 minutes, per minute:
    the scrape interval where the targets API does not say it (Thanos, Mimir)."""
    names = _names.GAUGES["running"]
    return f"max(count_over_time({sel.names(names)}[2m])) / 2"
