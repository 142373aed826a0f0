"""Messages that flow up to the app: from the source worker and from the modal screens."""

from __future__ import annotations

from textual.message import Message

from agentx_tui.snapshot import Snapshot


class SnapshotArrived(Message):
    """The source produced a Snapshot (posted by the worker; rendered on the UI's own clock)."""

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot = snapshot


class SourceEnded(Message):
    """The source's stream ended: the run finished or was shut down; `error` says why if it failed."""

    def __init__(self, error: str | None = None) -> None:
        super().__init__()
        self.error = error
