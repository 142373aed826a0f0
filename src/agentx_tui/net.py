"""Addresses: whether a URL (or a bare HOST[:PORT]) names this machine's loopback interface."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def host_of(url: str) -> str:
    """The host of `url`, which may be a bare HOST[:PORT] (as `--attach` accepts)."""
    return urlsplit(url if "://" in url else "http://" + url).hostname or ""


def is_loopback(url: str) -> bool:
    """Whether `url` (or a bare HOST[:PORT]) is on this machine's loopback: `localhost`, 127.0.0.0/8, ::1."""
    host = host_of(url)
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
