"""AgentX agent-session files (workloads/README.md) → immutable session trees, one session at a time:
read through their schema (`agentx_tui.sessionfile`: the format, its published variants, where a
folder's sessions are, and the one-sentence errors). A replay reads each tree when a user takes it
(session_stream.py); `load_session_set` reads a whole folder at once (tests, tools, small corpora).

A file's `requests` are calls and sub-agents holding calls of their own, whose `t` counts from the
sub-agent's spawn. A sub-agent's own `t` is when its result came back to the parent — its end, not
its start (workloads/README.md, measured on the shipped files: read so, every sub-agent with a
duration but one pair of clock outliers starts 0.1–1.0 s after the parent call before it ended, and no
parent call falls inside its span). Each sub-agent gets its schedule here: it spawns after the parent
call just before it in `requests`; the first later parent call whose `t` is at or after the
sub-agent's `t` (its join) waits for it (none: the tree ends when it does). A null `duration_ms`
changes nothing about that order (only the span is unknown). Sub-agents inside sub-agents are read the
same way, one level down (the shipped files have none).

Choices the format leaves open:
- a missing or null `think_time` is 0 (two calls of the shipped files have none);
- `hash_ids` may have one id per whole block (as recorded) or also one for a partial last block
  (as Mooncake traces do); more than that is an error (the schema's);
- `scale` multiplies `in`, `out` and the block size alike; `in` is rounded to the nearest token
  (at least 1) and `out` too (at least 1, so a recorded `out` of 0 still asks for a token); the
  block size is *not* rounded: block i covers ⌊i·b⌋ to ⌊(i+1)·b⌋ tokens (b = block_size × scale),
  so the recorded shared fraction of every prompt survives any scale (rounding 1.92 to 2 or to 1
  would move it by 4% or 48%);
- `output_scale` (`--output-scale`) multiplies `out` only, on top of `scale`: `out` × scale ×
  output_scale, rounded, at least 1 (`output_length`, base.py); prompts, hash ids, think times and the
  calls stay as recorded;
- hash ids are kept as `array`s of 32- (or 64-) bit integers: 4 M ids cost 16 MB, not ~150 MB of
  int objects. Treat them as read-only.
"""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

from agentx_tui import sessionfile
from agentx_tui.errors import WorkloadError
from agentx_tui.load.workload.base import checked_factor, output_length, scaled_length
from agentx_tui.units import compact

_EPS = 1e-6  # recorded times are milliseconds: this only absorbs float rounding (a rewritten clock)


@dataclass(frozen=True, slots=True, eq=False)
class SessionCall:
    """A call of a `SessionTree` (its parent's or a sub-agent's), scaled (the file's record: `sessionfile.Call`)."""

    index: int  # position among its agent's calls
    seq: int  # position among all calls of the tree, in file order: unique within the tree
    where: str  # e.g. "requests[40].requests[3]", for messages
    t: float  # recorded start, seconds on its agent's clock (a sub-agent's starts at its spawn)
    think_time: float  # recorded seconds the client waited after the agent's previous call
    api_time: float | None  # recorded seconds the server took; some calls have none
    input_tokens: int  # `in` × scale: the prompt's exact length
    output_tokens: int  # `out` × scale × output scale, rounded, at least 1
    hash_ids: array[int]  # one id per block of the prompt; equal ids (within a file) = equal blocks
    recorded_in: int
    recorded_out: int


@dataclass(frozen=True, slots=True, eq=False)
class SessionSubAgent:
    """A sub-agent of a `SessionTree`, scaled and scheduled against its parent's calls (the file's own
    record of it is `sessionfile.SubAgent`)."""

    where: str  # "requests[40]"
    agent_id: str
    subagent_type: str
    t: float  # its end, recorded on the parent's clock: when its result came back
    start: float | None  # t − duration_ms/1000 on the parent's clock; None when duration_ms is null
    spawn_after: int | None  # index of the parent call after which it starts; None: at the start
    join_at: int | None  # index of the parent call that waits for it; None: the tree ends with it
    calls: tuple[SessionCall, ...]
    subagents: tuple[SessionSubAgent, ...]  # nested ones, scheduled against this sub-agent's calls

    @property
    def label(self) -> str:
        return f"{self.agent_id} {self.subagent_type}".strip()


# A replay shares one tree among the users replaying it at once, through weak references
# (session_stream.py): a tree no user holds any more is dropped.
@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class SessionTree:
    """One recorded session of a session file, immutable, as a replay sends it: the parent's calls and
    its sub-agents (a real agent's tree as the proxy sees it live is `proxy`'s `LiveTree`)."""

    name: str  # the file's name
    path: Path
    session_id: str  # the file's `id`
    key: int  # from the file's path (stable across runs): scopes the text of this file's blocks
    block_size: int  # recorded tokens per hash id
    scale: float
    calls: tuple[SessionCall, ...]  # the parent's
    subagents: tuple[SessionSubAgent, ...]
    # Totals over the calls, computed from them (so `replace` with other calls recomputes them too).
    call_count: int = field(init=False)  # every call, sub-agents' included
    subagent_count: int = field(init=False)
    input_tokens: int = field(init=False)  # scaled
    output_tokens: int = field(init=False)
    max_context_tokens: int = field(init=False)  # the largest in + out of a call (scaled): what the model must hold
    max_blocks: int = field(init=False)  # the most hash ids in one call

    def __post_init__(self) -> None:
        calls = list(_walk(self.calls, self.subagents))
        totals = {
            "call_count": len(calls),
            "subagent_count": _count_subagents(self.subagents),
            "input_tokens": sum(c.input_tokens for c in calls),
            "output_tokens": sum(c.output_tokens for c in calls),
            "max_context_tokens": max((c.input_tokens + c.output_tokens for c in calls), default=0),
            "max_blocks": max((len(c.hash_ids) for c in calls), default=0),
        }
        for name, value in totals.items():
            object.__setattr__(self, name, value)  # frozen: set once, here

    @property
    def block_tokens(self) -> float:
        """The scaled block size (not rounded; see the module docstring)."""
        return self.block_size * self.scale

    @property
    def label(self) -> str:
        return self.session_id

    def all_calls(self) -> Iterator[SessionCall]:
        return _walk(self.calls, self.subagents)


@dataclass
class SessionCounts:
    """Counters over sessions, added one tree at a time (a whole corpus in O(1) memory)."""

    sessions: int = 0
    calls: int = 0
    subagents: int = 0
    with_subagents: int = 0  # sessions with at least one sub-agent
    input_tokens: int = 0  # scaled
    output_tokens: int = 0
    max_context_tokens: int = 0

    @classmethod
    def of(cls, trees: Iterable[SessionTree]) -> SessionCounts:
        figures = cls()
        for tree in trees:
            figures.add(tree)
        return figures

    def add(self, tree: SessionTree) -> None:
        self.sessions += 1
        self.calls += tree.call_count
        self.subagents += tree.subagent_count
        self.with_subagents += 1 if tree.subagents else 0
        self.input_tokens += tree.input_tokens
        self.output_tokens += tree.output_tokens
        self.max_context_tokens = max(self.max_context_tokens, tree.max_context_tokens)

    def describe(self, source: Path, scale: float = 1.0, output_scale: float = 1.0) -> str:
        return (
            f"{self.sessions} agent session(s) from {source.name}: {self.calls:,} calls, "
            f"{self.subagents} sub-agent(s) in {self.with_subagents} session(s), "
            f"{compact(self.input_tokens)} input / {compact(self.output_tokens)} output tokens, "
            f"contexts up to {compact(self.max_context_tokens)} tokens"
            + (f" (scale {scale:g})" if scale != 1.0 else "")
            + (f" (outputs ×{output_scale:g})" if output_scale != 1.0 else "")
        )


@dataclass(frozen=True, slots=True, eq=False)
class SessionSet:
    """A whole folder's trees, in memory at once (`load_session_set`); a replay streams them instead."""

    source: Path
    scale: float
    trees: tuple[SessionTree, ...]
    calls: int
    subagents: int
    with_subagents: int  # trees with at least one sub-agent
    input_tokens: int
    output_tokens: int
    max_context_tokens: int
    output_scale: float = 1.0  # answers only, on top of `scale` (the module docstring)

    def describe(self) -> str:
        return SessionCounts.of(self.trees).describe(self.source, self.scale, self.output_scale)

    def with_scale(self, scale: float, output_scale: float = 1.0) -> SessionSet:
        """The same sessions at `scale` and `output_scale` (relative to the recorded sizes, not to this
        set's)."""
        trees = tuple(rescaled_tree(t, scale, output_scale) for t in self.trees)
        return _make_set(self.source, scale, trees, output_scale)


def session_files(path: Path) -> list[Path]:
    """The session files of a folder (`sessionfile.session_file_paths`), or the one file `path` is;
    none is one `WorkloadError`."""
    if path.is_dir():
        files = sessionfile.session_file_paths(path)
        if not files:
            raise WorkloadError(
                f"The folder {path} holds no agent-session files (*.json, or *.jsonl with one session a line).",
                sessionfile.HINT,
            )
        return files
    if path.is_file():
        return [path]
    raise WorkloadError(f"No agent-session file or folder at {path}.")


def load_session_set(path: Path, *, scale: float = 1.0, output_scale: float = 1.0) -> SessionSet:
    """Every session of a folder's session files or of one file, read now and held together; any
    problem is one `WorkloadError`."""
    checked_factor(scale)
    checked_factor(output_scale, "--output-scale")
    trees = tuple(tree for p in session_files(path) for tree in _file_trees(p, scale, output_scale))
    return _make_set(path, scale, trees, output_scale)


def survey_sessions(path: Path) -> SessionCounts:
    """Every session of a folder or file read as a replay reads it, only its figures kept (memory: one
    tree at a time); the first problem is one `WorkloadError`."""
    return SessionCounts.of(tree for p in session_files(path) for tree in _file_trees(p, 1.0, 1.0))


def read_tree(ref: sessionfile.SessionRef, scale: float = 1.0, output_scale: float = 1.0) -> SessionTree:
    """The tree of the one session `ref` points at, at `scale` and `output_scale`; `WorkloadError`."""
    return _TreeBuilder(scale, output_scale).tree(ref.path, ref.line, sessionfile.read_ref(ref))


# -- session files → trees ---------------------------------------------------------------------------------


def _file_trees(path: Path, scale: float, output_scale: float) -> Iterator[SessionTree]:
    for line, session in sessionfile.read_sessions(path):
        yield _TreeBuilder(scale, output_scale).tree(path, line, session)


class _TreeBuilder:
    """One validated session (the reference format) → its tree, each sub-agent scheduled."""

    def __init__(self, scale: float, output_scale: float) -> None:
        self.scale, self.output_scale = scale, output_scale
        self.seq = 0

    def tree(self, path: Path, line: int | None, session: sessionfile.SessionFile) -> SessionTree:
        calls, subagents = self.agent(session.requests, "")
        suffix = f":{line}" if line else ""
        return SessionTree(
            name=path.name + suffix,
            path=path,
            session_id=session.id or path.stem + suffix,
            key=zlib.crc32(f"{path}{suffix}".encode()),
            block_size=session.block_size,
            scale=self.scale,
            calls=calls,
            subagents=subagents,
        )

    def agent(
        self, requests: list[sessionfile.SubAgent | sessionfile.Call], prefix: str
    ) -> tuple[tuple[SessionCall, ...], tuple[SessionSubAgent, ...]]:
        """One agent's requests: its calls, and its sub-agents with their schedule against those calls."""
        calls: list[SessionCall] = []
        found: list[tuple[SessionSubAgent, int | None]] = []
        for i, item in enumerate(requests):
            where = f"{prefix}requests[{i}]"
            if isinstance(item, sessionfile.SubAgent):
                found.append((self.subagent(item, where), len(calls) - 1 if calls else None))
            else:
                calls.append(self.call(item, where, len(calls)))
        subagents = []
        for sub, after in found:
            first = 0 if after is None else after + 1
            join = next((j for j in range(first, len(calls)) if calls[j].t >= sub.t - _EPS), None)
            subagents.append(replace(sub, spawn_after=after, join_at=join))
        return tuple(calls), tuple(subagents)

    def call(self, item: sessionfile.Call, where: str, index: int) -> SessionCall:
        self.seq += 1
        return SessionCall(
            index=index, seq=self.seq - 1, where=where, t=item.t, think_time=item.think_time or 0.0,
            api_time=item.api_time, input_tokens=scaled_length(item.input_tokens, self.scale),
            output_tokens=output_length(item.output_tokens, self.scale, self.output_scale),
            hash_ids=_id_array(cast(list[int], item.hash_ids)),  # integers of 64 bits at most, once normalised
            recorded_in=item.input_tokens, recorded_out=item.output_tokens,
        )  # fmt: skip

    def subagent(self, item: sessionfile.SubAgent, where: str) -> SessionSubAgent:
        calls, nested = self.agent(item.requests, where + ".")
        return SessionSubAgent(
            where=where, agent_id=item.agent_id if item.agent_id is not None else where,
            subagent_type=item.subagent_type or "", t=item.t,
            start=None if item.duration_ms is None else item.t - item.duration_ms / 1000.0,
            spawn_after=None, join_at=None, calls=calls, subagents=nested,
        )  # fmt: skip


def _id_array(ids: list[int]) -> array[int]:
    """The ids packed, 32-bit when they fit."""
    try:
        return array("i", ids)
    except OverflowError:
        return array("q", ids)


# -- derived figures and scaling -----------------------------------------------------------------------


def _walk(calls: tuple[SessionCall, ...], subagents: tuple[SessionSubAgent, ...]) -> Iterator[SessionCall]:
    yield from calls
    for sub in subagents:
        yield from _walk(sub.calls, sub.subagents)


def _count_subagents(subagents: tuple[SessionSubAgent, ...]) -> int:
    return sum(1 + _count_subagents(s.subagents) for s in subagents)


def _make_set(source: Path, scale: float, trees: tuple[SessionTree, ...], output_scale: float = 1.0) -> SessionSet:
    return SessionSet(
        source=source,
        scale=scale,
        output_scale=output_scale,
        trees=trees,
        calls=sum(t.call_count for t in trees),
        subagents=sum(t.subagent_count for t in trees),
        with_subagents=sum(1 for t in trees if t.subagents),
        input_tokens=sum(t.input_tokens for t in trees),
        output_tokens=sum(t.output_tokens for t in trees),
        max_context_tokens=max((t.max_context_tokens for t in trees), default=0),
    )


def _rescaled_calls(calls: tuple[SessionCall, ...], scale: float, output_scale: float) -> tuple[SessionCall, ...]:
    return tuple(
        replace(
            c,
            input_tokens=scaled_length(c.recorded_in, scale),
            output_tokens=output_length(c.recorded_out, scale, output_scale),
        )
        for c in calls
    )


def _rescaled_subagents(
    subagents: tuple[SessionSubAgent, ...], scale: float, output_scale: float
) -> tuple[SessionSubAgent, ...]:
    return tuple(
        replace(
            s,
            calls=_rescaled_calls(s.calls, scale, output_scale),
            subagents=_rescaled_subagents(s.subagents, scale, output_scale),
        )
        for s in subagents
    )


def rescaled_tree(tree: SessionTree, scale: float, output_scale: float) -> SessionTree:
    return replace(
        tree,
        scale=scale,
        calls=_rescaled_calls(tree.calls, scale, output_scale),
        subagents=_rescaled_subagents(tree.subagents, scale, output_scale),
    )
