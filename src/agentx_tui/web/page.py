"""The program behind one page: `agentx-tui` with its flags, set up for textual-serve's pipe.

textual-serve runs it with Textual's web driver (TEXTUAL_DRIVER in the environment), which speaks a
packet protocol on fd 1. Two things differ from a terminal run, all set up here before the run starts:

- fd 1 carries the app's packets and nothing else. The run prints to stdout too (its summary at the
  end) and its worker processes inherit fd 1; a stray line there would be read as a packet, or before
  the app starts would count against textual-serve's handshake. So the packets get a private,
  non-inheritable copy of fd 1, and fd 1 itself becomes stderr, which textual-serve relays to the
  serving process's console when the page's run ends.
- The run dies with the server: a parent-death signal (SIGTERM) stops it, the same way as `q`, even if
  the serving process is killed with SIGKILL; without it the run (and the server it launched) would
  live on with nobody to watch it.

The run's own exit machinery does the rest (run/execute.py): whatever ends it — `q` or a closed tab
(textual-serve's "quit", the same ExitApp message), SIGTERM — the report and recording are written
and a launched or simulated server is stopped with its whole process group.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

from agentx_tui.web.command import SERVER_PID_ENV

_PR_SET_PDEATHSIG = 1


def _die_with_server() -> bool:
    """Ask for SIGTERM when the server dies; False when it is gone already (nothing to serve)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    server = os.environ.pop(SERVER_PID_ENV, "")
    # The server may have died between starting us and the prctl: then our parent is someone else.
    return not server.isdigit() or os.getppid() == int(server)


def _private_packet_channel() -> None:
    packets = os.dup(1)  # os.dup's copy is not inherited by child processes
    os.dup2(2, 1)
    # Textual's web driver writes to `sys.__stdout__.fileno()`: point it at the private copy.
    # (typeshed calls it Final; it is a plain attribute, and rebinding it is the point.)
    sys.__stdout__ = open(packets, "w", encoding="utf-8")  # type: ignore[misc]  # noqa: SIM115 - lives with the process
    sys.stdout = sys.stderr


def main() -> int:
    if not _die_with_server():
        return 143  # as if the parent-death signal had come: 128 + SIGTERM
    _private_packet_channel()
    from agentx_tui.cli import main as cli_main

    return cli_main(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
