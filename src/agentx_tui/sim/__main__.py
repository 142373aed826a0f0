"""``python -m agentx_tui.sim --host H --port P --profile GPU/MODEL`` (or ``--list-profiles``)."""

from __future__ import annotations

import argparse
import sys

from agentx_tui.errors import AgentXError
from agentx_tui.sim import DEFAULT_PROFILE, list_profiles, serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentx_tui.sim", description="Simulated vLLM engine.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--profile", default=DEFAULT_PROFILE, help="GPU/MODEL, see --list-profiles")
    parser.add_argument("--list-profiles", action="store_true")
    parser.add_argument("--num-gpu-blocks-override", type=int, default=None)
    parser.add_argument("--max-num-seqs", type=int, default=None)
    parser.add_argument("--max-num-batched-tokens", type=int, default=None)
    parser.add_argument("--time-scale", type=float, default=1.0, help="run the simulated GPU N× real time")
    parser.add_argument("--ready-fd", type=int, default=None, help="write the port here once listening")
    args = parser.parse_args(argv)
    if args.list_profiles:
        print("\n".join(list_profiles()))
        return 0
    try:
        serve(
            args.host,
            args.port,
            args.profile,
            ready_fd=args.ready_fd,
            num_gpu_blocks=args.num_gpu_blocks_override,
            max_num_seqs=args.max_num_seqs,
            max_num_batched_tokens=args.max_num_batched_tokens,
            time_scale=args.time_scale,
        )
    except AgentXError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
