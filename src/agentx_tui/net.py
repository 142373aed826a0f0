"""Addresses: whether a URL (or a bare HOST[:PORT]) names this machine's loopback interface."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def host_of(url: str) -> str:
    """The host of `url`, which may be a bare HOST[:PORT] (as `--attach` accepts)."""
    return urlsplit(url if "://" in url else "http://" + url).hostname or ""


def is_loopback(url: str) -> bool:
    """Whether `url` (or a bare HOST[:PORT]) is on this machine's loopback: `localhost`, 127.0.0.0/8, ::1."""
    return is_loopback_host(host_of(url))


def is_loopback_host(host: str) -> bool:
    """Whether `host` (a name or an IP literal, IPv6 without brackets) is loopback. A name other than
    `localhost` is not resolved: it counts as reachable from elsewhere (the safe side)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
