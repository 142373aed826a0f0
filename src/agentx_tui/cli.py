"""The command line (DESIGN §3, a contract): parse, validate, dispatch; map errors to exit codes.

agentx-tui [TARGET] [WORKLOAD] [COST] [OUTPUT]    the dashboard (or --headless)
agentx-tui replay PATH                            play a recording back
agentx-tui workloads                              list workload presets
agentx-tui sim [--port P] [--profile GPU/MODEL]   the simulated engine alone
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from agentx_tui import __version__
from agentx_tui.config import API_KEY_ENV, DEFAULT_SIM_PROFILE, RunConfig, api_key_from_env
from agentx_tui.errors import AgentXError, LaunchError, UsageError

SUBCOMMANDS = ("replay", "workloads", "sim")


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors raise (one sentence, exit 2) instead of printing the usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message[0].upper()}{message[1:]}.", f"See `{self.prog} --help`.")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="agentx-tui",
        description="Live dashboard for agent-serving on vLLM: GPU, KV cache, prefix cache, tokens/s, "
        "tokens per dollar. Other commands: `agentx-tui replay PATH`, `agentx-tui workloads`, "
        "`agentx-tui sim`.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"agentx-tui {__version__}")
    t = p.add_argument_group("target (default: the built-in simulated engine)")
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
    t.add_argument("--port", type=int, metavar="P", help="port for a launched or simulated server (default: free)")
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
        type=float,
        default=900.0,
        metavar="S",
        help="seconds to wait for a launched server to become healthy (default 900)",
    )
    t.add_argument(
        "--gpu-metrics", metavar="URL", help="read GPU figures from a DCGM exporter at URL (for remote servers)"
    )
    w = p.add_argument_group("workload")
    w.add_argument(
        "-w",
        "--workload",
        default="coding-agent",
        metavar="NAME|PATH",
        help="a preset (see `agentx-tui workloads`), a YAML file, a Mooncake .jsonl trace, "
        "or `none` to observe only (default coding-agent)",
    )
    w.add_argument(
        "-u",
        "--users",
        type=int,
        default=8,
        metavar="N",
        help="concurrent agent sessions, changeable live with +/- (default 8)",
    )
    w.add_argument(
        "--scale",
        type=float,
        metavar="F",
        help="multiply every token length by F (default: shrink to fit the model's context)",
    )
    w.add_argument(
        "--duration", type=float, metavar="SECONDS", help="stop after this many seconds (default: until quit)"
    )
    w.add_argument("--seed", type=int, default=0, metavar="N", help="random seed for the workload (default 0)")
    c = p.add_argument_group("cost")
    c.add_argument(
        "--gpu-price", type=float, metavar="USD", help="USD per GPU-hour (default: the preset for the detected GPU)"
    )
    c.add_argument("--cost-profile", metavar="NAME", help="a cost preset, e.g. h200 or h200-owned")
    c.add_argument("--gpus", type=int, metavar="N", help="number of GPUs to charge for (default: detected)")
    o = p.add_argument_group("output")
    o.add_argument("--headless", action="store_true", help="no TUI: print a compact line per interval, then a summary")
    o.add_argument("--report", type=Path, metavar="PATH", help="write the final report (.json, .md or .csv)")
    o.add_argument("--record", type=Path, metavar="PATH", help="append every snapshot as one JSON line")
    o.add_argument(
        "--check",
        action="append",
        default=[],
        metavar="EXPR",
        help="SLO check on the report, e.g. 'ttft_p90_s <= 2'; repeatable; a failure exits 1",
    )
    o.add_argument("--interval", type=float, default=1.0, metavar="S", help="seconds between samples (default 1)")
    o.add_argument(
        "--refresh", type=float, default=0.5, metavar="S", help="seconds between dashboard redraws (default 0.5)"
    )
    o.add_argument("--theme", metavar="NAME", help="dashboard theme (default agentx-dark; t cycles)")
    return p


def _replay_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="agentx-tui replay", description="Play a recording back in the dashboard.")
    p.add_argument("path", type=Path, help="a file written by --record")
    p.add_argument("--speed", type=float, default=1.0, help="playback speed (default 1)")
    p.add_argument("--theme", metavar="NAME", help="dashboard theme")
    return p


def _sim_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="agentx-tui sim", description="Run the simulated engine as an OpenAI-compatible server.")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--profile", default=DEFAULT_SIM_PROFILE, help=f"GPU/MODEL (default {DEFAULT_SIM_PROFILE})")
    p.add_argument("--list-profiles", action="store_true", help="list the profiles and exit")
    return p


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


def parse_run_config(argv: Sequence[str]) -> RunConfig:
    args = build_parser().parse_args(_join_vllm_args(argv))
    return RunConfig.from_args(args, api_key=args.api_key or api_key_from_env())


def _run_subcommand(name: str, argv: Sequence[str]) -> int:
    if name == "workloads":
        from agentx_tui.load import list_presets

        _Parser(prog="agentx-tui workloads", description="List the workload presets.").parse_args(argv)
        presets = list_presets()
        width = max(len(n) for n, _ in presets)
        for preset, description in presets:
            print(f"{preset:<{width}}  {description}")
        return 0
    if name == "sim":
        from agentx_tui import sim

        args = _sim_parser().parse_args(argv)
        if args.list_profiles:
            for profile in sim.list_profiles():
                print(profile)
            return 0
        sim.load_profile(args.profile)  # an unknown profile is a usage error before binding
        sim.serve(args.host, args.port, args.profile)
        return 0
    from agentx_tui.runner import replay

    args = _replay_parser().parse_args(argv)
    return replay(args.path, speed=args.speed, theme=args.theme)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            return _run_subcommand(argv[0], argv[1:])
        config = parse_run_config(argv)
        from agentx_tui.runner import run  # imported after parsing: --help stays fast

        return run(config)
    except AgentXError as exc:
        _print_error(exc, _known_secrets(argv))
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


def _known_secrets(argv: Sequence[str]) -> list[str]:
    """The API key(s) this run may use: from the environment and from --api-key."""
    found = [value for name in API_KEY_ENV if (value := os.environ.get(name))]
    for i, arg in enumerate(argv):
        if arg == "--api-key" and i + 1 < len(argv):
            found.append(argv[i + 1])
        elif arg.startswith("--api-key="):
            found.append(arg.split("=", 1)[1])
    return found


def _print_error(exc: AgentXError, secrets: Sequence[str] = ()) -> None:
    # A server's answer can end up in a message (an error page that repeats the request's key):
    # mask the key in everything printed here, as the recorder and the dashboard do.
    from agentx_tui.report import redact

    color = sys.stderr.isatty() and not os.environ.get("NO_COLOR")
    prefix = "\x1b[31merror:\x1b[0m" if color else "error:"
    if isinstance(exc, LaunchError) and exc.log_tail:
        print("last lines of the server's log:", file=sys.stderr)
        for line in exc.log_tail:
            print(redact(f"  | {line}", secrets), file=sys.stderr)
    print(redact(f"{prefix} {exc}", secrets), file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
