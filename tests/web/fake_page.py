"""A stand-in for a page's run, speaking textual-serve's pipe protocol (as Textual's web driver does),
so that the page server's rules can be tested in a second instead of a whole run's start-up.

    python fake_page.py MODE DIR

MODE: `app` draws "fake page drawn", echoes the keys it gets, and exits on "quit" (as `q` does);
`starting` never draws and exits on SIGTERM (a run still starting); `fails` prints an error and exits 3
before drawing; `stubborn` draws and ignores both "quit" and SIGTERM. It writes DIR/<pid>.<event> files
for what happened to it: `started`, `quit`, `sigterm`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

MODE, DIR = sys.argv[1], Path(sys.argv[2])


def note(event: str) -> None:
    (DIR / f"{os.getpid()}.{event}").write_text("")


def packet(kind: bytes, payload: bytes) -> None:
    os.write(1, kind + len(payload).to_bytes(4, "big") + payload)


def packets() -> Iterator[tuple[bytes, bytes]]:
    """(kind, payload) from stdin, as the server frames them."""
    buffer = b""
    while chunk := os.read(0, 4096):
        buffer += chunk
        while len(buffer) >= 5 and len(buffer) >= 5 + int.from_bytes(buffer[1:5], "big"):
            size = int.from_bytes(buffer[1:5], "big")
            yield buffer[:1], buffer[5 : 5 + size]
            buffer = buffer[5 + size :]


def main() -> int:
    note("started")
    if MODE == "fails":
        print("error: the target could not be reached (fake).", file=sys.stderr)
        return 3

    def on_term(signum: int, frame: object) -> None:
        note("sigterm")
        if MODE != "stubborn":
            raise SystemExit(143)

    signal.signal(signal.SIGTERM, on_term)
    if MODE == "starting":
        while True:
            time.sleep(0.05)
    os.write(1, b"__GANGLION__\n")
    packet(b"D", b"fake page drawn\r\n")
    for kind, payload in packets():
        if kind == b"D":
            packet(b"D", b"key:" + payload + b"\r\n")
        elif kind == b"M" and json.loads(payload).get("type") == "quit":
            note("quit")
            if MODE != "stubborn":
                packet(b"M", json.dumps({"type": "exit"}).encode())
                return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
