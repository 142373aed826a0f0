"""The simulator's command line, one for both ways in: `agentx-tui sim …` and `python -m agentx_tui.sim …`
(which the launcher in engine/ and the benchmarks start). docs/sim.md lists every option; a test keeps
it and `--help` in step.

An option is one `add_argument` in `build_parser`: its `dest` is the keyword of `serve` that it sets,
and `sim_command` hands every option but `--list-profiles` to `serve` as parsed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from agentx_tui.args import Parser, number, whole
from agentx_tui.errors import AgentXError
from agentx_tui.sim.defaults import DEFAULT_HOST, DEFAULT_PORT, DEFAULT_PROFILE
from agentx_tui.sim.spec import parse_spec

PROG = "agentx-tui sim"
MODULE_PROG = "python -m agentx_tui.sim"


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    p = Parser(prog=prog, description="Run the simulated vLLM engine as an OpenAI-compatible server (docs/sim.md).")
    p.add_argument(
        "--host",
        default=DEFAULT_HOST,
        metavar="HOST",
        help=f"address to listen on (default {DEFAULT_HOST}; the simulator has no authentication)",
    )
    p.add_argument(
        "--port",
        type=whole("ports", 0, 65535),
        default=DEFAULT_PORT,
        metavar="P",
        help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    p.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        metavar="GPU/MODEL",
        help=f"the GPU × model simulated (default {DEFAULT_PROFILE}; see --list-profiles)",
    )
    p.add_argument("--list-profiles", action="store_true", help="print the profiles and exit")
    p.add_argument(
        "--time-scale",
        type=number("the time scale", 0, 1000, lo_open=True),
        default=1.0,
        metavar="F",
        help="run the simulated GPU F times faster than real time (default 1; for benchmarks)",
    )
    engine = p.add_argument_group("the engine (as vLLM's flags of the same names; default: the profile's)")
    engine.add_argument(
        "--num-gpu-blocks-override",
        dest="num_gpu_blocks",
        type=whole("KV cache blocks", 2, 100_000_000),
        metavar="N",
        help="KV cache blocks of 16 tokens; a small number makes KV pressure on demand",
    )
    engine.add_argument(
        "--max-num-seqs",
        type=whole("sequences", 1, 1_000_000),
        metavar="N",
        help="requests scheduled at once",
    )
    add_step_options(engine)
    add_cpu_tier_options(
        p.add_argument_group("the CPU KV tier (docs/sim.md: vLLM's KV offloading to CPU memory; default: none)")
    )
    # A launcher's: the port is written to this inherited descriptor once the server listens.
    p.add_argument("--ready-fd", type=whole("file descriptors", 0, 1 << 20), metavar="FD", help=argparse.SUPPRESS)
    return p


def add_step_options(group: argparse._ArgumentGroup, *, prefix: str = "") -> None:
    """What one engine step carries: `--max-num-batched-tokens` (the chunked-prefill budget) and `--spec`
    (speculative decoding) here; with `prefix` "sim-", the main command line's for its embedded
    simulator (the same checks, one place)."""
    group.add_argument(
        f"--{prefix}max-num-batched-tokens",
        type=whole("tokens", 1, 100_000_000),
        metavar="N",
        help="tokens per engine step: decodes first, prefill chunks in what is left "
        "(default: the profile's, vLLM's 8192 on H100/H200, 16384 on B200)",
    )
    group.add_argument(
        f"--{prefix}spec",
        type=parse_spec,
        metavar="K:AL",
        help="speculative decoding: each decode step verifies K draft tokens and emits the accepted ones + 1, "
        "at mean acceptance length AL (1 to K + 1; vLLM's synthetic acceptance), e.g. 3:2.5; default: none",
    )


def add_cpu_tier_options(group: argparse._ArgumentGroup, *, prefix: str = "") -> None:
    """The CPU KV tier's options: `--cpu-kv-gb`, `--cpu-kv-gbps` here; with `prefix` "sim-", the main
    command line's for its embedded simulator (the same checks, one place)."""
    group.add_argument(
        f"--{prefix}cpu-kv-gb",
        type=number("the CPU KV tier's size", 0, 100_000),
        metavar="GB",
        help="CPU memory for KV blocks evicted from the GPU, in GB (1e9 bytes): KV offload to CPU memory; "
        "0 or left out: no tier",
    )
    group.add_argument(
        f"--{prefix}cpu-kv-gbps",
        type=number("the CPU KV tier's bandwidth", 0, 100_000, lo_open=True),
        metavar="GB/S",
        help="its link to each GPU, per direction (default: the profile's, 50 for PCIe 5.0 x16; 450 for NVLink-C2C)",
    )


def sim_command(argv: Sequence[str], prog: str = PROG) -> int:
    """Serve as `argv` asks, until SIGINT or SIGTERM (then 0), or list the profiles. A bad option or
    profile raises `UsageError` (exit 2), a port that cannot be bound `TargetError` (exit 3)."""
    options = vars(build_parser(prog).parse_args(list(argv)))
    # Imported once parsed: `--help` needs neither the profiles (YAML, pydantic) nor the server stack.
    if options.pop("list_profiles"):
        from agentx_tui.sim.profiles import list_profiles

        print("\n".join(list_profiles()))
        return 0
    from agentx_tui.sim.server import serve

    serve(**options)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m agentx_tui.sim`: `sim_command`, its errors one sentence on stderr and their exit code."""
    try:
        return sim_command(sys.argv[1:] if argv is None else argv, MODULE_PROG)
    except AgentXError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:  # before the server handles SIGINT itself
        return 130
