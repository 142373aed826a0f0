"""Proxied calls grouped into live sessions (rows of the users table), handed to the run's statistics and,
with a capture, recorded as session trees.

Which session a call belongs to (docs/capture.md has the rule and its limits):
1. the session header (`X-Session-ID` by default) names it; the parent header (`X-Parent-Session-ID`)
   makes a new named session a sub-agent of the named parent;
2. else the OpenAI `user` field names it (the parent header still applies);
3. else it is inferred from the messages (`_request.message_chain`): a call whose messages extend the
   latest call of a session continues it; one whose first message equals that of a session that is
   waiting for its next call (its tree active in the last `SPAWN_WINDOW_S`) but which does not extend
   it is a sub-agent of it; anything else starts a session of its own.

Per session: the same figures as a simulated user (load/sending/users.py). Every cost per call is a
few dictionary operations; `rows(limit)` is O(limit); a tree idle for `idle_s` is captured and leaves
the live table, so memory follows the live sessions, not the run's length.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from agentx_tui.load import CallTally, StatsSink
from agentx_tui.proxy._call import ProxiedCall
from agentx_tui.proxy._capture import Capture, CaptureAgent, CapturedCall, CaptureTree
from agentx_tui.proxy._tokenize import Tokenizer
from agentx_tui.snapshot import USERS_SHOWN, UserRow, UserState

REAL_ID_BASE = 1 << 50  # rows of proxied sessions have ids from here: they never meet simulated ones
IDLE_S = 600.0  # a session tree with no call for this long is over: captured, then dropped
SPAWN_WINDOW_S = 10.0  # an inferred sub-agent's parent tree made a call at most this long before
MAX_CANDIDATES = 16  # waiting sessions looked at for an inferred sub-agent's parent
# Live trees kept at most: past this, the least recently active tree with no call on the wire is
# captured and dropped early (a flood of one-call sessions must not grow memory for 10 minutes).
MAX_LIVE_TREES = 50_000
CLOSE_TOKENIZE_S = 3.0  # at close, how long prompts still being tokenized are waited for
_SWEEP_S = 5.0
SCREEN_NAME_CHARS = 64  # a session's name is kept for the screen up to this long
How = Literal["header", "user", "inferred"]


def screen_name(value: str) -> str:
    """A session's name as the screen may show it: at most `SCREEN_NAME_CHARS` printable characters (the
    agent chose it: a control character in it must not reach the terminal)."""
    text = "".join(c if c.isprintable() else "?" for c in value[: SCREEN_NAME_CHARS + 1])
    return text if len(text) <= SCREEN_NAME_CHARS else text[: SCREEN_NAME_CHARS - 1] + "…"


@dataclass(slots=True, eq=False)
class _Tree:
    id: str
    label: str
    capture: CaptureTree | None
    in_flight: int = 0
    last_activity: float = 0.0
    sessions: list[LiveSession] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class LiveSession(CallTally):
    """One proxied agent (a tree's root or a sub-agent) and its figures."""

    id: int
    tree: _Tree
    parent: LiveSession | None
    depth: int
    label: str
    how: How
    name: tuple[str, str] | None  # ("header" | "user", value): in memory only
    shown_name: str  # the name as the screen shows it ("" for inferred sessions): never written to a file
    agent: CaptureAgent | None
    head: int | None = None  # key of the first message (inferred sessions)
    tip: int | None = None  # key over the latest call's whole prompt (inferred sessions)
    in_flight: int = 0
    current: ProxiedCall | None = None
    last_end: float | None = None
    steps: int = 0  # calls started
    context_tokens: int = 0

    @property
    def state(self) -> UserState:
        if self.in_flight <= 0:
            return "tool"
        current = self.current
        return "decoding" if current is not None and current.first_at is not None else "prefill"

    def row(self, endpoint: str) -> UserRow:
        return UserRow(
            user=self.id,
            session=1,
            state=self.state,
            step=self.steps,
            steps_total=0,  # unknown: a real agent decides as it goes
            context_tokens=self.context_tokens,
            endpoint=endpoint,
            parent=self.parent.id if self.parent is not None else None,
            label=self.label,
            real=True,
            name=self.shown_name,
            **self.tallied(),
        )


@dataclass(frozen=True, slots=True)
class SessionFigures:
    proxied_sessions: int  # session trees seen since the start (a sub-agent is part of its tree)
    subagents: int  # sub-agent sessions seen
    live_sessions: int  # sessions (roots and sub-agents) in the live table now
    by_header: int  # sessions named by the session header
    by_user: int  # by the `user` field
    inferred: int  # by their prompts
    calls_completed: int
    calls_failed: int
    prompt_tokens: int  # of the completed calls: with the simulated users' totals, how much is real
    cached_tokens: int
    output_tokens: int


class LiveSessions:
    """The proxy's observer (`ProxyObserver`): `start()`, then `rows()`/`figures()` each tick, `close()`."""

    def __init__(
        self,
        *,
        sink: StatsSink | None = None,
        capture: Capture | None = None,
        tokenizer: Tokenizer | None = None,
        endpoint: str = "",
        idle_s: float = IDLE_S,
        spawn_window_s: float = SPAWN_WINDOW_S,
        max_live_trees: int = MAX_LIVE_TREES,
    ) -> None:
        self.sink = sink
        self.capture = capture
        self.tokenizer = tokenizer
        self.endpoint = endpoint
        self.idle_s = idle_s
        self.spawn_window_s = spawn_window_s
        self.max_live_trees = max_live_trees
        self._next_id = REAL_ID_BASE
        self._sessions: OrderedDict[int, LiveSession] = OrderedDict()  # least recently active first
        self._trees: OrderedDict[str, _Tree] = OrderedDict()  # least recently active first
        self._named: dict[tuple[str, str], LiveSession] = {}
        self._tips: dict[int, LiveSession] = {}
        self._waiting: dict[int, OrderedDict[int, LiveSession]] = {}  # head → waiting sessions, latest last
        self._how: Counter[str] = Counter()
        self._trees_seen = self._subagents_seen = 0
        self._completed = self._failed = 0
        self._prompt = self._cached = self._output = 0
        self._sweeper: asyncio.Task[None] | None = None
        self._closed = False

    # -- lifecycle -----------------------------------------------------------------------------------
    async def start(self) -> None:
        if self.tokenizer is not None:
            await self.tokenizer.start()
        if self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep(), name="proxy-sessions")

    async def close(self, tokenize_wait_s: float = CLOSE_TOKENIZE_S) -> None:
        """Write every open tree (after at most `tokenize_wait_s` for prompts still being tokenized; a
        call whose prompt is not tokenized by then is written without hash ids). Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
            self._sweeper = None
        if self.tokenizer is not None:
            await self.tokenizer.drain(tokenize_wait_s)
        self.flush()
        if self.tokenizer is not None:
            await self.tokenizer.close()

    def flush(self) -> int:
        """Write the file of every open tree now, as it stands (they stay open); how many were written."""
        if self.capture is None:
            return 0
        return sum(1 for tree in list(self._trees.values()) if tree.capture and self.capture.write(tree.capture))

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(_SWEEP_S)
            self.expire(time.monotonic())

    def expire(self, now: float) -> int:
        """Capture and drop every tree idle for `idle_s` (whose prompts are all tokenized); how many."""
        done = 0
        for tree in list(self._trees.values()):
            if now - tree.last_activity < self.idle_s:
                break  # ordered by activity: the rest are more recent
            if tree.in_flight or (tree.capture is not None and tree.capture.pending):
                continue
            if self.capture is not None and tree.capture is not None:
                self.capture.write(tree.capture)
            self._drop(tree)
            done += 1
        return done

    def _drop_oldest(self) -> None:
        """Capture and drop the least recently active tree with no call on the wire nor prompt being
        tokenized (looking at a few: busy trees are also the most recently active ones)."""
        for looked, tree in enumerate(self._trees.values()):
            if looked >= MAX_CANDIDATES:
                return
            if not tree.in_flight and not (tree.capture is not None and tree.capture.pending):
                if self.capture is not None and tree.capture is not None:
                    self.capture.write(tree.capture)
                self._drop(tree)
                return

    def _drop(self, tree: _Tree) -> None:
        del self._trees[tree.id]
        for session in tree.sessions:
            self._sessions.pop(session.id, None)
            if session.name is not None and self._named.get(session.name) is session:
                del self._named[session.name]
            if session.tip is not None and self._tips.get(session.tip) is session:
                del self._tips[session.tip]
            self._unwait(session)

    # -- figures -------------------------------------------------------------------------------------
    def rows(self, limit: int = USERS_SHOWN) -> tuple[UserRow, ...]:
        """The `limit` most recently active sessions, by id: O(limit)."""
        out: list[UserRow] = []
        for session in reversed(self._sessions.values()):
            if len(out) >= limit:
                break
            out.append(session.row(self.endpoint))
        return tuple(sorted(out, key=lambda r: r.user))

    def states(self) -> dict[str, int]:
        return dict(Counter(s.state for s in self._sessions.values()))

    def figures(self) -> SessionFigures:
        return SessionFigures(
            proxied_sessions=self._trees_seen,
            subagents=self._subagents_seen,
            live_sessions=len(self._sessions),
            by_header=self._how["header"],
            by_user=self._how["user"],
            inferred=self._how["inferred"],
            calls_completed=self._completed,
            calls_failed=self._failed,
            prompt_tokens=self._prompt,
            cached_tokens=self._cached,
            output_tokens=self._output,
        )

    # -- the observer ------------------------------------------------------------------------------
    def call_started(self, call: ProxiedCall) -> None:
        session = self._identify(call)
        if session is None:
            return
        call.session = session
        session.in_flight += 1
        session.steps += 1
        session.current = call
        tree = session.tree
        tree.in_flight += 1
        tree.last_activity = call.received_at
        self._touch(session)
        self._unwait(session)
        if session.how == "inferred" and call.request is not None and call.request.chain:
            tip = call.request.chain[-1]
            if session.tip is not None and self._tips.get(session.tip) is session:
                del self._tips[session.tip]
            session.tip = tip
            self._tips[tip] = session

    def call_ended(self, call: ProxiedCall) -> None:
        session: LiveSession | None = call.session
        completed = call.error is None
        if session is not None:
            session.in_flight -= 1
            if session.current is call:
                session.current = None
            session.tree.in_flight -= 1
            session.tree.last_activity = max(session.tree.last_activity, call.ended_at)
            session.last_end = call.ended_at
            self._touch(session)
            if session.in_flight == 0 and session.head is not None:
                self._waiting.setdefault(session.head, OrderedDict())[session.id] = session
        if not completed:
            self._failed += 1
            if session is not None:
                session.errors += 1
                if session.agent is not None and self.capture is not None:
                    self.capture.add_failed(session.agent)
            if self.sink is not None:
                self.sink.error(call.failed())
            return
        self._completed += 1
        prompt = call.prompt_tokens
        record: CapturedCall | None = None
        want_tokens = self.tokenizer is not None and (prompt is None or self.capture is not None)
        if session is not None and session.agent is not None and self.capture is not None:
            record = self.capture.add_call(session.agent, call, tokens_coming=want_tokens)
        if session is not None:
            self._count(session, call, prompt)
        if prompt is not None:
            self._completed_figures(call, prompt)
        if not want_tokens:
            if prompt is None:
                self._completed_figures(call, 0)  # no usage and no way to count the prompt
            return
        assert self.tokenizer is not None
        agent = session.agent if session is not None else None

        async def tokens_done(ids: Sequence[int] | None) -> None:
            if prompt is None:
                count = len(ids) if ids is not None else 0
                self._completed_figures(call, count)
                if session is not None and ids is not None:
                    session.context_tokens = count
            if record is not None and agent is not None and self.capture is not None:
                await self.capture.add_tokens(agent, record, ids)

        if not self.tokenizer.submit(call.kind, call.body, call.auth, tokens_done):
            if record is not None and agent is not None:
                agent.tree.pending -= 1
            if prompt is None:
                self._completed_figures(call, 0)
        call.body = b""  # the tokenizer has its own reference; nothing else needs the text

    # -- internals -----------------------------------------------------------------------------------
    def _completed_figures(self, call: ProxiedCall, prompt: int) -> None:
        self._prompt += prompt
        self._cached += call.cached_tokens or 0
        self._output += call.output_tokens or 0
        if self.sink is not None:
            self.sink.add(call.completed(prompt))

    def _count(self, session: LiveSession, call: ProxiedCall, prompt: int | None) -> None:
        if prompt is not None:
            session.context_tokens = prompt
        session.count(call.output_tokens or 0, call.ttft_s, *call.decode_figures())

    def _touch(self, session: LiveSession) -> None:
        self._sessions.move_to_end(session.id)
        self._trees.move_to_end(session.tree.id)

    def _unwait(self, session: LiveSession) -> None:
        if session.head is not None:
            waiting = self._waiting.get(session.head)
            if waiting is not None and waiting.pop(session.id, None) is not None and not waiting:
                del self._waiting[session.head]

    def _identify(self, call: ProxiedCall) -> LiveSession | None:
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

    def _new(
        self, parent: LiveSession | None, how: How, name: tuple[str, str] | None, call: ProxiedCall
    ) -> LiveSession:
        self._next_id += 1
        self._how[how] += 1
        if parent is None:
            if len(self._trees) >= self.max_live_trees:
                self._drop_oldest()
            tree_capture = self.capture.open_tree() if self.capture is not None else None
            tree_id = tree_capture.id if tree_capture is not None else secrets.token_hex(8)
            tree = _Tree(id=tree_id, label=tree_id[:6], capture=tree_capture, last_activity=call.received_at)
            self._trees[tree.id] = tree
            self._trees_seen += 1
            agent = tree_capture.root if tree_capture is not None else None
            label = tree.label
        else:
            tree = parent.tree
            self._subagents_seen += 1
            agent = None
            if self.capture is not None and tree.capture is not None and parent.agent is not None:
                agent = self.capture.open_agent(tree.capture, parent.agent, parent.last_end)
            label = f"{tree.label}.{len(tree.sessions)}"
        session = LiveSession(
            id=self._next_id,
            tree=tree,
            parent=parent,
            depth=parent.depth + 1 if parent is not None else 0,
            label=label,
            how=how,
            name=name,
            shown_name=screen_name(name[1]) if name is not None else "",
            agent=agent,
        )
        tree.sessions.append(session)
        self._sessions[session.id] = session
        return session
