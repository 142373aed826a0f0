"""The live sessions and their trees, least recently active first: the users table's rows (`rows(limit)`
is O(limit)) and how many sessions are in each state."""

from __future__ import annotations

from collections import Counter, OrderedDict

from agentx_tui.proxy._session import LiveSession, LiveTree
from agentx_tui.snapshot import USERS_SHOWN, UserRow


class LiveTable:
    def __init__(self, endpoint: str = "") -> None:
        self.endpoint = endpoint
        self.sessions: OrderedDict[int, LiveSession] = OrderedDict()  # least recently active first
        self.trees: OrderedDict[str, LiveTree] = OrderedDict()  # least recently active first

    def add(self, session: LiveSession) -> None:
        """A new session (and its tree, if new): the most recently active."""
        self.trees.setdefault(session.tree.id, session.tree)
        self.sessions[session.id] = session
        self.touch(session)

    def touch(self, session: LiveSession) -> None:
        self.sessions.move_to_end(session.id)
        self.trees.move_to_end(session.tree.id)

    def remove(self, tree: LiveTree) -> None:
        del self.trees[tree.id]
        for session in tree.sessions:
            self.sessions.pop(session.id, None)

    def rows(self, limit: int = USERS_SHOWN) -> tuple[UserRow, ...]:
        """The `limit` most recently active sessions, by id: O(limit)."""
        out: list[UserRow] = []
        for session in reversed(self.sessions.values()):
            if len(out) >= limit:
                break
            out.append(session.row(self.endpoint))
        return tuple(sorted(out, key=lambda r: r.user))

    def states(self) -> dict[str, int]:
        return dict(Counter(s.state for s in self.sessions.values()))
