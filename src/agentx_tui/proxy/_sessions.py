"""Proxied calls grouped into live sessions (rows of the users table), handed to the run's statistics and,
with a capture, recorded as session trees: `LiveSessions` ties together the modules that each do one of
those jobs.

    _inference.py       which session a call belongs to (header, `user` field, or inferred)
    _session.py         a session and its tree: the figures of a users table row
    _live_table.py      the live sessions by recent activity: the rows, the states
    _eviction.py        when a tree is over (idle, or pushed out by the live trees' limit)
    _session_stats.py   the sessions' figures, every call's for the run's statistics, the trees' tasks
    _prompt_tokens.py   a completed call's prompt tokenized for the statistics and the capture
    _reuse.py           what the agents sent before: each call's reused prompt tokens

Per session: the same figures as a simulated user (load/sending/users.py). Per tree: one task of the
run's (docs/metrics.md, "Tasks"): its calls, sub-agents' included, carry its task id, and a tree idle
for `idle_s` (`--session-idle`) has ended: its task is completed (failed, if a call of it failed for
good), it is captured, and it leaves the live table, so memory follows the live sessions, not the
run's length. A tree still open when the proxy closes is captured but stays a running task. Every cost
per call is a few dictionary operations; `rows(limit)` is O(limit).
"""

from __future__ import annotations

import asyncio
import secrets
import time

from agentx_tui.measure import StatsSink, split_prompt
from agentx_tui.proxy._call import ProxiedCall
from agentx_tui.proxy._capture import Capture, CapturedCall
from agentx_tui.proxy._eviction import DEFAULT_SESSION_IDLE_S, MAX_LIVE_TREES, idle_trees, oldest_free_tree
from agentx_tui.proxy._inference import SPAWN_WINDOW_S, SessionInference
from agentx_tui.proxy._live_table import LiveTable
from agentx_tui.proxy._prompt_tokens import PromptTokens
from agentx_tui.proxy._reuse import DEFAULT_BLOCK_SIZE, SentBlocks
from agentx_tui.proxy._session import REAL_ID_BASE, TASK_ID_BASE, How, LiveSession, LiveTree, screen_name
from agentx_tui.proxy._session_stats import ProxiedSessionCounts, SessionStats
from agentx_tui.proxy._tokenize import Tokenizer
from agentx_tui.snapshot import USERS_SHOWN, UserRow

CLOSE_TOKENIZE_S = 3.0  # at close, how long prompts still being tokenized are waited for
# How often idle trees are looked for: a quarter of the idle time, at most 5 s (a tree ends at most
# that late), at least 50 ms (a tiny --session-idle must not spin the event loop).
MAX_SWEEP_S, MIN_SWEEP_S = 5.0, 0.05


def sweep_every(idle_s: float) -> float:
    return min(MAX_SWEEP_S, max(MIN_SWEEP_S, idle_s / 4))


class LiveSessions:
    """The proxy's observer (`ProxyObserver`): `start()`, then `rows()`/`figures()` each tick, `close()`."""

    def __init__(
        self,
        *,
        sink: StatsSink | None = None,
        capture: Capture | None = None,
        tokenizer: Tokenizer | None = None,
        endpoint: str = "",
        block_size: int = DEFAULT_BLOCK_SIZE,
        idle_s: float = DEFAULT_SESSION_IDLE_S,
        spawn_window_s: float = SPAWN_WINDOW_S,
        max_live_trees: int = MAX_LIVE_TREES,
        sweep_s: float | None = None,
    ) -> None:
        self.capture = capture
        self.tokenizer = tokenizer
        self.idle_s = idle_s
        self.sweep_s = sweep_s if sweep_s is not None else sweep_every(idle_s)
        self.max_live_trees = max_live_trees
        self._next_id = REAL_ID_BASE
        self._next_task = TASK_ID_BASE
        self._table = LiveTable(endpoint)
        self._inference = SessionInference(self._new, spawn_window_s)
        self._stats = SessionStats(sink)
        self._tokens = PromptTokens(tokenizer, capture, self._counted, SentBlocks(block_size))
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
        call whose prompt is not tokenized by then is written without hash ids). Their tasks are not
        ended: they were still running. Safe to call twice."""
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
        self._tokens.sent.flush()  # calls behind one whose tokenizing was cut off are counted still

    def flush(self) -> int:
        """Write the file of every open tree now, as it stands (they stay open); how many were written."""
        if self.capture is None:
            return 0
        trees = list(self._table.trees.values())
        return sum(1 for tree in trees if tree.capture and self.capture.write(tree.capture))

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self.sweep_s)
            self.expire(time.monotonic())

    def expire(self, now: float) -> int:
        """End every tree idle for `idle_s` (not busy): its task completed (or failed), captured and
        dropped; how many."""
        over = idle_trees(self._table.trees.values(), now, self.idle_s)
        for tree in over:
            self._retire(tree, "error" if tree.failed else "done")
        return len(over)

    def _retire(self, tree: LiveTree, how: str) -> None:
        """A tree is over (`how` its task ended, `StatsSink.session_ended`): captured, then out of the
        live table and of the inference."""
        self._stats.tree_ended(tree.task, how)
        if self.capture is not None and tree.capture is not None:
            self.capture.write(tree.capture)
        self._table.remove(tree)
        for session in tree.sessions:
            self._inference.forget(session)

    # -- figures -------------------------------------------------------------------------------------
    def rows(self, limit: int = USERS_SHOWN) -> tuple[UserRow, ...]:
        """The `limit` most recently active sessions, by id: O(limit)."""
        return self._table.rows(limit)

    def states(self) -> dict[str, int]:
        return self._table.states()

    def figures(self) -> ProxiedSessionCounts:
        return self._stats.figures(live_sessions=len(self._table.sessions))

    # -- the observer ------------------------------------------------------------------------------
    def call_started(self, call: ProxiedCall) -> None:
        session = self._inference.identify(call)
        if session is None:
            return
        call.session = session
        session.started(call)
        self._table.touch(session)
        self._inference.started(session, call)

    def call_ended(self, call: ProxiedCall) -> None:
        session: LiveSession | None = call.session
        if session is not None:
            session.ended(call)
            self._table.touch(session)
            self._inference.ended(session)
        if call.error is not None:
            self._stats.failed(call)
            if session is not None:
                session.errors += 1
                session.tree.failed |= call.failed().final
                if session.agent is not None and self.capture is not None:
                    self.capture.add_failed(session.agent)
            return
        self._stats.completed()
        prompt = call.prompt_tokens
        want_tokens = self._tokens.wanted(call)
        record: CapturedCall | None = None
        if session is not None and session.agent is not None and self.capture is not None:
            record = self.capture.add_call(session.agent, call, tokens_coming=want_tokens)
        if session is not None:
            session.completed(call, prompt)
        if want_tokens:
            # Its figures reach the statistics once its prompt is tokenized (`_counted`): its length, if
            # the server gave none, and its reused tokens are known only then.
            if session is not None:
                session.tree.counting += 1
            self._tokens.request(call, session, record)
        else:
            self._stats.counted(call, prompt if prompt is not None else 0)  # 0: no usage, no way to count it

    # -- internals -----------------------------------------------------------------------------------
    def _counted(self, call: ProxiedCall, prompt: int, reused: int | None) -> None:
        """A completed call, counted once its prompt is tokenized (`PromptTokens`)."""
        session: LiveSession | None = call.session
        if session is not None:
            session.tree.counting -= 1
            session.count_reuse(split_prompt(prompt, reused, call.cached_tokens))
        self._stats.counted(call, prompt, reused)

    def _new(
        self, parent: LiveSession | None, how: How, name: tuple[str, str] | None, call: ProxiedCall
    ) -> LiveSession:
        """A new session (`SessionInference` asks): a new tree's root, or a sub-agent in its parent's."""
        self._next_id += 1
        self._stats.opened(how, subagent=parent is not None)
        if parent is None:
            if len(self._table.trees) >= self.max_live_trees:
                oldest = oldest_free_tree(self._table.trees.values())
                if oldest is not None:
                    self._retire(oldest, "retired")  # cut off, not ended: its task counts nowhere
            tree_capture = self.capture.open_tree() if self.capture is not None else None
            tree_id = tree_capture.id if tree_capture is not None else secrets.token_hex(8)
            self._next_task += 1
            tree = LiveTree(
                id=tree_id,
                label=tree_id[:6],
                capture=tree_capture,
                task=self._next_task,
                last_activity=call.received_at,
            )
            agent = tree_capture.root if tree_capture is not None else None
            label = tree.label
        else:
            tree = parent.tree
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
        self._table.add(session)
        return session
