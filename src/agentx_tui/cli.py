"""The command line (docs/architecture.md, a contract): parse, dispatch, map errors to exit codes.

agentx-tui [TARGET] [WORKLOAD] [COST] [OUTPUT] [SWEEP] [SCALE]   the dashboard (or --headless)
agentx-tui replay PATH                            play a recording back
agentx-tui compare A.json B.json                  two reports side by side
agentx-tui workloads                              list workload presets
agentx-tui keys                                   list the report keys, their units and meanings
agentx-tui sim [--profile GPU/MODEL] …            the simulated engine alone (docs/sim.md)
agentx-tui sessions pull NAME|URL [--to DIR]      a public AgentX session corpus into the local cache
agentx-tui --web [HOST:]PORT …                    the same dashboard served to browsers (docs/web.md)

Parsing only reads the flags (their numbers are checked here: finite, in range); everything that
needs a file or a lookup is checked by `run.preflight`, still before any server starts.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from agentx_tui import __version__
from agentx_tui.args import (
    DEFAULT_USERS,
    MAX_ACCEPTANCE_LENGTH,
    MAX_SECONDS,
    MAX_USERS,
    Parser,
    gpu_peak,
    number,
    seconds,
    whole,
)
from agentx_tui.errors import AgentXError, LaunchError, UsageError
from agentx_tui.redaction import redact
from agentx_tui.sim import DEFAULT_PROFILE as DEFAULT_SIM_PROFILE
from agentx_tui.sim import add_cpu_tier_options, add_step_options
from agentx_tui.terminal import wants_color
from agentx_tui.web.address import parse_web_address

SUBCOMMANDS = ("replay", "compare", "workloads", "keys", "sim", "sessions")


def _port(text: str) -> int:
    return whole("ports", 1, 65535)(text)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="agentx-tui",
        description="Live dashboard for agent-serving on vLLM: GPU, KV cache, prefix cache, tokens/s, "
        "tokens per dollar. Other commands: `agentx-tui replay PATH`, `agentx-tui compare A.json B.json`, "
        "`agentx-tui workloads`, `agentx-tui keys` (the report keys --check names), `agentx-tui sim`, "
        "`agentx-tui sessions pull NAME`.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"agentx-tui {__version__}")
    _target_flags(p.add_argument_group("target (default: the built-in simulated engine)"))
    _workload_flags(p.add_argument_group("workload"))
    c = p.add_argument_group("cost")
    c.add_argument(
        "--gpu-price",
        type=number("USD per GPU-hour", 0, 10_000, lo_open=True),
        metavar="USD",
        help="USD per GPU-hour (default: the preset for the detected GPU)",
    )
    c.add_argument("--cost-profile", metavar="NAME", help="a cost preset, e.g. h200 or h200-owned")
    c.add_argument(
        "--gpus",
        type=whole("GPUs", 1, 1_000_000),
        metavar="N",
        help="GPUs behind the target, for per-GPU figures and cost (default: detected)",
    )
    c.add_argument(
        "--gpu-peak",
        type=gpu_peak,
        metavar="TFLOPS,TBPS",
        help="one GPU's dense peak TFLOP/s (of the dtype in use) and HBM TB/s, for MFU and MBU "
        "(default: the datasheet row for the detected GPU, or the simulator's profile)",
    )
    _output_flags(p.add_argument_group("output"))
    _sweep_flags(p.add_argument_group("sweep (docs/sweeps.md: throughput vs interactivity)"))
    _agentx_flags(p.add_argument_group('AgentX (docs/sweeps.md, "AgentX validity")'))
    _scale_flags(p.add_argument_group("scale (docs/scale.md)"))
    _traffic_flags(p.add_argument_group("your own traffic (docs/capture.md)"))
    d = p.add_argument_group("demo (docs/web.md)")
    d.add_argument(
        "--web",
        type=parse_web_address,
        metavar="[HOST:]PORT",
        help="serve this same dashboard to web browsers, one page at a time, each page a run of its own "
        "(default host 127.0.0.1; another host is reachable by anyone, with no authentication)",
    )
    return p


def _target_flags(t: argparse._ArgumentGroup) -> None:
    t.add_argument(
        "--attach",
        metavar="URL",
        action="append",
        default=[],
        help="attach to a running OpenAI-compatible vLLM server; repeatable",
    )
    t.add_argument(
        "--serve",
        metavar="MODEL",
        help="launch `vllm serve MODEL`, wait until healthy, stop it on exit; "
        "`tiny` builds and serves the bundled tiny random-weight model",
    )
    t.add_argument(
        "--vllm-arg",
        metavar="ARG",
        action="append",
        default=[],
        help="extra argument for the launched vLLM; repeatable (e.g. --vllm-arg=--max-num-seqs=16)",
    )
    t.add_argument(
        "--sim",
        metavar="PROFILE",
        nargs="?",
        const=DEFAULT_SIM_PROFILE,
        help=f"the built-in simulated engine, GPU/MODEL profile (default {DEFAULT_SIM_PROFILE})",
    )
    add_step_options(t, prefix="sim-")  # the embedded simulator's, as `agentx-tui sim` has them
    add_cpu_tier_options(t, prefix="sim-")
    t.add_argument("--port", type=_port, metavar="P", help="port for a launched or simulated server (default: free)")
    t.add_argument(
        "--vllm-cmd",
        metavar="CMD",
        help="how to start vLLM (default: AGENTX_VLLM_PYTHON, the setup script's environment, then `vllm` on PATH)",
    )
    t.add_argument(
        "--api-key",
        metavar="KEY",
        help="API key for the server (default: AGENTX_API_KEY, VLLM_API_KEY or OPENAI_API_KEY)",
    )
    t.add_argument(
        "--startup-timeout",
        type=seconds(hi=86_400),
        default=900.0,
        metavar="S",
        help="seconds to wait for a launched server to become healthy (default 900)",
    )
    t.add_argument(
        "--gpu-metrics", metavar="URL", help="read GPU figures from a DCGM exporter at URL (for remote servers)"
    )


def _workload_flags(w: argparse._ArgumentGroup) -> None:
    w.add_argument(
        "-w",
        "--workload",
        default="coding-agent",
        metavar="NAME|PATH",
        help="a preset (see `agentx-tui workloads`), a YAML file, a Mooncake .jsonl trace, a folder of "
        "AgentX agent-session .json files (or one such file), a published session corpus `hf:OWNER/NAME[@REV]` "
        "(pulled first), or `none` to observe only (default coding-agent)",
    )
    w.add_argument(
        "-u",
        "--users",
        type=whole("users", 0, MAX_USERS),
        default=None,
        metavar="N",
        help=f"concurrent users, changeable live with +/- (default {DEFAULT_USERS}; at most {MAX_USERS:,})",
    )
    w.add_argument(
        "--scale",
        type=number("the scale", 0, 100, lo_open=True),
        metavar="F",
        help="multiply every token length by F (default: shrink a preset to fit the model's context)",
    )
    w.add_argument(
        "--output-scale",
        type=number("the output scale", 0, 100, lo_open=True),
        default=1.0,
        metavar="F",
        help="multiply every answer's length (drawn or recorded) by F, nothing else, e.g. 0.7: what answers "
        "30%% shorter would save (compare with a plain run; docs/metrics.md)",
    )
    w.add_argument(
        "--duration",
        type=seconds(),
        metavar="SECONDS",
        help="stop after this many seconds; the dashboard's pause (p) stops the clock (default: until quit)",
    )
    w.add_argument("--seed", type=int, default=0, metavar="N", help="random seed for the workload (default 0)")


def _output_flags(o: argparse._ArgumentGroup) -> None:
    o.add_argument("--headless", action="store_true", help="no TUI: print a compact line per interval, then a summary")
    o.add_argument(
        "--report",
        type=Path,
        action="append",
        default=[],
        metavar="PATH",
        help="write the final report (.json, .md or .csv, by the extension); repeatable: one file each",
    )
    o.add_argument("--record", type=Path, metavar="PATH", help="append every snapshot as one JSON line")
    o.add_argument(
        "--check",
        action="append",
        default=[],
        metavar="EXPR",
        help="SLO check on the report, e.g. 'ttft_p90_s <= 2'; repeatable; a failure exits 1",
    )
    o.add_argument(
        "--interval",
        type=seconds(0.05, 3600, lo_open=False),
        default=1.0,
        metavar="S",
        help="seconds between samples (default 1)",
    )
    o.add_argument(
        "--refresh",
        type=seconds(0.05, 60, lo_open=False),
        default=0.5,
        metavar="S",
        help="seconds between dashboard redraws (default 0.5)",
    )
    o.add_argument("--theme", metavar="NAME", type=_theme, help="dashboard theme (default agentx-dark; t cycles)")


def _theme(text: str) -> str:
    """`--theme`: a name a theme file gives, checked in every mode before anything starts (the files are read
    only when the flag is given: `--help` stays fast)."""
    from agentx_tui.themefiles import theme_name

    return theme_name(text)


def _sweep_flags(s: argparse._ArgumentGroup) -> None:
    s.add_argument(
        "--sweep",
        metavar="users=N,N,…|auto|tiers",
        help="one measured point per user count, sessions kept running, then the frontier; "
        "`auto` doubles the users until a stop rule says the curve is done; `tiers` (the default with "
        "--agentx) probes where p90 interactivity crosses each tier with short windows, then measures full "
        "points only beside the crossings",
    )
    s.add_argument(
        "--warmup",
        type=seconds(0, MAX_SECONDS, lo_open=False),
        metavar="S",
        help="a sweep point's (and probe's) window opens once its load is steady (MSER-5 on throughput and "
        "p90 E2E per output token) and every user has 10 requests done: S is the most it waits (default "
        "120; 900 with --agentx); a plain run: its first S seconds, whose requests its latency, "
        "interactivity, hit-rate and rate figures leave out (default 0)",
    )
    s.add_argument(
        "--point-duration",
        type=seconds(),
        metavar="S",
        help="per point: seconds measured (default 60; 1800 with --agentx)",
    )
    s.add_argument(
        "--probe-duration",
        type=seconds(),
        metavar="S",
        help="--sweep tiers: a probe's window, seconds (default a tenth of --point-duration, at least 30; "
        "longer until it has counted 20 requests, at most --point-duration)",
    )
    s.add_argument(
        "--tiers",
        metavar="T,T,…",
        help="interactivity tiers (tok/s/user, p90) at which the frontier is read "
        "(default 30,50,75,100,150,200; 30,50,75,100 with --agentx)",
    )
    s.add_argument(
        "--frontier-axis",
        metavar="e2e|decode",
        help="the frontier's x-axis: `e2e`, AgentX's North Star, E2E-normalized interactivity (1 / p90 of "
        "end-to-end latency per output token; the default), or `decode`, decode interactivity (1 / p90 of "
        "per-request ITL); tier reads are made on both, the auto stop rule and --precision use this one",
    )
    s.add_argument(
        "--precision",
        type=number("the precision", 0, 1, lo_open=True),
        metavar="F",
        help="end a point once the 95%% intervals of its throughput and of its p90 interactivity (on "
        "--frontier-axis) are each within ±F of the value (after at least 20 requests), e.g. 0.05; "
        "--point-duration is then the longest a point may take (a plain run: ends likewise, --duration the longest)",
    )
    s.add_argument(
        "--join",
        choices=("start", "midway"),
        help="a user's first session (agent sessions, session replays): `start` sends it from its first step; "
        "`midway` joins it at a step drawn at random, the steps before built into its history unsent, so that "
        "users a sweep adds bring a running load's context lengths (default midway in a sweep, start otherwise)",
    )
    s.add_argument(
        "--sessions",
        type=whole("session trees", 1, 1_000_000_000),
        metavar="N",
        help="start N sessions (session trees) in all, then end when they have ended",
    )
    s.add_argument(
        "--max-think",
        type=seconds(0, MAX_SECONDS, lo_open=False),
        metavar="S",
        help="cap every think time (recorded or drawn) at S seconds; 0 = back to back",
    )


def _agentx_flags(a: argparse._ArgumentGroup) -> None:
    a.add_argument(
        "--agentx",
        action="store_true",
        help="the defaults AgentX's rules need: --point-duration 1800, --warmup 900, --frontier-axis e2e (the "
        "North Star), --tiers 30,50,75,100 and, without --sweep or --duration, --sweep tiers; a flag you give "
        "wins (the run is then labelled by the rule it breaks); and the harness's replay: whole-system idle gaps "
        "capped at 10 s. Every run is judged by the rules, with or without it",
    )
    a.add_argument(
        "--server-dram-gb",
        type=number("GB of DRAM", 0, 1e9, lo_open=True),
        metavar="GB",
        help="the DRAM of each server behind the target, for AgentX's KV offload budget "
        "(default: this machine's for --serve and the simulator; unknown for --attach)",
    )
    a.add_argument(
        "--server-gpus",
        type=whole("GPUs", 1, 1_000_000),
        metavar="N",
        help="the GPUs in each server behind the target, for AgentX's KV offload budget "
        "(default: the GPUs NVML sees for --serve; unknown otherwise)",
    )
    a.add_argument(
        "--spec-golden",
        type=number("the golden acceptance length", 1, MAX_ACCEPTANCE_LENGTH),
        metavar="AL",
        help="the acceptance length AgentX pins the served model's speculative decoding to (1 + accepted "
        "÷ drafts), for any model (default: the golden table's, for the model and its draft length)",
    )


def _scale_flags(s: argparse._ArgumentGroup) -> None:
    s.add_argument(
        "--workers",
        default="auto",
        metavar="N|auto",
        help="load-generator processes on this machine (default auto: 1 for small runs, more for many users)",
    )
    s.add_argument(
        "--ray", metavar="ADDRESS", help="run the load workers as Ray actors on an existing Ray cluster (extra `ray`)"
    )
    s.add_argument(
        "--prometheus",
        metavar="URL",
        help="read every replica's vLLM and DCGM series from an existing Prometheus "
        "(token from AGENTX_PROMETHEUS_TOKEN); load goes to --attach URLs if given",
    )
    s.add_argument("--selector", metavar="'{label=\"v\"}'", help="PromQL label selector for --prometheus")
    s.add_argument(
        "--prometheus-header",
        metavar="'Name: value'",
        action="append",
        default=[],
        help="extra header for --prometheus (e.g. X-Scope-OrgID); repeatable",
    )


def _traffic_flags(g: argparse._ArgumentGroup) -> None:
    g.add_argument(
        "--proxy",
        metavar="[HOST:]PORT",
        help="also listen here (default host 127.0.0.1) and forward every request, unchanged and streamed, "
        "to the target; real agents pointed at it show up live beside (or, with -w none, instead of) "
        "the simulated users",
    )
    g.add_argument(
        "--capture",
        type=Path,
        metavar="DIR",
        help="with --proxy: write the proxied sessions as AgentX session files (no text; `-w DIR` replays them)",
    )
    g.add_argument(
        "--session-header",
        metavar="NAME",
        help="with --proxy: the header naming a request's session (default X-Session-ID; the parent's is "
        "X-Parent-Session-ID), else the `user` field, else inferred",
    )
    g.add_argument(
        "--session-idle",
        type=seconds(),
        metavar="S",
        help="with --proxy: a session tree with no call for S seconds has ended (default 120): its task "
        "is counted and, with --capture, its file written",
    )


def _replay_parser() -> argparse.ArgumentParser:
    p = Parser(prog="agentx-tui replay", description="Play a recording back in the dashboard.")
    p.add_argument("path", type=Path, help="a file written by --record")
    p.add_argument(
        "--speed", type=number("the speed", 1 / 64, 64), default=1.0, help="playback speed, 1/64 to 64 (default 1)"
    )
    p.add_argument("--theme", metavar="NAME", type=_theme, help="dashboard theme")
    return p


def _sessions_parser() -> argparse.ArgumentParser:
    p = Parser(prog="agentx-tui sessions", description="Published AgentX session corpora (docs/sessions.md).")
    actions = p.add_subparsers(dest="action", metavar="pull", required=True, parser_class=Parser)
    pull = actions.add_parser(
        "pull",
        help="fetch a public AgentX session corpus into the local cache and print its folder",
        description="Fetch a public AgentX session corpus (a Hugging Face dataset) into the hub's local cache, "
        "pinned to a commit, check that its sessions load, and print its folder (`-w FOLDER` replays it; "
        "`-w hf:NAME` pulls and replays in one step). Offline, the cached copy is used. "
        "Environment: HF_HOME (the cache), HF_ENDPOINT (a mirror), HF_TOKEN (a private dataset).",
    )
    pull.add_argument(
        "name",
        metavar="NAME|URL",
        help="OWNER/NAME[@REVISION] or https://huggingface.co/datasets/OWNER/NAME[/tree/REVISION], "
        "e.g. semianalysisai/cc-traces-weka-062126",
    )
    pull.add_argument("--to", type=Path, metavar="DIR", help="also put the files in DIR (to keep) and print DIR")
    return p


def _sessions(argv: Sequence[str]) -> int:
    from agentx_tui.corpus import keep_files, parse_corpus_name, pull_corpus
    from agentx_tui.load import survey_sessions

    args = _sessions_parser().parse_args(argv)
    pulled = pull_corpus(parse_corpus_name(args.name), progress=sys.stderr.isatty())
    if (notice := pulled.notice()) is not None:
        print(notice, file=sys.stderr)
    print(pulled.summary(), file=sys.stderr, flush=True)  # before the check: a 2 GB corpus takes minutes to read
    figures = survey_sessions(pulled.folder)  # a file the replay cannot read: one sentence naming it, exit 2
    folder = keep_files(pulled.folder, pulled.files, args.to) if args.to is not None else pulled.folder
    print(figures.describe(pulled.folder), file=sys.stderr)
    print(folder)
    return 0


def _join_vllm_args(argv: Sequence[str]) -> list[str]:
    # `--vllm-arg --max-num-seqs` would read as two options; bind the value to the flag instead.
    out: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg == "--vllm-arg":
            value = next(it, None)
            if value is None:
                raise UsageError("--vllm-arg needs a value.", "For example --vllm-arg=--max-num-seqs=16.")
            out.append(f"--vllm-arg={value}")
        else:
            out.append(arg)
    return out


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    return build_parser().parse_args(_join_vllm_args(argv))


def _run_subcommand(name: str, argv: Sequence[str]) -> int:
    if name == "workloads":
        from agentx_tui.load import list_presets

        Parser(prog="agentx-tui workloads", description="List the workload presets.").parse_args(argv)
        presets = list_presets()
        width = max(len(n) for n, _ in presets)
        for preset, description in presets:
            print(f"{preset:<{width}}  {description}")
        return 0
    if name == "keys":
        from agentx_tui.report import keys_listing

        Parser(
            prog="agentx-tui keys",
            description="List the report's keys with their units and meanings: the figures a --check may name.",
        ).parse_args(argv)
        print(keys_listing())
        return 0
    if name == "sim":
        from agentx_tui.sim import sim_command

        return sim_command(argv)
    if name == "compare":
        from agentx_tui.report import compare_main

        return compare_main(argv)
    if name == "sessions":
        return _sessions(argv)
    from agentx_tui.run import replay

    args = _replay_parser().parse_args(argv)
    return replay(args.path, speed=args.speed, theme=args.theme)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            return _run_subcommand(argv[0], argv[1:])
        args = parse_args(argv)
        if args.web is not None:
            from agentx_tui.web.serve import serve_web

            return serve_web(args, _join_vllm_args(argv), _long_options(build_parser()))
        from agentx_tui.run import build_plan, execute  # imported after parsing: --help stays fast

        return execute(build_plan(args))
    except AgentXError as exc:
        _print_error(exc, _known_secrets(argv))
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


def _long_options(parser: argparse.ArgumentParser) -> list[str]:
    """Every long option, as argparse matches them (abbreviations included) when it reads argv."""
    return [option for action in parser._actions for option in action.option_strings if option.startswith("--")]


def _known_secrets(argv: Sequence[str]) -> list[str]:
    """The credentials this run may use: from the environment and from the command line."""
    from agentx_tui.run import API_KEY_ENV
    from agentx_tui.telemetry import PROMETHEUS_TOKEN_ENV

    found = [value for name in (*API_KEY_ENV, PROMETHEUS_TOKEN_ENV) if (value := os.environ.get(name))]
    for i, arg in enumerate(argv):
        for flag in ("--api-key", "--prometheus-header"):
            if arg == flag and i + 1 < len(argv):
                found.append(argv[i + 1])
            elif arg.startswith(flag + "="):
                found.append(arg.split("=", 1)[1])
    # A header's value is the secret part ("X-Scope-OrgID: tenant-1"): mask it on its own too.
    found += [v.split(":", 1)[1].strip() for v in list(found) if ":" in v]
    return found


def _print_error(exc: AgentXError, secrets: Sequence[str] = ()) -> None:
    # A server's answer can end up in a message (an error page that repeats the request's key).
    color = wants_color(sys.stderr)
    prefix = "\x1b[31merror:\x1b[0m" if color else "error:"
    if isinstance(exc, LaunchError) and exc.log_tail:
        print("last lines of the server's log:", file=sys.stderr)
        for line in exc.log_tail:
            print(redact(f"  | {line}", secrets), file=sys.stderr)
    print(redact(f"{prefix} {exc}", secrets), file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
