"""Which live session a proxied call belongs to (docs/capture.md has the rule and its limits):

1. the session header (`X-Session-ID` by default) names it; the parent header (`X-Parent-Session-ID`)
   makes a new named session a sub-agent of the named parent;
2. else the OpenAI `user` field names it (the parent header still applies);
3. else it is inferred from the messages (`_request.message_chain`): a call whose messages extend the
   latest call of a session continues it; one whose first message equals that of a session that is
   waiting for its next call (its tree active in the last `SPAWN_WINDOW_S`) but which does not extend
   it is a sub-agent of it; anything else starts a session of its own.

Every cost per call is a few dictionary operations.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from agentx_tui.proxy._call import ProxiedCall
from agentx_tui.proxy._session import How, LiveSession

SPAWN_WINDOW_S = 10.0  # an inferred sub-agent's parent tree made a call at most this long before
MAX_CANDIDATES = 16  # waiting sessions looked at for an inferred sub-agent's parent
# Makes a new session: (its parent, how it is named, its name, its first call).
NewSession = Callable[[LiveSession | None, How, tuple[str, str] | None, ProxiedCall], LiveSession]


class SessionInference:
    """`identify` each call as it starts (a new session is made by `new_session`); `started`, `ended`
    and `forget` keep what the inference remembers of each session in step."""

    def __init__(self, new_session: NewSession, spawn_window_s: float = SPAWN_WINDOW_S) -> None:
        self._new = new_session
        self.spawn_window_s = spawn_window_s
        self._named: dict[tuple[str, str], LiveSession] = {}
        self._tips: dict[int, LiveSession] = {}
        self._waiting: dict[int, OrderedDict[int, LiveSession]] = {}  # head → waiting sessions, latest last

    def identify(self, call: ProxiedCall) -> LiveSession | None:
        request = call.request
        parent = self._named_session(call.parent_name) if call.parent_name else None
        if call.session_name:
            return self._named_or_new(("header", call.session_name), "header", parent, call)
        if request is not None and request.user:
            return self._named_or_new(("user", request.user), "user", parent, call)
        if request is None or not request.chain:
            return None  # not a call the server can take: counted in the statistics only
        chain = request.chain
        # A continuation: the longest earlier prompt this one extends. An equal prompt continues only a
        # session that is not busy (two agents sending the same first prompt at once are two sessions).
        for j in range(len(chain) - 1, -1, -1):
            found = self._tips.get(chain[j])
            if found is not None and (j < len(chain) - 1 or found.in_flight == 0):
                return found
        head = request.head
        if parent is None and head is not None:
            parent = self._spawner(head, call.received_at)
        session = self._new(parent, "inferred", None, call)
        session.head = head
        return session

    def started(self, session: LiveSession, call: ProxiedCall) -> None:
        """`session` has a call on the wire: not waiting; an inferred one's latest prompt is this call's."""
        self._unwait(session)
        if session.how == "inferred" and call.request is not None and call.request.chain:
            tip = call.request.chain[-1]
            if session.tip is not None and self._tips.get(session.tip) is session:
                del self._tips[session.tip]
            session.tip = tip
            self._tips[tip] = session

    def ended(self, session: LiveSession) -> None:
        """A call of `session` ended: with none left on the wire, it waits (a sub-agent may come)."""
        if session.in_flight == 0 and session.head is not None:
            self._waiting.setdefault(session.head, OrderedDict())[session.id] = session

    def forget(self, session: LiveSession) -> None:
        """`session` left the live table: a call naming or extending it starts a new one."""
        if session.name is not None and self._named.get(session.name) is session:
            del self._named[session.name]
        if session.tip is not None and self._tips.get(session.tip) is session:
            del self._tips[session.tip]
        self._unwait(session)

    def _unwait(self, session: LiveSession) -> None:
        if session.head is not None:
            waiting = self._waiting.get(session.head)
            if waiting is not None and waiting.pop(session.id, None) is not None and not waiting:
                del self._waiting[session.head]

    def _named_session(self, value: str) -> LiveSession | None:
        return self._named.get(("header", value)) or self._named.get(("user", value))

    def _named_or_new(
        self, name: tuple[str, str], how: How, parent: LiveSession | None, call: ProxiedCall
    ) -> LiveSession:
        found = self._named.get(name)
        if found is not None:
            return found
        session = self._new(parent if parent is not None and parent.name != name else None, how, name, call)
        self._named[name] = session
        return session

    def _spawner(self, head: int, now: float) -> LiveSession | None:
        """The waiting session an inferred sub-agent belongs to: same first message, its tree active
        in the last `spawn_window_s`; the shallowest (parallel sub-agents share their parent), then
        the one whose last call ended last."""
        waiting = self._waiting.get(head)
        if not waiting:
            return None
        best: LiveSession | None = None
        for looked, session in enumerate(reversed(waiting.values())):
            if looked >= MAX_CANDIDATES:
                break
            if now - session.tree.last_activity > self.spawn_window_s:
                continue
            if best is None or session.depth < best.depth:
                best = session
        return best
