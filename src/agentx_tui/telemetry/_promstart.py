"""What `PrometheusSource.start()` reads once: the server's version, the replicas' scrape interval,
the clock offset, the units of deprecated prefix counters; and its errors as the project's own."""

from __future__ import annotations

import re
import time
from typing import Final

from agentx_tui.errors import TargetError, UsageError
from agentx_tui.telemetry import _promql
from agentx_tui.telemetry._promapi import PromApi, PromError
from agentx_tui.telemetry._promfigures import ReplicaKey, replica_key

PROMETHEUS_TOKEN_ENV: Final = "AGENTX_PROMETHEUS_TOKEN"
DEFAULT_SCRAPE_INTERVAL_S: Final = 60.0  # Prometheus's own default, when nothing says otherwise
_FATAL: Final = ("auth", "unreachable", "timeout")  # kinds no fallback can get round
_TOKEN_HINT: Final = (
    f"Set {PROMETHEUS_TOKEN_ENV} to a bearer token, or pass --prometheus-header 'Name: value' "
    "(e.g. X-Scope-OrgID for a multi-tenant backend)."
)


def start_error(exc: PromError) -> TargetError | UsageError:
    """A start-up failure as the error the command line prints: one sentence plus a hint."""
    if exc.kind == "auth":
        return TargetError(exc.sentence + ".", _TOKEN_HINT)
    if exc.kind == "query":
        return UsageError(exc.sentence + ".", 'Check --selector: it takes label matchers, e.g. {namespace="llm"}.')
    if exc.kind == "not_prometheus":
        return TargetError(exc.sentence + ".", "Pass the Prometheus base URL (the one that serves /api/v1/query).")
    return TargetError(exc.sentence + ".", "Check the --prometheus URL and that Prometheus is running.")


async def no_series_error(api: PromApi, sel: _promql.Selector, timeout: float) -> TargetError:
    try:
        targets = len(await api.query(_promql.targets_up(sel), timeout))
    except PromError:
        targets = 0
    matched = f"{targets} scrape target{'s' if targets != 1 else ''} match it" if targets else "no target matches it"
    return TargetError(
        f"Prometheus at {api.shown} has no vLLM or SGLang series matching {sel.text} ({matched}).",
        "Check --selector, and that Prometheus scrapes the servers' /metrics.",
    )


async def version(api: PromApi, timeout: float) -> str | None:
    try:
        data = await api.get("/api/v1/status/buildinfo", {}, timeout)
    except PromError as exc:
        if exc.kind in ("not_prometheus", "server"):
            return None  # Thanos/Mimir variants without buildinfo: the queries decide
        raise
    return str(data.get("version")) if isinstance(data, dict) and data.get("version") else None


async def clock_offset(api: PromApi, timeout: float) -> float:
    """Prometheus's clock minus ours (to half the round trip), so that a tick's evaluation instant is
    Prometheus's now even where the clocks differ."""
    before = time.time()
    answer = await api.query(_promql.PROMETHEUS_NOW, timeout)
    after = time.time()
    return answer[0][1] - (before + after) / 2 if answer else 0.0


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)")
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def parse_duration(text: str) -> float | None:
    """A Prometheus duration (``15s``, ``1m30s``, ``500ms``) in seconds; None when it is not one."""
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    seconds = sum(float(n) * _UNIT_S[u] for n, u in parts)
    return seconds if seconds > 0 else None


async def scrape_interval(
    api: PromApi, sel: _promql.Selector, replicas: set[ReplicaKey], timeout: float
) -> tuple[float, str]:
    """The largest scrape interval of the replicas' targets, and where it was read: the targets API
    (Prometheus); else the spacing of their samples (Thanos, Mimir: no targets API); else
    Prometheus's default."""
    try:
        data = await api.get("/api/v1/targets", {"state": "active"}, timeout)
        targets = data.get("activeTargets", []) if isinstance(data, dict) else []
        intervals = [
            parse_duration(str(t.get("scrapeInterval", "")))
            for t in targets
            if isinstance(t, dict) and replica_key(t.get("labels") or {}) in replicas
        ]
        known = [i for i in intervals if i is not None]
        if known:
            return max(known), "the targets API"
    except PromError as exc:
        if exc.kind in _FATAL:
            raise
    per_minute = await api.query(_promql.samples_per_minute(sel), timeout)
    if per_minute and per_minute[0][1] >= 1:
        return 60.0 / per_minute[0][1], "the spacing of the samples"
    return DEFAULT_SCRAPE_INTERVAL_S, "Prometheus's default (nothing said otherwise)"


async def block_counted(api: PromApi, sel: _promql.Selector, timeout: float) -> set[ReplicaKey | None]:
    """Replicas whose deprecated ``gpu_prefix_cache_*`` counters count KV blocks, not tokens, as their
    HELP text says (the direct scraper reads the same text): per target through
    /api/v1/targets/metadata; else (Thanos, Mimir) per metric name through /api/v1/metadata, which
    then holds for every replica alike (the set holds None)."""
    helps: dict[ReplicaKey | None, list[str]] = {}
    for name in _promql.BLOCK_COUNTING_CANDIDATES:
        for metric in (name, name + "_total"):  # the family name as a page's TYPE line spells it
            params = {"metric": metric}
            if sel.matchers:
                params["match_target"] = sel.text
            try:
                entries = await api.get("/api/v1/targets/metadata", params, timeout)
            except PromError as exc:
                if exc.kind in _FATAL:
                    raise
                return _blocks({None: await _metadata_helps(api, timeout)})
            for entry in entries if isinstance(entries, list) else []:
                if isinstance(entry, dict):
                    key = replica_key(entry.get("target") or {})
                    helps.setdefault(key, []).append(str(entry.get("help", "")).lower())
    return _blocks(helps)


def _blocks(helps: dict[ReplicaKey | None, list[str]]) -> set[ReplicaKey | None]:
    return {key for key, texts in helps.items() if texts and all("block" in t for t in texts)}


async def _metadata_helps(api: PromApi, timeout: float) -> list[str]:
    helps: list[str] = []
    for name in _promql.BLOCK_COUNTING_CANDIDATES:
        for metric in (name, name + "_total"):
            try:
                data = await api.get("/api/v1/metadata", {"metric": metric}, timeout)
            except PromError as exc:
                if exc.kind in _FATAL:
                    raise
                continue
            for entry in data.get(metric, []) if isinstance(data, dict) else []:
                helps.append(str(entry.get("help", "")).lower())
    return helps
