"""What the proxied sessions add up to (`ProxiedSessionCounts`, in every tick's `ProxyState`), and every call's
figures handed to the run's statistics (`StatsSink`) as the load client's own requests are: each call
with its session tree's task id, and each tree's end as the end of its task (docs/metrics.md, "Tasks")."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from agentx_tui.measure import StatsSink
from agentx_tui.proxy._call import ProxiedCall
from agentx_tui.proxy._session import How


@dataclass(frozen=True, slots=True)
class ProxiedSessionCounts:
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


class SessionStats:
    def __init__(self, sink: StatsSink | None = None) -> None:
        self.sink = sink
        self._how: Counter[str] = Counter()
        self._trees_seen = self._subagents_seen = 0
        self._completed = self._failed = 0
        self._prompt = self._cached = self._output = 0

    def opened(self, how: How, *, subagent: bool) -> None:
        """A new session: a tree's root, or a sub-agent."""
        self._how[how] += 1
        if subagent:
            self._subagents_seen += 1
        else:
            self._trees_seen += 1

    def failed(self, call: ProxiedCall) -> None:
        self._failed += 1
        if self.sink is not None:
            self.sink.error(call.failed())

    def completed(self) -> None:
        """A call completed; its figures follow once its prompt's length is known (`counted`)."""
        self._completed += 1

    def counted(self, call: ProxiedCall, prompt: int, reused: int | None = None) -> None:
        """A completed call's figures, with its prompt's length (from usage, or /tokenize) and its reused
        tokens (None: not known, its prompt was not tokenized)."""
        self._prompt += prompt
        self._cached += call.cached_tokens or 0
        self._output += call.output_tokens or 0
        if self.sink is not None:
            self.sink.add(call.completed(prompt, reused))

    def tree_ended(self, task: int, how: str) -> None:
        """A session tree's task is over: `done` (or `error`, a call of it failed) when it went idle,
        `retired` when it was cut off (neither completed nor failed)."""
        if self.sink is not None:
            self.sink.session_ended(how, task)

    def figures(self, live_sessions: int) -> ProxiedSessionCounts:
        return ProxiedSessionCounts(
            proxied_sessions=self._trees_seen,
            subagents=self._subagents_seen,
            live_sessions=live_sessions,
            by_header=self._how["header"],
            by_user=self._how["user"],
            inferred=self._how["inferred"],
            calls_completed=self._completed,
            calls_failed=self._failed,
            prompt_tokens=self._prompt,
            cached_tokens=self._cached,
            output_tokens=self._output,
        )
