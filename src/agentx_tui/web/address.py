"""`--web [HOST:]PORT`: where the page is served, and whether that is reachable from other machines.

Loopback is the default: the page has no authentication of its own, so serving it to the network must
be asked for by naming a host, and is said in one warning line.
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
from dataclasses import dataclass

from agentx_tui.net import is_loopback_host

DEFAULT_HOST = "127.0.0.1"
_FORMS = "give a port (8080) or a host and a port (0.0.0.0:8080, [::1]:8080)"


@dataclass(frozen=True)
class WebAddress:
    host: str  # as aiohttp binds it: a name or an IP literal, IPv6 without brackets
    port: int

    @property
    def loopback(self) -> bool:
        """True when only this machine can reach the page. A name other than `localhost` counts as
        reachable: it is not resolved here, and warning once too often is the safe side."""
        return is_loopback_host(self.host)

    @property
    def wildcard(self) -> bool:
        return self.host in ("0.0.0.0", "::")

    @property
    def url(self) -> str:
        """The address to open, as printed for the user (a wildcard bind names this machine)."""
        host = socket.gethostname() if self.wildcard else self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/"

    def warning(self) -> str | None:
        """One line for a bind that other machines can reach; None on loopback."""
        if self.loopback:
            return None
        return (
            f"warning: the dashboard is served on {self.host}:{self.port}, reachable from other machines, "
            "and the page has no authentication of its own: anyone who can reach it can watch the run "
            "and change it (keys), so serve it only on a network you trust."
        )


def parse_web_address(text: str) -> WebAddress:
    """An argparse `type=` for `--web`: `PORT`, `HOST:PORT` or `[IPV6]:PORT`; a bad value is one
    sentence (argparse turns it into a usage error, exit 2)."""
    text = text.strip()
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = DEFAULT_HOST, text
    if any(c.isspace() or c in "/@?#" for c in host):  # a URL, or a typo
        raise argparse.ArgumentTypeError(f"{text!r} is not [HOST:]PORT: {_FORMS}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if not _is_ipv6(host):
            raise argparse.ArgumentTypeError(f"{text!r} has no IPv6 address inside its brackets: {_FORMS}")
    elif ":" in host:
        raise argparse.ArgumentTypeError(f"{text!r} is ambiguous: write an IPv6 host in brackets, e.g. [::1]:8080")
    elif not host or "[" in host or "]" in host:
        raise argparse.ArgumentTypeError(f"{text!r} names no host: {_FORMS}")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} has no port from 1 to 65535: {_FORMS}")
    return WebAddress(host, int(port_text))


def _is_ipv6(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).version == 6
    except ValueError:
        return False
