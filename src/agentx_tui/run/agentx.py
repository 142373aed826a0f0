"""AgentX validity, live (docs/sweeps.md, "AgentX validity"): the facts the rules need that no tick carries
(the plan's flags, the server's DRAM and KV offload), and each tick's verdict, said in the log when it
changes. The rules themselves are sweep/agentx.py's.

Where the facts come from, never guessed:
- the server's DRAM: `--server-dram-gb`; else, for a launched vLLM and the simulator (which run on this
  machine), this machine's `/proc/meminfo`; else (an attached server) unknown;
- the GPUs in the server: `--server-gpus`; else, for a launched vLLM, the GPUs NVML sees on this machine;
  else unknown;
- whether the server offloads KV to CPU memory, and how much: a launched vLLM's own flags
  (`--kv-offloading-size` GiB with the native backend, an `OffloadingConnector`'s `cpu_bytes_to_use` in
  `--kv-transfer-config`; none of them: it does not offload); else what the servers' pages say each
  tick (vLLM's `cache_config_info`, the simulator's CPU tier: `EndpointReading.kv_offload_cpu`); else
  unknown;
- the golden acceptance length a speculating server is pinned to: `--spec-golden`, else the golden
  table's for the served model at the draft length its counters show (run/golden.py), carried by each
  tick's endpoints and aggregate; else unknown.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence

from agentx_tui.engine import local_dram_bytes
from agentx_tui.run.plan import RunPlan
from agentx_tui.snapshot import AgentXVerdict, Snapshot, validity_words
from agentx_tui.sweep import AgentXSetup, KvOffload, ServerMemory, judge

GIB = 1 << 30
# vLLM's own offloading connectors, whose `kv_connector_extra_config.cpu_bytes_to_use` is the CPU buffer.
_OFFLOADING_CONNECTORS = ("OffloadingConnector", "SimpleCPUOffloadConnector")


def _flag(args: Sequence[str], name: str) -> str | None:
    """The value of `name` among vLLM's arguments, given as `--name=value` or `--name value`; None if absent."""
    for i, arg in enumerate(args):
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
        if arg == name:
            return args[i + 1] if i + 1 < len(args) else ""
    return None


def launched_offload(vllm_args: Sequence[str]) -> KvOffload:
    """Whether a vLLM launched with `vllm_args` offloads KV to CPU memory, and how many bytes."""
    size = _flag(vllm_args, "--kv-offloading-size")
    if size is not None:
        backend = _flag(vllm_args, "--kv-offloading-backend") or "native"
        if backend != "native":
            return KvOffload(True, None, f"the launched vLLM offloads through {backend}, whose size it does not say")
        try:
            gib = float(size)
        except ValueError:
            return KvOffload(True, None, f"the launched vLLM's --kv-offloading-size {size!r} is not a number")
        return KvOffload(True, gib * GIB, f"--kv-offloading-size {gib:g} GiB of the launched vLLM")
    transfer = _flag(vllm_args, "--kv-transfer-config")
    if transfer is not None:
        return _connector_offload(transfer)
    return KvOffload(False, 0.0, "the launched vLLM has no --kv-offloading-size or --kv-transfer-config")


def _connector_offload(text: str) -> KvOffload:
    """A `--kv-transfer-config`: vLLM's offloading connector says its CPU bytes; another connector (LMCache,
    a disaggregation transfer) may or may not offload to CPU memory, and does not say how much."""
    try:
        config = json.loads(text)
    except ValueError:
        config = None
    if not isinstance(config, dict):
        return KvOffload(None, None, "the launched vLLM's --kv-transfer-config could not be read")
    connector = str(config.get("kv_connector") or "")
    extra = config.get("kv_connector_extra_config")
    cpu_bytes = extra.get("cpu_bytes_to_use") if isinstance(extra, dict) else None
    if connector in _OFFLOADING_CONNECTORS and isinstance(cpu_bytes, int | float):
        source = f"{connector} with cpu_bytes_to_use {cpu_bytes:g} (--kv-transfer-config)"
        return KvOffload(True, float(cpu_bytes), source)
    source = f"the launched vLLM's KV connector {connector or '(unnamed)'} does not say what it offloads"
    return KvOffload(None, None, source)


def agentx_setup(
    plan: RunPlan, *, simulated: bool, dram_bytes: Callable[[], int | None] = local_dram_bytes
) -> AgentXSetup:
    """The rules' facts of this run, from its plan and where its server runs (module docstring)."""
    kind = plan.target.kind
    if kind == "serve":
        offload = launched_offload(plan.target.vllm_args)
    elif kind == "sim" or simulated:
        offload = KvOffload(None, None, "the simulated engine has not said whether it offloads KV to CPU memory")
    else:
        offload = KvOffload(None, None, "the attached server has not said whether it offloads KV to CPU memory")
    if plan.agentx.server_dram_bytes is not None:
        dram: float | None = plan.agentx.server_dram_bytes
        dram_source = "--server-dram-gb"
    elif kind in ("serve", "sim"):
        dram, dram_source = dram_bytes(), "this machine's /proc/meminfo"
    else:
        dram, dram_source = None, "not known for an attached server"
    gpus = plan.agentx.server_gpus
    memory = ServerMemory(dram, dram_source, gpus, "--server-gpus" if gpus is not None else "")
    return AgentXSetup(
        min_point_s=plan.agentx.min_point_s,
        run_duration_s=plan.duration_s,
        run_warmup_s=plan.warmup_s,
        max_think_s=plan.load.settings.max_think_s,
        idle_cap_s=plan.load.settings.idle_cap_s,
        offload=offload,
        memory=memory,
        sends_load=plan.load.sends_load,
    )


def offload_seen(snap: Snapshot) -> KvOffload | None:
    """Whether the servers offload KV to CPU memory, as their pages say (the aggregate over the endpoints:
    telemetry/aggregate.py); None when they do not say."""
    agg = snap.aggregate
    if agg is None or agg.kv_offload_cpu is None:
        return None
    where = "the simulated engine's CPU tier" if agg.flavor == "sim" else "the servers' cache_config_info"
    if not agg.kv_offload_cpu:
        return KvOffload(False, 0.0, f"{where}: none")
    return KvOffload(True, agg.kv_offload_cpu_bytes, where)


class AgentXWatch:
    """Each tick's verdict (`verdict`), said in the log whenever it changes (`say`: the run's event log)."""

    def __init__(self, setup: AgentXSetup, say: Callable[[str], None], *, nvml_counts: bool = False) -> None:
        self.setup = setup
        self._say = say
        self._nvml_counts = nvml_counts and setup.memory.gpus is None  # a launched vLLM: NVML sees its server
        self._said: tuple[str, tuple[tuple[str, str], ...]] | None = None

    def verdict(self, snap: Snapshot, *, final: bool, partial_reason: str | None) -> AgentXVerdict | None:
        setup = self.setup
        if self._nvml_counts:
            local = sum(1 for g in snap.gpu.gpus if g.source == "nvml")
            if local:
                memory = dataclasses.replace(setup.memory, gpus=local, gpus_source="the GPUs NVML sees")
                setup = dataclasses.replace(setup, memory=memory)
        if setup.offload.offloads is None and (seen := offload_seen(snap)) is not None:
            setup = dataclasses.replace(setup, offload=seen)
        verdict = judge(snap, setup, final=final, partial_reason=partial_reason)
        if verdict is not None:
            self._note(verdict)
        return verdict

    def _note(self, verdict: AgentXVerdict) -> None:
        """One line in the log when the verdict or its reasons change: the verdict, then every reason. A
        reason whose value moves while its rule stays broken (a plain run's error rate so far) is not news."""
        said = (verdict.labels()[-1], tuple((r.rule, r.head) for r in (*verdict.broken, *verdict.unknown)))
        if said == self._said:
            return
        self._said = said
        self._say(validity_words(verdict.valid, "; ".join(verdict.reasons), pending=verdict.waiting))
