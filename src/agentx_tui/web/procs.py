"""Which processes a process has started (Linux /proc): how the page server finds each page's run.

textual-serve does not expose the PID of the process it starts for a page; the server needs it to stop
a run that is still starting (a signal, since the page's quit message is read only once the app runs)
and, as a last resort, to kill one that does not stop.
"""

from __future__ import annotations

import contextlib
import os


def child_pids(parent: int) -> set[int]:
    """Live (non-zombie) processes whose parent is `parent`; empty where there is no /proc."""
    found: set[int] = set()
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    # The command name is in parentheses and may hold spaces: split after it.
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 1 and fields[0] != b"Z" and int(fields[1]) == parent:
                found.add(int(entry.name))
    return found
