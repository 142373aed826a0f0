"""How many connections this machine lets the client hold open (docs/scale.md).

At start the open-file soft limit is raised to the hard limit (a default of 1,024 would cap a run at
about a thousand users). A TCP connection to one server also takes one local ephemeral port. The
budget is the smaller of the two, less a reserve for everything else the process opens (the metrics
scrapes, log files, the dashboard). Requests beyond it wait in the client-side queue of
`core.ConnectionLimit`, which is reported as client saturation.
"""

from __future__ import annotations

import contextlib

_RESERVE = 256


def raise_open_file_limit() -> int:
    """Raise the soft limit on open files to the hard limit; returns the soft limit in force."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    if soft == resource.RLIM_INFINITY:
        return 1 << 20
    if soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
    return int(soft)


def _ephemeral_ports() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as fh:
            low, high = (int(x) for x in fh.read().split())
        return high - low + 1
    except (OSError, ValueError):
        return 28_000


def connection_budget() -> int:
    """Requests this process may have on the wire at once."""
    return max(16, min(raise_open_file_limit(), _ephemeral_ports()) - _RESERVE)
