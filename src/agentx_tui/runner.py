"""One run from start to exit code: validate, open the target, drive load, feed the sinks, and always
finish cleanly — whatever ends the run (duration, `q`, Ctrl-C, SIGTERM, SIGHUP, a server crash) the
report and recording are written and every launched process is stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TextIO

from agentx_tui import __version__
from agentx_tui.config import RunConfig
from agentx_tui.cost import load_presets, resolve_price
from agentx_tui.engine import stopped_on_exit
from agentx_tui.errors import EXIT_CHECK_FAILED, EXIT_OK, EXIT_TARGET, UsageError
from agentx_tui.load import (
    Driver,
    EndpointTarget,
    Workload,
    check_first_request_fits,
    fit_to_context,
    load_workload,
)
from agentx_tui.load.trace import trace_requests
from agentx_tui.report import (
    Check,
    HeadlessPrinter,
    Recorder,
    ReplayPlayer,
    ReportBuilder,
    check_report_path,
    evaluate_checks,
    parse_check,
    read_recording,
    redact_value,
    write_report,
)
from agentx_tui.runtime import Runtime
from agentx_tui.target import Target, open_target

_STOP_SIGNALS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP (terminal closed)"}


def _run_loop(main: Coroutine[Any, Any, int]) -> int:
    try:
        import uvloop

        factory: Callable[[], asyncio.AbstractEventLoop] | None = uvloop.new_event_loop
    except ImportError:  # pragma: no cover - uvloop is a dependency, but not on Windows
        factory = None
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


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


def run(config: RunConfig) -> int:
    # Everything a user can get wrong is checked before any server starts or load is sent.
    checks = [parse_check(expr) for expr in config.checks]
    if config.report is not None:
        check_report_path(config.report)
    if config.record is not None:
        _check_output_path(config.record, "--record")
    workload = load_workload(config.workload, scale=config.scale)
    if workload.kind == "trace":  # a missing or damaged trace is said before a server is started
        trace_requests(workload)
    if config.target == "sim":  # an unknown profile is a usage error, not a failed server start
        from agentx_tui.sim.profiles import load_profile  # the simulator's server stack: only when used

        load_profile(config.sim_profile)
    if config.cost_profile is not None:  # an unknown profile name is a usage error, said up front
        resolve_price(gpu_price=None, cost_profile=config.cost_profile, gpu_names=(), sim_gpu=None, gpus=config.gpus)
    else:  # the user's cost presets file is read at the first tick: a broken one is said up front too
        load_presets()
    with stopped_on_exit():  # the last line of defence: nothing this run launched survives it
        return _run_loop(_run(config, workload, checks))


async def _run(config: RunConfig, workload: Workload, checks: list[Check]) -> int:
    loop = asyncio.get_running_loop()
    stop_signal: list[signal.Signals] = []
    main_task = asyncio.current_task()

    def early_stop(sig: signal.Signals) -> None:  # a signal while the server is still starting
        stop_signal.append(sig)
        if main_task is not None:
            main_task.cancel()

    for sig in _STOP_SIGNALS:
        loop.add_signal_handler(sig, early_stop, sig)
    try:
        target = await open_target(config)
    except asyncio.CancelledError:
        sig = stop_signal[0] if stop_signal else signal.SIGINT
        _safe_print(_err, f"stopped by {_STOP_SIGNALS[sig]} during start-up")
        return _interrupted_exit_code(sig)
    try:
        return await _run_on_target(config, workload, checks, target)
    finally:
        await asyncio.to_thread(target.stop)
        launched = target.launched
        if launched is not None and launched.process.group_alive():
            # stop() escalated to SIGKILL and waited; a process stuck in the kernel can outlive even
            # that. Say so rather than leave it silently behind.
            pgid = launched.process.pgid
            _safe_print(
                _err,
                f"warning: processes of the launched server (process group {pgid}) are still running; "
                f"end them with `kill -KILL -{pgid}`.",
            )
        for sig in _STOP_SIGNALS:
            loop.remove_signal_handler(sig)


async def _run_on_target(config: RunConfig, workload: Workload, checks: list[Check], target: Target) -> int:
    notes: list[str] = []
    driver: Driver | None = None
    if not workload.is_none:
        lens = [e.max_model_len for e in target.endpoints if e.max_model_len]
        if config.scale is None and lens:
            workload, note = fit_to_context(workload, min(lens))
            if note:
                notes.append(note)
        if lens:
            check_first_request_fits(workload, min(lens), config.scale)
        driver = Driver(
            workload,
            [EndpointTarget(e.url, e.model, e.max_model_len) for e in target.endpoints],
            users=config.users,
            seed=config.seed,
            api_key=config.api_key,
        )
    runtime = Runtime(
        target,
        driver=driver,
        workload=workload.name,
        interval_s=config.interval_s,
        duration_s=config.duration_s,
        refresh_s=config.refresh_s,
        api_key=config.api_key,
        gpu_metrics_url=config.gpu_metrics,
        gpu_price=config.gpu_price,
        cost_profile=config.cost_profile,
        gpus=config.gpus,
    )
    # The first line of the dashboard's log: what is running, so the log is never blank without reason.
    doing = f"driving {config.users} users of {workload.name}" if driver is not None else "observing only, no load"
    runtime.event(f"{target.label} ready; {doing}")
    for note in notes:
        runtime.event(note)
        if config.headless:
            print(note, file=sys.stderr)
    if driver is not None:
        driver.on_event = runtime.event
    builder = ReportBuilder()
    runtime.sinks.append(builder.add)
    recorder: Recorder | None = None
    if config.record is not None:
        recorder = Recorder(config.record, _recording_header(config, target), secrets=config.secrets)
        runtime.sinks.append(recorder.write)

    loop = asyncio.get_running_loop()
    app: Any = None

    if not config.headless:
        from agentx_tui.ui import AgentXApp

        app = AgentXApp(runtime, runtime, theme=config.theme, refresh_s=config.refresh_s, secrets=config.secrets)

    interrupted: list[signal.Signals] = []

    def on_signal(sig: signal.Signals) -> None:
        interrupted.append(sig)
        runtime.request_stop(f"stopped by {_STOP_SIGNALS[sig]}", partial=True)
        if app is not None:
            app.exit()  # the runner then drains, writes the report and stops the server

    for sig in _STOP_SIGNALS:
        loop.add_signal_handler(sig, on_signal, sig)
    try:
        if driver is not None:
            await driver.start()
        if app is not None:
            await app.run_async()
            await runtime.finish()
        else:
            printer = HeadlessPrinter(sys.stdout)
            async for snap in runtime.snapshots():
                _safe_print(printer.line, snap)
    finally:
        await runtime.close()
        if recorder is not None:
            recorder.close()
        if recorder is not None and recorder.error:
            _safe_print(_err, f"warning: the recording stopped early: {recorder.error}")
    report = builder.build(partial_reason=runtime.partial_reason)
    if runtime.server_exit is not None:
        report["server_exit_code"], report["server_log_tail"] = runtime.server_exit
    report = redact_value(report, config.secrets)  # before it is printed, checked or written
    results = evaluate_checks(checks, report)
    if config.report is not None:
        write_report(config.report, report, series=builder.series(), checks=results)
    _safe_print(HeadlessPrinter(sys.stdout).summary, report, results)
    if runtime.server_exit is not None:
        # The run measured a server that died under it: a CI job must not go green on that.
        code, tail = runtime.server_exit
        _safe_print(_err, "last lines of the server's log:", *(f"  | {line}" for line in tail))
        _safe_print(
            _err,
            f"error: the launched server exited during the run (exit {code}); "
            "the report and recording cover the run up to then and are marked partial.",
        )
        return EXIT_TARGET
    if interrupted:  # the run did not go as long as asked: a job killed by a timeout must not pass
        return _interrupted_exit_code(interrupted[0])
    return EXIT_CHECK_FAILED if any(not r.passed for r in results) else EXIT_OK


def _interrupted_exit_code(sig: signal.Signals) -> int:
    return 128 + int(sig)  # the shell's convention: 130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP


def _err(*lines: str) -> None:
    for line in lines:
        print(line, file=sys.stderr, flush=True)


def _safe_print(fn: Callable[..., None], *args: Any) -> None:
    # After SIGHUP the terminal is gone; writing to it must not stop the report from being written.
    with contextlib.suppress(OSError, ValueError):
        fn(*args)


def _recording_header(config: RunConfig, target: Target) -> dict[str, Any]:
    return {
        "version": __version__,
        "target": target.label,
        "simulated": target.simulated,
        "workload": config.workload,
        "endpoints": [{"url": e.url, "model": e.model, "engine_version": e.engine_version} for e in target.endpoints],
        "settings": config.settings_for_recording(),
    }


def replay(path: Path, *, speed: float = 1.0, theme: str | None = None, out: TextIO | None = None) -> int:
    recording = read_recording(path)
    if recording.notice:
        print(recording.notice, file=out or sys.stderr)
    player = ReplayPlayer(recording, speed=speed)
    from agentx_tui.ui import AgentXApp

    async def main() -> int:
        await AgentXApp(player, player, theme=theme, title=f"agentx-tui replay {path.name}").run_async()
        return EXIT_OK

    return _run_loop(main())
