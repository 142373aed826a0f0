"""The run plan: everything one run will do, validated once, before any server starts (docs/architecture.md).

`preflight.build_plan` turns the command line into a `RunPlan`; everything downstream takes the plan
and loads nothing again. The plan is immutable: live changes (users ±, price) are the run's state,
not the plan's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentx_tui.load import LoadSettings, PreparedWorkload
from agentx_tui.proxy import DEFAULT_SESSION_HEADER, DEFAULT_SESSION_IDLE_S
from agentx_tui.recording import RecordedProxy, RecordedSettings, RecordedSweep
from agentx_tui.report import Check
from agentx_tui.sim import SpecDecoding
from agentx_tui.snapshot import FrontierAxis
from agentx_tui.sweep import AGENTX_POINT_S, MIN_POINT_S

TargetKind = Literal["attach", "serve", "sim", "prometheus"]
API_KEY_ENV = ("AGENTX_API_KEY", "VLLM_API_KEY", "OPENAI_API_KEY")


@dataclass(frozen=True)
class PrometheusPlan:
    """Telemetry of a fleet read from an existing Prometheus (docs/scale.md)."""

    url: str
    selector: str = ""
    token: str | None = field(default=None, repr=False)
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)


@dataclass(frozen=True)
class TargetPlan:
    kind: TargetKind
    attach: tuple[str, ...] = ()  # load goes here (with --prometheus: the router), telemetry too unless fleet
    serve: str | None = None
    vllm_args: tuple[str, ...] = ()
    sim_profile: str = ""
    sim_cpu_kv_gb: float | None = None  # the simulated engine's CPU KV tier (docs/sim.md); None: none
    sim_cpu_kv_gbps: float | None = None  # its link per direction; None: the profile's
    sim_max_num_batched_tokens: int | None = None  # its chunked-prefill budget; None: the profile's
    sim_spec: SpecDecoding | None = None  # its speculative decoding (docs/sim.md); None: none
    port: int | None = None
    vllm_cmd: str | None = None
    startup_timeout_s: float = 900.0
    gpu_metrics: str | None = None
    prometheus: PrometheusPlan | None = None


@dataclass(frozen=True)
class LoadPlan:
    workload: PreparedWorkload
    settings: LoadSettings = field(default_factory=LoadSettings)  # handed unchanged to every driver
    scale: float | None = None  # the user's --scale; None lets the run fit a preset to the context
    output_scale: float = 1.0  # --output-scale: answers only, already applied to `workload`
    workers: int = 1
    workers_auto: bool = True  # --workers auto: with --ray, the cluster's size decides
    # One load process: in the main one for small runs (or `--workers 1`); a run of many users on a
    # machine of few cores gets one worker process instead, so the ticks, the scrapes and the
    # dashboard keep their own event loop however busy the users keep theirs.
    in_process: bool = True
    ray_address: str | None = None

    @property
    def sends_load(self) -> bool:
        return not self.workload.spec.is_none

    @property
    def users(self) -> int:
        """The users at the start."""
        return self.settings.users


@dataclass(frozen=True)
class ProxyPlan:
    """`--proxy` (docs/capture.md): real agents through a transparent proxy in front of the target."""

    host: str
    port: int  # 0: a free port (said when the run starts)
    capture_dir: Path | None = None  # --capture
    session_header: str = DEFAULT_SESSION_HEADER  # --session-header
    session_idle_s: float = DEFAULT_SESSION_IDLE_S  # --session-idle: a tree with no call for this long has ended


@dataclass(frozen=True)
class SweepPlan:
    """docs/sweeps.md: one measured point per user count, sessions kept running from point to point."""

    users: tuple[int, ...] = ()  # empty: auto (doubling from `start_users`), or the tier sweep's planner
    start_users: int = 1
    warmup_s: float = 120.0  # the most a point waits for its load to be steady
    point_duration_s: float = 60.0
    tiers: tuple[float, ...] = (30.0, 50.0, 75.0, 100.0, 150.0, 200.0)
    # --sweep tiers: probes find where the tiers cross, full points only beside them (docs/sweeps.md);
    # a probe's window (--probe-duration; None: the default, run/sweep.py `default_probe_s`).
    targeted: bool = False
    probe_duration_s: float | None = None

    @property
    def auto(self) -> bool:
        return not self.users and not self.targeted


@dataclass(frozen=True)
class AgentXPlan:
    """What AgentX's rules need besides the run's own flags (docs/sweeps.md, "AgentX validity")."""

    asked: bool = False  # --agentx: the rules' defaults were applied where no flag was given
    min_point_s: float = MIN_POINT_S  # shorter only under AGENTX_TEST_MIN_POINT_S, for tests
    server_dram_bytes: float | None = None  # --server-dram-gb: the DRAM of each server behind the target
    server_gpus: int | None = None  # --server-gpus: the GPUs in each server
    spec_golden: float | None = None  # --spec-golden: the acceptance length the served model is pinned to

    @property
    def point_s(self) -> float:
        """`--agentx`'s point length: 1800 s (900 s the least the rule allows), or the tests' shorter
        length under AGENTX_TEST_MIN_POINT_S."""
        return AGENTX_POINT_S if self.min_point_s == MIN_POINT_S else self.min_point_s


@dataclass(frozen=True)
class PricePlan:
    gpu_price: float | None = None
    cost_profile: str | None = None
    gpus: int | None = None
    gpu_peak: tuple[float, float] | None = None  # --gpu-peak: one GPU's dense TFLOP/s and HBM TB/s


@dataclass(frozen=True)
class OutputPlan:
    headless: bool = False
    reports: tuple[Path, ...] = ()  # --report, each written at the end (its format by its extension)
    record: Path | None = None
    checks: tuple[Check, ...] = ()
    interval_s: float = 1.0
    refresh_s: float = 0.5
    theme: str | None = None


@dataclass(frozen=True)
class RunPlan:
    target: TargetPlan
    load: LoadPlan
    price: PricePlan
    output: OutputPlan
    duration_s: float | None = None  # None: until quit (a sweep ends by itself)
    # A plain run's --warmup: its first seconds, whose requests the window's figures leave out (0: none).
    warmup_s: float = 0.0
    sweep: SweepPlan | None = None
    proxy: ProxyPlan | None = None
    # --precision F: a sweep point (or a plain run) ends once both 95% half-widths are within F.
    precision: float | None = None
    # --frontier-axis: the x-axis a sweep's frontier is read on, and whose p90 --precision checks.
    frontier_axis: FrontierAxis = "e2e_interactivity"
    agentx: AgentXPlan = field(default_factory=AgentXPlan)
    drain_timeout_s: float = 10.0
    api_key: str | None = field(default=None, repr=False)  # never printed, never recorded

    @property
    def secrets(self) -> tuple[str, ...]:
        found = [self.api_key] if self.api_key else []
        if self.target.prometheus is not None:
            found += [self.target.prometheus.token or ""] + [v for _, v in self.target.prometheus.headers]
        return tuple(s for s in found if s)

    def recorded_settings(self) -> RecordedSettings:
        """What a recording's header keeps of the plan: everything but credentials."""
        t, load = self.target, self.load
        return RecordedSettings(
            target=t.kind,
            attach=t.attach,
            serve=t.serve,
            vllm_args=t.vllm_args,
            sim_profile=t.sim_profile,
            prometheus=t.prometheus.url if t.prometheus else None,
            workload=load.workload.spec.name,
            users=load.users,
            scale=load.scale,
            output_scale=load.output_scale,
            seed=load.settings.seed,
            sessions=load.settings.sessions,
            max_think_s=load.settings.max_think_s,
            workers=load.workers,
            duration_s=self.duration_s,
            sweep=None
            if self.sweep is None
            else RecordedSweep(
                users=self.sweep.users or ("tiers" if self.sweep.targeted else "auto"),
                warmup_s=self.sweep.warmup_s,
                point_duration_s=self.sweep.point_duration_s,
                tiers=self.sweep.tiers,
            ),
            proxy=None
            if self.proxy is None
            else RecordedProxy(
                listen=f"{self.proxy.host}:{self.proxy.port}",
                capture_dir=str(self.proxy.capture_dir) if self.proxy.capture_dir else None,
                session_header=self.proxy.session_header,
                session_idle_s=self.proxy.session_idle_s,
            ),
            precision=self.precision,
            frontier_axis=self.frontier_axis,
            gpu_price=self.price.gpu_price,
            cost_profile=self.price.cost_profile,
            gpus=self.price.gpus,
            gpu_peak=self.price.gpu_peak,
            spec_golden=self.agentx.spec_golden,
            interval_s=self.output.interval_s,
        )
