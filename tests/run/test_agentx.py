"""AgentX validity, live (run/agentx.py): the facts the rules need, from the plan and the server, never
guessed, and the verdict of each tick, said in the log when it changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentx_tui.cli import parse_args
from agentx_tui.procfs import mem_total_bytes
from agentx_tui.run import RunPlan, build_plan
from agentx_tui.run.agentx import AgentXWatch, agentx_setup, launched_offload, offload_seen
from agentx_tui.snapshot import (
    ClientReading,
    ClientTotals,
    EndpointReading,
    GpuReading,
    GpuState,
    PointFigures,
    RunInfo,
    Snapshot,
    SweepState,
)
from agentx_tui.sweep import NORTH_STAR, AgentXSetup, KvOffload, ServerMemory

GIB = 1 << 30


def plan(*argv: str) -> RunPlan:
    return build_plan(parse_args(argv))


@pytest.mark.parametrize(
    ("args", "offloads", "size"),
    [
        ((), False, 0.0),
        (("--max-num-seqs=16",), False, 0.0),
        (("--kv-offloading-size=64",), True, 64 * GIB),
        (("--kv-offloading-size", "0.5", "--kv-offloading-backend", "native"), True, 0.5 * GIB),
        (("--kv-offloading-size=64", "--kv-offloading-backend=lmcache"), True, None),
        (("--kv-offloading-size=lots",), True, None),
        (
            (
                "--kv-transfer-config",
                json.dumps(
                    {"kv_connector": "OffloadingConnector", "kv_connector_extra_config": {"cpu_bytes_to_use": 1e11}}
                ),
            ),
            True,
            1e11,
        ),
        (("--kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}'), None, None),
        (("--kv-transfer-config", "{not json"), None, None),
    ],
)
def test_a_launched_vllm_says_by_its_flags_whether_it_offloads_and_how_much(
    args: tuple[str, ...], offloads: bool | None, size: float | None
) -> None:
    found = launched_offload(args)
    assert (found.offloads, found.size_bytes) == (offloads, size)
    assert found.source  # always says where it came from


def test_the_server_dram_is_this_machines_for_a_launched_or_simulated_server_only() -> None:
    def dram() -> int:
        return 512 * 10**9

    sim = agentx_setup(plan(), simulated=True, dram_bytes=dram)
    assert sim.memory.dram_bytes == 512e9 and sim.memory.dram_source == "this machine's /proc/meminfo"
    assert sim.offload.offloads is None and "simulated engine has not said" in sim.offload.source
    served = agentx_setup(plan("--serve", "tiny"), simulated=False, dram_bytes=dram)
    assert served.memory.dram_bytes == 512e9 and served.offload.offloads is False
    attached = agentx_setup(plan("--attach", "http://gpu-node:8000"), simulated=False, dram_bytes=dram)
    assert attached.memory.dram_bytes is None and attached.offload.offloads is None
    told = agentx_setup(
        plan("--attach", "http://gpu-node:8000", "--server-dram-gb", "2048", "--server-gpus", "8"),
        simulated=False,
        dram_bytes=dram,
    )
    assert told.memory == ServerMemory(2048e9, "--server-dram-gb", 8, "--server-gpus")


def test_the_plans_flags_reach_the_rules() -> None:
    setup = agentx_setup(plan("--duration", "20", "--max-think", "5"), simulated=True, dram_bytes=lambda: None)
    assert (setup.run_duration_s, setup.max_think_s, setup.min_point_s, setup.idle_cap_s) == (20.0, 5.0, 900.0, None)
    assert agentx_setup(plan("--agentx"), simulated=True, dram_bytes=lambda: None).idle_cap_s == 10.0
    assert setup.sends_load


def test_a_proxy_only_plan_sends_no_load_of_its_own() -> None:
    proxy_only = agentx_setup(plan("-w", "none", "--proxy", "0"), simulated=True, dram_bytes=lambda: None)
    assert not proxy_only.sends_load
    beside = agentx_setup(plan("--proxy", "0"), simulated=True, dram_bytes=lambda: None)
    assert beside.sends_load  # simulated users beside the real agents: judged


def test_meminfo_is_read_in_bytes_and_unknown_without_it(tmp_path: Path) -> None:
    folder = tmp_path
    meminfo = folder / "meminfo"
    meminfo.write_text("MemTotal:       16384 kB\nMemFree:         1024 kB\n")
    assert mem_total_bytes(str(meminfo)) == 16384 * 1024
    (folder / "odd").write_text("MemFree: 1 kB\n")
    assert mem_total_bytes(str(folder / "odd")) is None
    assert mem_total_bytes(str(folder / "missing")) is None


def tick(seq: int, elapsed_s: float, *, gpus: int = 0, failed: int = 0) -> Snapshot:
    """A sweep's tick, its first point measured and meeting every rule, the next one measuring."""
    first = PointFigures(
        index=0, users=2, warmup_s=20.0, duration_s=900.0, window_start_s=20.0, requests_completed=50,
        error_rate=0.0, warmup_requests_min=10, context_overflow_requests=0, context_overflow_share=0.0,
        output_coverage=1.0, steady=True,
    )  # fmt: skip
    sweep = SweepState(
        points=(first,), point_duration_s=900.0, frontier_axis=NORTH_STAR, current_users=4, phase="warmup"
    )
    return Snapshot(
        seq=seq,
        time=1e9 + elapsed_s,
        elapsed_s=elapsed_s,
        run=RunInfo(target="serve tiny"),
        client=ClientReading(totals=ClientTotals(requests_completed=5, requests_failed=failed)),
        gpu=GpuState(gpus=tuple(GpuReading(index=i, name="H100") for i in range(gpus))),
        sweep=sweep,
    )


def test_the_log_hears_the_verdict_once_and_again_only_when_it_changes() -> None:
    said: list[str] = []
    watch = AgentXWatch(AgentXSetup(offload=KvOffload(False, 0.0, "none")), said.append)
    for seq in range(1, 4):
        watch.verdict(tick(seq, float(seq)), final=False, partial_reason=None)
    assert said == ["AgentX pending"]  # where it stands moves each tick: not news
    bad = tick(4, 4.0)
    assert bad.sweep is not None
    point = bad.sweep.points[0].model_copy(update={"error_rate": 0.2})
    failing = bad.model_copy(update={"sweep": bad.sweep.model_copy(update={"points": (point,)})})
    watch.verdict(failing, final=False, partial_reason=None)
    assert said[-1] == "not AgentX-valid: error rate above 10%: 20.0% at 2 users"
    watch.verdict(failing.model_copy(update={"seq": 5}), final=False, partial_reason=None)  # not news
    assert len(said) == 2
    del said[1:]
    watch.verdict(tick(6, 6.0), final=True, partial_reason="stopped by Ctrl-C")
    assert said[1:] == ["not AgentX-valid: the run was cut short: stopped by Ctrl-C"]
    watch.verdict(tick(7, 7.0), final=True, partial_reason=None)
    assert said[-1] == "AgentX-valid"


def test_a_launched_vllms_server_has_the_gpus_nvml_sees() -> None:
    offload = KvOffload(True, 64 * GIB, "--kv-offloading-size 64 GiB")
    setup = AgentXSetup(offload=offload, memory=ServerMemory(1e12, "this machine's /proc/meminfo"))
    snap = tick(1, 1.0, gpus=8).model_copy(update={"cost": tick(1, 1.0).cost.model_copy(update={"gpus": 2})})
    seen = AgentXWatch(setup, lambda _: None, nvml_counts=True).verdict(snap, final=False, partial_reason=None)
    assert seen is not None
    (offload_rule,) = (r for r in seen.rules if r.rule == "kv_offload")
    assert offload_rule.state == "met" and "× 2 GPUs ÷ 8" in offload_rule.detail
    unseen = AgentXWatch(setup, lambda _: None).verdict(snap, final=False, partial_reason=None)
    assert unseen is not None and unseen.valid is None  # without NVML's count the budget cannot be told


def test_what_the_servers_pages_say_of_offload_decides_where_the_plan_cannot() -> None:
    """The simulator and an attached server say on their pages whether they offload KV to CPU memory
    (`EndpointReading.kv_offload_cpu`); the rule then reads that, where the plan's flags tell nothing."""
    unknown = AgentXSetup(offload=KvOffload(None, None, "the attached server has not said"))
    page = EndpointReading(url="aggregate", flavor="vllm", kv_offload_cpu=True, kv_offload_cpu_bytes=64 * GIB)
    seen = offload_seen(tick(1, 1.0).model_copy(update={"aggregate": page}))
    assert seen == KvOffload(True, 64 * GIB, "the servers' cache_config_info")
    assert offload_seen(tick(1, 1.0)) is None  # no page said: still unknown
    off = page.model_copy(update={"kv_offload_cpu": False, "kv_offload_cpu_bytes": None, "flavor": "sim"})
    watch = AgentXWatch(unknown, lambda _: None)
    verdict = watch.verdict(tick(1, 1.0).model_copy(update={"aggregate": off}), final=False, partial_reason=None)
    assert verdict is not None
    (rule,) = (r for r in verdict.rules if r.rule == "kv_offload")
    assert rule.state == "met" and "the simulated engine's CPU tier: none" in rule.detail
