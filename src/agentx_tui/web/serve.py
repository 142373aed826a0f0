"""`agentx-tui --web [HOST:]PORT …`: check the run's flags, then serve the dashboard to browsers.

Everything a terminal run would refuse is refused here, once, before the page is served (exit 2), so
that a typo shows in the serving terminal and not as a page whose run dies at once. Exit codes: 2 a
usage error, including a port that cannot be listened on (like an unwritable --report path: nothing
has started); 128 + N when stopped by signal N, which is how a demo ends.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from collections.abc import Collection, Sequence

from agentx_tui.errors import UsageError
from agentx_tui.run import build_plan
from agentx_tui.web.address import WebAddress
from agentx_tui.web.command import page_argv, page_command, page_environment, page_title
from agentx_tui.web.server import DashboardServer


def serve_web(args: argparse.Namespace, argv: Sequence[str], long_options: Collection[str]) -> int:
    """`args` parsed from `argv` (with its --web), `long_options` every long option of the parser."""
    address: WebAddress = args.web
    if args.headless:
        raise UsageError("--web and --headless cannot be used together.", "The page shows the dashboard: drop one.")
    plan = build_plan(args)
    title = page_title(plan)
    if (warning := address.warning()) is not None:
        print(warning, file=sys.stderr, flush=True)
    check_listenable(address)
    # The key reaches each page's run through its environment (a copy of this process's), not its argv.
    page_environment(os.environ, api_key=args.api_key, server_pid=os.getpid())
    server = DashboardServer(page_command(page_argv(argv, long_options)), address, title)
    try:
        server.serve()
    except OSError as exc:  # the port was taken between the check and the bind
        raise _cannot_listen(address, exc) from exc
    return 128 + int(server.stopped_by) if server.stopped_by is not None else 0


def check_listenable(address: WebAddress) -> None:
    """A `UsageError` now, rather than a traceback later, for a port in use or a host not ours."""
    try:
        infos = socket.getaddrinfo(address.host, address.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise _cannot_listen(address, exc) from exc
    for family, kind, proto, _, sockaddr in infos:
        with socket.socket(family, kind, proto) as sock:
            # As aiohttp binds: SO_REUSEADDR, so a port left in TIME_WAIT by the last demo is usable.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(sockaddr)
            except OSError as exc:
                raise _cannot_listen(address, exc) from exc


def _cannot_listen(address: WebAddress, exc: OSError) -> UsageError:
    reason = exc.strerror or str(exc)
    where = f"[{address.host}]" if ":" in address.host else address.host
    return UsageError(
        f"Cannot serve the dashboard on {where}:{address.port}: {reason[0].lower()}{reason[1:]}.",
        "Choose another port (or a host of this machine) with --web.",
    )
