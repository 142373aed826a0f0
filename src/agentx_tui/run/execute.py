"""One run from plan to exit code (docs/architecture.md): open the serving side, start the load, tick, finish.

Whatever ends the run — its duration or sweep, `q`, Ctrl-C, SIGTERM, SIGHUP, a server crash — the
report and the recording are written and every launched process is stopped (`stopped_on_exit` is the
last line of defence). Exit codes: 0 ok, 1 a check failed, 3 the target failed, 128+N a signal.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TextIO

from agentx_tui.engine import stopped_on_exit
from agentx_tui.errors import EXIT_CHECK_FAILED, EXIT_OK, EXIT_TARGET
from agentx_tui.load import (
    Driver,
    LoadGenerator,
    LocalLoad,
    PreparedWorkload,
    WorkerHandle,
    WorkerPool,
    WorkerSpec,
    fit_to_servers,
    ray_actors,
    workers_for,
)
from agentx_tui.measure import ClientStats
from agentx_tui.net import is_loopback_host
from agentx_tui.proxy import LiveProxy
from agentx_tui.recording import RecordedEndpoint, Recorder, RecordingHeader, ReplayPlayer, read_recording
from agentx_tui.redaction import redact_value
from agentx_tui.report import HeadlessPrinter, Report, ReportBuilder, evaluate_checks, write_reports
from agentx_tui.run.agentx import AgentXWatch, agentx_setup
from agentx_tui.run.collect import EventLog
from agentx_tui.run.live import LiveRun, Outcome
from agentx_tui.run.phases import Phases, TimedRun
from agentx_tui.run.plan import RunPlan
from agentx_tui.run.precise import PreciseRun
from agentx_tui.run.serving import Serving, open_serving
from agentx_tui.run.subscribers import DashboardFeed, Fanout, Subscriber
from agentx_tui.run.sweep import SweepPhases
from agentx_tui.run.traffic import Traffic
from agentx_tui.units import outputs_scaled

STOP_SIGNALS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP (terminal closed)"}


def run_loop(main: Coroutine[Any, Any, int]) -> int:
    try:
        import uvloop

        factory: Callable[[], asyncio.AbstractEventLoop] | None = uvloop.new_event_loop
    except ImportError:  # pragma: no cover - uvloop is a dependency, but not on Windows
        factory = None
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


def execute(plan: RunPlan) -> int:
    with stopped_on_exit():  # the last line of defence: nothing this run launched survives it
        return run_loop(_execute(plan))


async def _execute(plan: RunPlan) -> int:
    loop = asyncio.get_running_loop()
    stop_signal: list[signal.Signals] = []
    main_task = asyncio.current_task()

    def early_stop(sig: signal.Signals) -> None:  # a signal while the server is still starting
        stop_signal.append(sig)
        if main_task is not None:
            main_task.cancel()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, early_stop, sig)
    try:
        serving = await open_serving(plan.target, api_key=plan.api_key, interval_s=plan.output.interval_s)
    except asyncio.CancelledError:
        sig = stop_signal[0] if stop_signal else signal.SIGINT
        _safe_print(_err, f"stopped by {STOP_SIGNALS[sig]} during start-up")
        return interrupted_exit_code(sig)
    try:
        return await _run_on(plan, serving)
    finally:
        await serving.aclose()
        launched = serving.launched
        if launched is not None and launched.process.group_alive():
            # stop() escalated to SIGKILL and waited; a process stuck in the kernel can outlive even
            # that. Say so rather than leave it silently behind.
            pgid = launched.process.pgid
            _safe_print(
                _err,
                f"warning: processes of the launched server (process group {pgid}) are still running; "
                f"end them with `kill -KILL -{pgid}`.",
            )
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


def _fit(plan: RunPlan, serving: Serving, notes: list[str]) -> PreparedWorkload:
    """The workload at the scale that fits the servers' context (said in the notes when changed)."""
    workload, note = fit_to_servers(plan.load.workload, [s.max_model_len for s in serving.endpoints], plan.load.scale)
    if note:
        notes.append(note)
    return workload


def _load(plan: RunPlan, serving: Serving, workload: PreparedWorkload) -> LoadGenerator | None:
    if not plan.load.sends_load or not serving.endpoints:
        return None
    spawn = None
    workers = plan.load.workers
    if plan.load.ray_address is not None:
        ray = ray_actors.connect(plan.load.ray_address, [e.url for e in serving.endpoints])
        if plan.load.workers_auto:  # one actor per node at least, more for many users, within the CPUs
            cpus, nodes = ray_actors.cluster_cpus(ray), ray_actors.cluster_nodes(ray)
            workers = workers_for(plan.load.users, cores=cpus, at_least=nodes)

        def spawn(spec: WorkerSpec) -> WorkerHandle:
            return ray_actors.RayWorker(ray, spec)

    settings = plan.load.settings
    if workers > 1 or spawn is not None or not plan.load.in_process:
        return WorkerPool(workload, tuple(serving.endpoints), settings, workers=workers, spawn=spawn)
    return LocalLoad(Driver(workload, serving.endpoints, settings))


def _traffic(plan: RunPlan, serving: Serving, load: LoadGenerator | None, notes: list[str]) -> Traffic:
    """The simulated users' load and, with `--proxy`, the real agents' traffic beside it: one ClientStats
    counts both (a proxy-only run has one of its own)."""
    proxy_plan = plan.proxy
    if proxy_plan is None or not serving.endpoints:
        return Traffic(load, None, load.stats if load is not None else None)
    stats = load.stats if load is not None else ClientStats(plan.load.settings.window_s, time.monotonic())
    target = serving.endpoints[0]  # the first --attach URL, the launched server or the simulator
    proxy = LiveProxy(
        target.url,
        proxy_plan.host,
        proxy_plan.port,
        sink=stats,
        capture_dir=proxy_plan.capture_dir,
        model=target.model,
        session_header=proxy_plan.session_header,
        api_key=plan.api_key,
        idle_s=proxy_plan.session_idle_s,
        block_size=target.block_size,
    )
    if not is_loopback_host(proxy_plan.host):
        notes.append(
            f"warning: the proxy listens on {proxy_plan.host}:{proxy_plan.port}, reachable from other machines; "
            f"whoever reaches it reaches {target.url} with the key the agents send"
        )
    return Traffic(load, proxy, stats)


def _phases(plan: RunPlan) -> Phases:
    sweep = plan.sweep
    if sweep is None:
        if plan.precision is None:
            return TimedRun(plan.duration_s, warmup_s=plan.warmup_s, axis=plan.frontier_axis)
        return PreciseRun(plan.duration_s, plan.precision, warmup_s=plan.warmup_s, axis=plan.frontier_axis)
    return SweepPhases(
        sweep.users,
        start_users=sweep.start_users,
        warmup_s=sweep.warmup_s,
        point_duration_s=sweep.point_duration_s,
        tiers=sweep.tiers,
        precision=plan.precision,
        axis=plan.frontier_axis,
        targeted=sweep.targeted,
        probe_duration_s=sweep.probe_duration_s,
        joined_midway=plan.load.settings.join == "midway",
    )


async def _run_on(plan: RunPlan, serving: Serving) -> int:
    notes: list[str] = []
    workload = _fit(plan, serving, notes)
    traffic = _traffic(plan, serving, _load(plan, serving, workload), notes)
    load = traffic.load
    events = EventLog(plan.secrets)
    builder = ReportBuilder()
    subscribers: list[Subscriber] = [builder]
    recorder: Recorder | None = None
    if plan.output.record is not None:
        recorder = Recorder(plan.output.record, _recording_header(plan, serving), secrets=plan.secrets)
        subscribers.append(recorder)
    feed: DashboardFeed | None = None
    if plan.output.headless:
        subscribers.append(HeadlessPrinter(sys.stdout))
    else:
        feed = DashboardFeed()
        subscribers.append(feed)
    fanout = Fanout(subscribers, on_error=events.add)
    agentx = AgentXWatch(
        agentx_setup(plan, simulated=serving.simulated), events.add, nvml_counts=plan.target.kind == "serve"
    )
    live = LiveRun(plan, serving, traffic if traffic.measures else None, _phases(plan), fanout, events, agentx=agentx)
    # The first line of the dashboard's log: what is running, so the log is never blank without reason.
    doing = f"driving {plan.load.users} users of {workload.name}" if load is not None else "observing only, no load"
    if load is not None and (outputs := outputs_scaled(plan.load.output_scale)):
        doing += f" ({outputs})"
    if traffic.proxy is not None:
        doing += f"; real agents through the proxy at {traffic.proxy.url}"
    events.add(f"{serving.label} ready; {doing}")
    for note in notes:
        events.add(note)
        if plan.output.headless or note.startswith("warning:"):
            _safe_print(_err, note)
    traffic.set_events(events.add)

    app: Any = None
    if feed is not None:
        from agentx_tui.ui import AgentXApp

        app = AgentXApp(feed, live, theme=plan.output.theme, refresh_s=plan.output.refresh_s, secrets=plan.secrets)
    interrupted: list[signal.Signals] = []

    def on_signal(sig: signal.Signals) -> None:
        interrupted.append(sig)
        live.request_stop(f"stopped by {STOP_SIGNALS[sig]}", partial=True)
        if app is not None:
            app.exit()  # the tick loop then drains, publishes the final snapshot, and the report is written

    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, on_signal, sig)
    try:
        ticking = asyncio.create_task(live.run(), name="agentx-ticks")
        # The load starts after the first scrape: the servers' counters then cover exactly the
        # requests the client counts, from the first one on.
        await live.first_tick()
        if traffic.measures and not live.stopping:
            try:
                await traffic.start()
            except BaseException:  # a worker or the proxy that could not start (one sentence), a signal
                live.request_stop("the load could not start", partial=True)
                await ticking  # the tick loop closes its subscribers before the error is said
                raise
            if traffic.proxy is not None:  # with --proxy 0 the port is known only now
                where = f"agents' base URL: {traffic.proxy.url}/v1 (forwarded to {traffic.proxy.server.upstream})"
                events.add(f"proxy listening; {where}")
                _safe_print(_err, f"proxy listening; {where}")
        if app is not None:
            await app.run_async()
            live.request_stop("quit from the dashboard")
        outcome = await ticking
    finally:
        await live.close()
        await traffic.close()  # (live.close did, unless there was nothing to measure)
        if plan.load.ray_address is not None:
            ray_actors.disconnect()
        if recorder is not None:
            recorder.close()
    if recorder is not None and recorder.error:
        _safe_print(_err, f"warning: the recording stopped early: {recorder.error}")
    return _finish(plan, builder, outcome, interrupted, live)


def _finish(
    plan: RunPlan, builder: ReportBuilder, outcome: Outcome, interrupted: list[signal.Signals], live: LiveRun
) -> int:
    """The report, the checks, the summary and the exit code: once, whatever ended the run."""
    data = builder.build(partial_reason=outcome.partial_reason).model_dump()
    if outcome.server_exit is not None:
        data["server_exit_code"], data["server_log_tail"] = outcome.server_exit
    report = Report.model_validate(redact_value(data, plan.secrets))  # before it is printed, checked or written
    results = evaluate_checks(plan.output.checks, report)
    write_reports(plan.output.reports, report, series=builder.series(), checks=results)
    _safe_print(HeadlessPrinter(sys.stdout).summary, report, results)
    if outcome.server_exit is not None:
        # The run measured a server that died under it: a CI job must not go green on that.
        code, tail = outcome.server_exit
        _safe_print(_err, "last lines of the server's log:", *(f"  | {line}" for line in tail))
        _safe_print(
            _err,
            f"error: the launched server exited during the run (exit {code}); "
            "the report and recording cover the run up to then and are marked partial.",
        )
        return EXIT_TARGET
    if interrupted:  # the run did not go as long as asked: a job killed by a timeout must not pass
        return interrupted_exit_code(interrupted[0])
    return EXIT_CHECK_FAILED if any(not r.passed for r in results) else EXIT_OK


def interrupted_exit_code(sig: signal.Signals) -> int:
    return 128 + int(sig)  # the shell's convention: 130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP


def _err(*lines: str) -> None:
    for line in lines:
        print(line, file=sys.stderr, flush=True)


def _safe_print(fn: Callable[..., None], *args: Any) -> None:
    # After SIGHUP the terminal is gone; writing to it must not stop the report from being written.
    with contextlib.suppress(OSError, ValueError):
        fn(*args)


def _recording_header(plan: RunPlan, serving: Serving) -> RecordingHeader:
    return RecordingHeader.now(
        target=serving.label,
        simulated=serving.simulated,
        workload=plan.load.workload.name,
        endpoints=tuple(
            RecordedEndpoint(url=e.url, model=e.model, engine_version=e.engine_version) for e in serving.endpoints
        ),
        settings=plan.recorded_settings(),
    )


def replay(path: Path, *, speed: float = 1.0, theme: str | None = None, out: TextIO | None = None) -> int:
    recording = read_recording(path)
    if recording.notice:
        print(recording.notice, file=out or sys.stderr)
    player = ReplayPlayer(recording, speed=speed)
    from agentx_tui.ui import AgentXApp

    async def main() -> int:
        await AgentXApp(player, player, theme=theme, title=f"agentx-tui replay {path.name}").run_async()
        return EXIT_OK

    return run_loop(main())
