"""Pre-flight: the command line becomes a `RunPlan`, or one sentence and exit 2 (docs/architecture.md).

Everything a user can get wrong is found here, before any server starts or load is sent: flag
combinations, URLs, the workload (file, preset, trace, agent sessions), `--check` expressions, output
paths, the cost and simulator profiles. What is loaded here (the workload and its data, the parsed
checks) is handed on in the plan and never loaded again.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from agentx_tui.args import MAX_USERS, number
from agentx_tui.corpus import PulledCorpus, is_hub_workload, parse_corpus_name, pull_corpus
from agentx_tui.cost import load_golden, load_peaks, load_presets, resolve_price
from agentx_tui.errors import UsageError
from agentx_tui.load import (
    DEFAULT_USERS,
    USERS_PER_WORKER,
    LoadSettings,
    load_workload,
    prepare,
    ray_actors,
    workers_for,
)
from agentx_tui.proxy import (
    DEFAULT_SESSION_HEADER,
    DEFAULT_SESSION_IDLE_S,
    check_listen_address,
    parse_listen_address,
    prepare_capture_folder,
)
from agentx_tui.report import check_report_paths, parse_check
from agentx_tui.run.plan import (
    API_KEY_ENV,
    AgentXPlan,
    LoadPlan,
    OutputPlan,
    PricePlan,
    PrometheusPlan,
    ProxyPlan,
    RunPlan,
    SweepPlan,
    TargetKind,
    TargetPlan,
)
from agentx_tui.sim import DEFAULT_PROFILE, load_profile
from agentx_tui.snapshot import FrontierAxis
from agentx_tui.sweep import (
    AGENTX_IDLE_CAP_S,
    AGENTX_TIERS,
    FRONTIER_AXES,
    MIN_POINT_S,
    TEST_MIN_POINT_ENV,
    peak_auto_users,
)
from agentx_tui.telemetry import PROMETHEUS_TOKEN_ENV, check_selector, parse_prometheus_header


def api_key_from_env() -> str | None:
    for name in API_KEY_ENV:
        value = os.environ.get(name)
        if value:
            return value
    return None


# Without --agentx: the sweep flags' defaults (docs/sweeps.md). With it: the rules' (docs/sweeps.md,
# "AgentX validity"); a flag the user gives wins either way.
DEFAULT_POINT_DURATION_S = 60.0
# A sweep point's --warmup, the most it waits for its load to be steady (900 s with --agentx: AgentX's
# ten warm-up requests per user can take minutes of think time); a plain run has none unless given.
DEFAULT_POINT_WARMUP_S = 120.0
AGENTX_POINT_WARMUP_S = 900.0
DEFAULT_TIERS = "30,50,75,100,150,200"
DEFAULT_FRONTIER_AXIS = "e2e"


def build_plan(args: argparse.Namespace) -> RunPlan:
    target = _target(args)
    agentx = _agentx(args)
    _rule_defaults(args, agentx)
    sweep = _sweep(args)
    if sweep is None:
        users = DEFAULT_USERS if args.users is None else args.users
    elif sweep.auto or sweep.targeted:
        sweep = replace(sweep, start_users=max(1, args.users or 1))
        users = sweep.start_users
    elif args.users is not None:
        raise UsageError("-u/--users and --sweep users=… cannot be used together.", "The sweep list sets the users.")
    else:
        users = sweep.users[0]
    if sweep is not None and args.duration is not None:
        raise UsageError("--duration and --sweep cannot be used together.", "A sweep ends when its points are done.")
    warmup_s = _run_warmup(args, sweep)
    checks = tuple(parse_check(expr) for expr in args.check)
    reports = check_report_paths(args.report)
    if args.record is not None:
        _check_output_path(args.record, "--record")
    workload = "none" if target.kind == "prometheus" and not target.attach else args.workload
    pulled = _pull_hub_workload(workload)
    spec = load_workload(str(pulled.folder) if pulled else workload, scale=args.scale, output_scale=args.output_scale)
    if pulled is not None:  # the run names the dataset and the commit it replays, not a cache path
        named = {"name": pulled.workload_name, "description": f"replay of the agent sessions of {pulled.pinned_label}"}
        spec = spec.model_copy(update=named)
    prepared = prepare(spec)
    if agentx.asked and prepared.spec.is_none:
        hint = "AgentX measures the run's own requests."
        raise UsageError("--agentx needs load: it cannot run with `-w none`.", hint)
    if sweep is not None and prepared.spec.is_none:
        raise UsageError("--sweep needs load: it cannot run with `-w none`.", "Choose a workload.")
    if warmup_s and prepared.spec.is_none:
        raise UsageError(
            "--warmup needs load: it cannot run with `-w none`.", "It leaves out the run's own first requests."
        )
    if args.precision is not None and prepared.spec.is_none:
        raise UsageError(
            "--precision needs load: it cannot run with `-w none`.", "Its intervals come from the run's own requests."
        )
    if target.kind == "sim":
        # An unknown profile or tier is a usage error, not a failed start.
        load_profile(target.sim_profile).with_overrides(
            cpu_kv_gb=target.sim_cpu_kv_gb,
            cpu_kv_gbps=target.sim_cpu_kv_gbps,
            max_num_batched_tokens=target.sim_max_num_batched_tokens,
            spec=target.sim_spec,
        )
    if args.gpu_price is not None and args.cost_profile is not None:
        raise UsageError("--gpu-price and --cost-profile cannot be used together.", "Give a price or a preset.")
    if args.cost_profile is not None:
        resolve_price(gpu_price=None, cost_profile=args.cost_profile, gpu_names=(), sim_gpu=None, gpus=args.gpus)
    else:  # the user's presets file is read at the first tick: a broken one is said up front too
        load_presets()
    load_peaks()  # likewise the user's GPU peaks file
    load_golden()  # and the user's golden acceptance lengths
    api_key = args.api_key or api_key_from_env()
    settings = LoadSettings(
        users=users,
        seed=args.seed,
        sessions=args.sessions,
        max_think_s=args.max_think,
        idle_cap_s=AGENTX_IDLE_CAP_S if agentx.asked else None,  # the harness's replay (docs/sweeps.md)
        api_key=api_key,
        join=_join(args.join, sweep, prepared.spec.kind),
    )
    peak = _peak_users(users, sweep)
    load = LoadPlan(
        workload=prepared,
        settings=settings,
        scale=args.scale,
        output_scale=args.output_scale,
        workers=_workers(args.workers, peak),
        workers_auto=args.workers == "auto",
        in_process=args.workers != "auto" or peak <= USERS_PER_WORKER,
        ray_address=args.ray,
    )
    output = OutputPlan(
        headless=args.headless,
        reports=reports,
        record=args.record,
        checks=checks,
        interval_s=args.interval,
        refresh_s=args.refresh,
        theme=args.theme,
    )
    return RunPlan(
        target=target,
        load=load,
        price=PricePlan(
            gpu_price=args.gpu_price, cost_profile=args.cost_profile, gpus=args.gpus, gpu_peak=args.gpu_peak
        ),
        output=output,
        duration_s=args.duration,
        warmup_s=warmup_s,
        sweep=sweep,
        proxy=_proxy(args, target),
        precision=args.precision,
        frontier_axis=_frontier_axis(args.frontier_axis),
        agentx=agentx,
        api_key=api_key,
    )


def _agentx(args: argparse.Namespace) -> AgentXPlan:
    """`--agentx` and the server's facts the offload budget needs; the test hook's shorter point length."""
    dram_gb: float | None = args.server_dram_gb
    return AgentXPlan(
        asked=args.agentx,
        min_point_s=_test_min_point_s(),
        server_dram_bytes=dram_gb * 1e9 if dram_gb is not None else None,
        server_gpus=args.server_gpus,
        spec_golden=args.spec_golden,
    )


def _test_min_point_s() -> float:
    """AGENTX_TEST_MIN_POINT_S, the tests' shorter point length for AgentX's rule; 900 s when unset."""
    text = os.environ.get(TEST_MIN_POINT_ENV)
    if not text:
        return MIN_POINT_S
    try:
        return number(TEST_MIN_POINT_ENV, 0, MIN_POINT_S, lo_open=True)(text)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"{exc}.", f"{TEST_MIN_POINT_ENV} is for tests only: unset it for a real run.") from exc


def _rule_defaults(args: argparse.Namespace, agentx: AgentXPlan) -> None:
    """Fill the flags the user did not give: with --agentx the rules' values (a sweep, unless --duration
    asks for a plain run of one point), else the usual defaults."""
    if args.point_duration is None:
        args.point_duration = agentx.point_s if agentx.asked else DEFAULT_POINT_DURATION_S
    if args.tiers is None:
        args.tiers = ",".join(f"{t:g}" for t in AGENTX_TIERS) if agentx.asked else DEFAULT_TIERS
    if args.frontier_axis is None:
        args.frontier_axis = DEFAULT_FRONTIER_AXIS
    if agentx.asked and args.sweep is None and args.duration is None:
        args.sweep = "tiers"
    if args.warmup is None and args.sweep is not None:
        args.warmup = DEFAULT_POINT_WARMUP_S
        if agentx.asked:  # the tests' shorter points (AGENTX_TEST_MIN_POINT_S) wait as long at most
            args.warmup = min(AGENTX_POINT_WARMUP_S, agentx.min_point_s)


def _run_warmup(args: argparse.Namespace, sweep: SweepPlan | None) -> float:
    """A plain run's --warmup (0 when not given): its first seconds, inside its --duration. A sweep's is
    per point (`SweepPlan.warmup_s`), and 0 here."""
    if sweep is not None or not args.warmup:
        return 0.0
    warmup: float = args.warmup
    if args.duration is not None and warmup >= args.duration:
        raise UsageError(
            f"--warmup {warmup:g} leaves nothing of --duration {args.duration:g} to measure.",
            "The warm-up is the run's first seconds: give a --duration longer than it.",
        )
    return warmup


_JOINS_MIDWAY = ("agent", "sessions")  # the kinds whose sessions have stages to join at


def _join(asked: str | None, sweep: SweepPlan | None, kind: str) -> Literal["start", "midway"]:
    """`--join`: midway by default in a sweep of agent sessions or session replays (docs/sweeps.md, "Users
    that join"), start otherwise; a trace's requests have no stages to join at."""
    if asked is None:
        return "midway" if sweep is not None and kind in _JOINS_MIDWAY else "start"
    if asked == "midway" and kind not in _JOINS_MIDWAY:
        raise UsageError(
            f"--join midway needs agent sessions or session replays; this workload is `kind: {kind}`.",
            "A trace's requests have no stages to join at: leave --join out.",
        )
    return "midway" if asked == "midway" else "start"


def _frontier_axis(name: str) -> FrontierAxis:
    axis = FRONTIER_AXES.get(name.strip().lower())
    if axis is None:
        raise UsageError(
            f"--frontier-axis {name!r} is not one of {', '.join(FRONTIER_AXES)}.",
            "e2e: E2E-normalized interactivity (the default); decode: decode interactivity.",
        )
    return axis


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP token (RFC 9110)


def _proxy(args: argparse.Namespace, target: TargetPlan) -> ProxyPlan | None:
    """`--proxy [HOST:]PORT` with its `--capture`, `--session-header` and `--session-idle`: checked before
    anything starts."""
    if args.proxy is None:
        given_flags = (
            ("--capture", args.capture),
            ("--session-header", args.session_header),
            ("--session-idle", args.session_idle),
        )
        for flag, given in given_flags:
            if given is not None:
                raise UsageError(f"{flag} only applies with --proxy [HOST:]PORT.", "See docs/capture.md.")
        return None
    if target.kind == "prometheus" and not target.attach:
        raise UsageError(
            "--proxy needs a server to forward to, and --prometheus alone names none.",
            "Add --attach URL (the router the agents should reach).",
        )
    host, port = parse_listen_address(args.proxy)
    check_listen_address(host, port)
    header = args.session_header or DEFAULT_SESSION_HEADER
    if not _HEADER_NAME.fullmatch(header):
        raise UsageError(f"--session-header {header!r} is not a header name.", "For example X-Session-ID.")
    if args.capture is not None:
        prepare_capture_folder(args.capture)
    idle_s = args.session_idle if args.session_idle is not None else DEFAULT_SESSION_IDLE_S
    return ProxyPlan(host, port, args.capture, header, idle_s)


def _pull_hub_workload(workload: str) -> PulledCorpus | None:
    """`-w hf:REPO[@REV]`: the corpus pulled into the hub's cache (or found there) before it is loaded."""
    if not is_hub_workload(workload):
        return None
    pulled = pull_corpus(parse_corpus_name(workload), progress=sys.stderr.isatty())
    if (notice := pulled.notice()) is not None:
        print(notice, file=sys.stderr, flush=True)
    return pulled


def _target(args: argparse.Namespace) -> TargetPlan:
    chosen = [
        flag for flag, given in (("--attach", args.attach), ("--serve", args.serve), ("--sim", args.sim)) if given
    ]
    if args.prometheus and (args.serve or args.sim):
        raise UsageError(
            f"--prometheus and {'--serve' if args.serve else '--sim'} cannot be used together.",
            "--prometheus reads a fleet's telemetry; add --attach ROUTER_URL to send load to it.",
        )
    if len(chosen) > 1:
        raise UsageError(f"{' and '.join(chosen)} cannot be used together.", "Choose one target.")
    kind: TargetKind = (
        "prometheus" if args.prometheus else "attach" if args.attach else "serve" if args.serve else "sim"
    )
    if kind in ("attach", "prometheus") and args.port is not None:
        raise UsageError(
            "--port is for a launched or simulated server, not --attach.", "Put the port in the URL instead."
        )
    if args.vllm_arg and kind != "serve":
        raise UsageError("--vllm-arg only applies with --serve.")
    if (args.sim_cpu_kv_gb is not None or args.sim_cpu_kv_gbps is not None) and kind != "sim":
        raise UsageError(
            "--sim-cpu-kv-gb and --sim-cpu-kv-gbps only apply to the simulated engine.",
            "A real vLLM offloads KV with --vllm-arg=--kv-offloading-size=GIB (docs/vllm.md).",
        )
    if (args.sim_max_num_batched_tokens is not None or args.sim_spec is not None) and kind != "sim":
        raise UsageError(
            "--sim-max-num-batched-tokens and --sim-spec only apply to the simulated engine.",
            "A real vLLM takes --vllm-arg=--max-num-batched-tokens=N and --vllm-arg=--speculative-config=JSON.",
        )
    if (args.selector or args.prometheus_header) and not args.prometheus:
        raise UsageError("--selector and --prometheus-header only apply with --prometheus URL.")
    for url in args.attach:
        _check_url("--attach", url)
    if args.gpu_metrics:
        _check_url("--gpu-metrics", args.gpu_metrics)
    prometheus = None
    if args.prometheus:
        _check_url("--prometheus", args.prometheus)
        prometheus = PrometheusPlan(
            url=args.prometheus if "://" in args.prometheus else "http://" + args.prometheus,
            selector=check_selector(args.selector),
            token=os.environ.get(PROMETHEUS_TOKEN_ENV) or None,
            headers=tuple(parse_prometheus_header(h) for h in args.prometheus_header),
        )
    if args.ray:
        ray_actors.import_ray()  # not installed: one sentence naming the extra, before anything starts
    if (args.ray and kind == "sim") or (args.ray and kind == "serve"):
        raise UsageError(
            "--ray needs a target the cluster's nodes can reach: --attach URL (or --prometheus with --attach).",
            "A launched or simulated server listens on this machine's loopback only.",
        )
    return TargetPlan(
        kind=kind,
        attach=tuple(args.attach),
        serve=args.serve,
        vllm_args=tuple(args.vllm_arg),
        sim_profile=args.sim or DEFAULT_PROFILE,
        sim_cpu_kv_gb=args.sim_cpu_kv_gb,
        sim_cpu_kv_gbps=args.sim_cpu_kv_gbps,
        sim_max_num_batched_tokens=args.sim_max_num_batched_tokens,
        sim_spec=args.sim_spec,
        port=args.port,
        vllm_cmd=args.vllm_cmd,
        startup_timeout_s=args.startup_timeout,
        gpu_metrics=args.gpu_metrics,
        prometheus=prometheus,
    )


def _sweep(args: argparse.Namespace) -> SweepPlan | None:
    tiers = _tiers(args.tiers)
    text = (args.sweep or "").strip()
    if args.probe_duration is not None and text != "tiers":
        raise UsageError("--probe-duration needs --sweep tiers.", "Probes are the tier sweep's short windows.")
    if args.sweep is None:
        return None
    if text == "auto":
        return SweepPlan(warmup_s=args.warmup, point_duration_s=args.point_duration, tiers=tiers)
    if text == "tiers":
        if args.probe_duration is not None and args.probe_duration > args.point_duration:
            raise UsageError(
                f"--probe-duration {args.probe_duration:g} is longer than --point-duration {args.point_duration:g}.",
                "A probe is a short window: give one shorter than a point's.",
            )
        return SweepPlan(
            warmup_s=args.warmup,
            point_duration_s=args.point_duration,
            tiers=tiers,
            targeted=True,
            probe_duration_s=args.probe_duration,
        )
    if not text.startswith("users="):
        raise UsageError(
            f"--sweep {args.sweep!r} is not users=N,N,…, auto or tiers.", "For example --sweep users=1,2,4,8."
        )
    parse = number("users", 1, MAX_USERS, integer=True)
    try:
        users = tuple(int(parse(part)) for part in text.removeprefix("users=").split(",") if part.strip())
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--sweep: {exc}.") from exc
    if not users:
        raise UsageError("--sweep users= needs at least one user count.", "For example --sweep users=1,2,4,8.")
    if list(users) != sorted(set(users)):
        raise UsageError(
            f"--sweep users must rise from point to point, not {','.join(map(str, users))}.",
            "Sessions are kept running and more are added at each point.",
        )
    return SweepPlan(users=users, warmup_s=args.warmup, point_duration_s=args.point_duration, tiers=tiers)


def _tiers(text: str) -> tuple[float, ...]:
    parse = number("tokens/s per user", 0, 1e6, lo_open=True)
    try:
        tiers = tuple(parse(part) for part in text.split(",") if part.strip())
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--tiers: {exc}.") from exc
    if not tiers:
        raise UsageError("--tiers needs at least one tier.", "For example --tiers 30,50,100.")
    return tuple(sorted(set(tiers)))


def _peak_users(users: int, sweep: SweepPlan | None) -> int:
    """The most users the run will have (an auto sweep may double up to its last point)."""
    if sweep is None:
        return users
    return max(sweep.users) if sweep.users else peak_auto_users(sweep.start_users)  # auto and tiers: doubling


def _workers(text: str, users: int) -> int:
    if text == "auto":
        return workers_for(users)
    try:
        return int(number("worker processes", 1, 1024, integer=True)(text))
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--workers: {exc}.", "Give a number or `auto`.") from exc


def _check_url(flag: str, url: str) -> None:
    """Refuse a URL no HTTP client could use, before anything starts (a bare host:port is fine)."""
    text = url.strip()
    parts = urlsplit(text if "://" in text else "http://" + text)
    try:
        parts.port  # noqa: B018 - reading it validates the port
    except ValueError as exc:
        raise UsageError(f"{flag} {url!r} has an invalid port.", "Write it like http://HOST:8000.") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{flag} {url!r} is not an http(s) URL.", "Write it like http://HOST:8000.")


def _check_output_path(path: Path, flag: str) -> None:
    if path.is_dir():
        raise UsageError(f"{flag} {path} is a directory.", "Give a file path.")
    if not path.parent.exists():
        raise UsageError(f"{flag} {path}: the folder {path.parent} does not exist.")
    try:
        with path.open("a"):
            pass
    except OSError as exc:
        raise UsageError(f"{flag} {path} cannot be written: {exc.strerror}.") from exc
