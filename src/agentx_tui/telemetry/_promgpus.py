"""DCGM series read through Prometheus → GPUs (counted by distinct UUID) and their replicas (pure).

A GPU is mapped to a replica, in this order of confidence:
1. same scrape target: its series carry the replica's own ``namespace``/``pod``/``instance`` (the
   simulator publishes DCGM gauges on its own /metrics);
2. same pod: dcgm-exporter's Kubernetes mode labels each GPU with the pod using it (``pod``, or
   ``exported_pod`` when Prometheus renamed it beside the exporter's own target label);
3. same host: the GPU's ``Hostname``/``node`` or its exporter's instance host equals the replica's
   ``node`` label or instance host, and that host runs exactly one replica (GPUs of a node shared by
   several replicas cannot be split from these labels, so they stay unmapped and the status says so).
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from agentx_tui.snapshot import GpuReading
from agentx_tui.telemetry._promapi import Vector
from agentx_tui.telemetry._promfigures import ReplicaKey, replica_key
from agentx_tui.telemetry.dcgm import ENERGY_FIELD

_MIB = 1024 * 1024
_NODE_LABELS = ("node", "kubernetes_node", "nodename")
_GPU_HOST_LABELS = ("Hostname", "hostname", *_NODE_LABELS)


@dataclass
class _Gpu:
    labels: dict[str, str]
    fields: dict[str, float] = field(default_factory=dict)


def _short_host(text: str) -> str:
    host = text.strip().lower()
    if host.startswith("[") and "]" in host:  # [::1]:9400
        return host[1 : host.index("]")]
    if host.count(":") == 1:
        host = host.rsplit(":", 1)[0]
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        return host.split(".", 1)[0]  # node-3.cluster.local and node-3 are one host


def _hosts(labels: Mapping[str, str], names: Iterable[str]) -> set[str]:
    out = {_short_host(labels[n]) for n in names if labels.get(n)}
    if labels.get("instance"):
        out.add(_short_host(labels["instance"]))
    return out - {""}


def _gpu_id(labels: Mapping[str, str]) -> str:
    uuid = labels.get("UUID") or labels.get("uuid")
    if uuid:
        return uuid
    host = next((labels[n] for n in _GPU_HOST_LABELS if labels.get(n)), labels.get("instance", ""))
    return f"{host}/gpu{labels.get('gpu', '?')}"


def group_gpus(vector: Vector) -> dict[str, _Gpu]:
    """DCGM samples by GPU (UUID): a GPU scraped twice (two jobs, two exporters) is one GPU."""
    gpus: dict[str, _Gpu] = {}
    for labels, value in vector:
        gpu = gpus.setdefault(_gpu_id(labels), _Gpu(labels=labels))
        gpu.fields.setdefault(labels.get("__name__", ""), value)
    return gpus


def _figures(gpu: _Gpu) -> GpuReading:
    f, labels = gpu.fields, gpu.labels
    try:
        index = int(labels.get("gpu", ""))
    except ValueError:
        index = 0
    used, free = f.get("DCGM_FI_DEV_FB_USED"), f.get("DCGM_FI_DEV_FB_FREE")
    total = None
    if used is not None and free is not None:
        total = (used + free + f.get("DCGM_FI_DEV_FB_RESERVED", 0.0)) * _MIB
    util = f.get("DCGM_FI_DEV_GPU_UTIL")
    return GpuReading(
        index=index,
        name=labels.get("modelName") or f"GPU {index}",
        uuid=labels.get("UUID") or labels.get("uuid") or None,
        source="dcgm",
        utilization=util / 100.0 if util is not None else None,
        memory_used_bytes=used * _MIB if used is not None else None,
        memory_total_bytes=total,
        power_w=f.get("DCGM_FI_DEV_POWER_USAGE"),
        power_limit_w=f.get("DCGM_FI_DEV_POWER_MGMT_LIMIT"),
        temperature_c=f.get("DCGM_FI_DEV_GPU_TEMP"),
        sm_clock_mhz=f.get("DCGM_FI_DEV_SM_CLOCK"),
        host=next((labels[n] for n in _GPU_HOST_LABELS if labels.get(n)), None),
    )


@dataclass
class GpuMap:
    """GPUs (by id), which replica each is mapped to, and how."""

    gpus: dict[str, GpuReading]
    owner: dict[str, ReplicaKey]  # gpu id → replica
    how: dict[str, str]  # gpu id → "scrape target" | "pod" | "host"
    shared_hosts: dict[str, int]  # host → replicas on it, where GPUs could not be split
    energy_mj: dict[str, float] = field(default_factory=dict)  # gpu id → its energy counter, where it has one

    def of(self, replica: ReplicaKey) -> list[GpuReading]:
        return [self.gpus[g] for g, r in self.owner.items() if r == replica]


def _pod_of(labels: Mapping[str, str]) -> tuple[str, str]:
    pod = labels.get("exported_pod") or labels.get("pod") or ""
    namespace = labels.get("exported_namespace") or labels.get("namespace") or ""
    return pod, namespace


def map_gpus(vector: Vector, replicas: Mapping[ReplicaKey, Mapping[str, str]]) -> GpuMap:
    """``replicas``: each replica's key and the labels of one of its series."""
    grouped = group_gpus(vector)
    owner: dict[str, ReplicaKey] = {}
    how: dict[str, str] = {}
    by_pod: dict[str, list[ReplicaKey]] = defaultdict(list)
    by_host: dict[str, set[ReplicaKey]] = defaultdict(set)
    for key, labels in replicas.items():
        if labels.get("pod"):
            by_pod[labels["pod"]].append(key)
        for host in _hosts(labels, _NODE_LABELS):
            by_host[host].add(key)
    shared: dict[str, int] = {}
    for gpu_id, gpu in grouped.items():
        target = replica_key(gpu.labels)
        if target in replicas:
            owner[gpu_id], how[gpu_id] = target, "scrape target"
            continue
        pod, namespace = _pod_of(gpu.labels)
        matches = [k for k in by_pod.get(pod, []) if not namespace or not k[0] or k[0] == namespace]
        if pod and len(matches) == 1:
            owner[gpu_id], how[gpu_id] = matches[0], "pod"
            continue
        on_host = set().union(*(by_host.get(h, set()) for h in _hosts(gpu.labels, _GPU_HOST_LABELS)))
        if len(on_host) == 1:
            owner[gpu_id], how[gpu_id] = next(iter(on_host)), "host"
        elif len(on_host) > 1:
            host = next(h for h in _hosts(gpu.labels, _GPU_HOST_LABELS) if by_host.get(h))
            shared[host] = len(on_host)
    energy = {g: gpu.fields[ENERGY_FIELD] for g, gpu in grouped.items() if ENERGY_FIELD in gpu.fields}
    return GpuMap({g: _figures(gpu) for g, gpu in grouped.items()}, owner, how, shared, energy)


def describe(gmap: GpuMap, shown: list[GpuReading], replicas: int, *, scoped: bool) -> str:
    """One sentence for GpuState.status."""
    hosts = {g.host for g in shown if g.host}
    where = f" on {len(hosts)} host{'s' if len(hosts) != 1 else ''}" if hosts else ""
    mapped = {r for r in gmap.owner.values()}
    ways = sorted(set(gmap.how.values()))
    text = f"DCGM via Prometheus: {len(shown)} GPU{'s' if len(shown) != 1 else ''} (distinct UUIDs){where}"
    if not scoped:
        text += ", from DCGM series outside the selector"
        if mapped:
            text += " (only those mapped to a replica are counted)"
    if mapped:
        text += f"; mapped to {len(mapped)} of {replicas} replicas by {' and '.join(ways)}"
    else:
        text += "; not mapped to replicas (no shared scrape target, pod, node or host label)"
    if gmap.shared_hosts:
        hosts_text = ", ".join(f"{h} ({n} replicas)" for h, n in sorted(gmap.shared_hosts.items())[:3])
        text += f"; GPUs of hosts shared by several replicas are not split: {hosts_text}"
    return text
