"""A replay's sessions, read as users take them (docs/sessions.md, "How a replay reads a corpus").

Before the first request (pre-flight, `open_session_stream`):
- the **index**: where every session is (`sessionfile.index_sessions`: a folder's files listed and
  sized, a `.jsonl` file's lines found by their newlines), nothing parsed;
- a **read-ahead** of at most `PREFLIGHT_BYTES` of session text, validated and built into trees as the
  replay would: the first sessions (the ones users take first, a quarter of it), then sessions spread
  evenly over the rest. A corpus no bigger than that is read whole, as it always was. A file found
  bad here is one sentence and exit 2, before any load is sent.
- From the read-ahead, and only from it: the fit to the model's context (`context_needed`, the p95
  of its calls' `in` + `out`, at the stream's scale) and the figures `describe` gives.

During the replay: a user's session id picks its session (`index_of`: id modulo the sessions, the
replay rules of workloads/README.md); its tree is read then (`read`; the replay's loop does it in a
thread, one read at a time per process, so the event loop keeps sending), shared with any other user
replaying it at once (`held`), and dropped when no user holds it any more; the last `KEEP_RECENT` read
stay (all of them when the whole corpus was read ahead). A session that cannot be read is its
one-sentence `WorkloadError`, remembered (`refuse`) so that it is not read again; the loop skips it
and counts it. Plain calls only (this package has no asyncio).

Memory follows the trees being replayed, not the corpus. A stream pickles without its trees: each
worker process reads its own sessions from the same files.
"""

from __future__ import annotations

import weakref
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from agentx_tui import sessionfile
from agentx_tui.errors import WorkloadError
from agentx_tui.load.workload.base import checked_factor, output_length, p95, scaled_length
from agentx_tui.load.workload.session_trees import (
    SessionCounts,
    SessionTree,
    read_tree,
    rescaled_tree,
    session_files,
)
from agentx_tui.units import compact

# Session text read before the first request: ~0.7 s at the ~50 MB/s a session is read and built here.
PREFLIGHT_BYTES = 32 << 20
# Trees kept after their last user is done with them (a big corpus; a small one keeps every tree).
KEEP_RECENT = 4


@dataclass(frozen=True)
class ReadAhead:
    """What pre-flight read: each call's recorded `in` and `out` (so the fit can be sized at any scale)
    and the sessions' own counts."""

    sessions: int = 0
    bytes_read: int = 0
    subagents: int = 0
    with_subagents: int = 0
    recorded_in: array[int] = field(default_factory=lambda: array("q"))
    recorded_out: array[int] = field(default_factory=lambda: array("q"))

    @classmethod
    def of(cls, trees: Iterable[tuple[SessionTree, int]]) -> ReadAhead:
        """The read-ahead of `trees` (each with its size in bytes)."""
        ins, outs = array("q"), array("q")
        sessions = size = subagents = with_subagents = 0
        for tree, length in trees:
            sessions, size = sessions + 1, size + length
            subagents += tree.subagent_count
            with_subagents += 1 if tree.subagents else 0
            for call in tree.all_calls():
                ins.append(call.recorded_in)
                outs.append(call.recorded_out)
        return cls(sessions, size, subagents, with_subagents, ins, outs)

    def context_sizes(self, scale: float, output_scale: float) -> list[int]:
        """Each call's `in` + `out` at `scale` and `output_scale`: what the model must hold for it."""
        return [
            scaled_length(i, scale) + output_length(o, scale, output_scale)
            for i, o in zip(self.recorded_in, self.recorded_out, strict=True)
        ]

    def figures(self, scale: float, output_scale: float) -> SessionCounts:
        return SessionCounts(
            sessions=self.sessions,
            calls=len(self.recorded_in),
            subagents=self.subagents,
            with_subagents=self.with_subagents,
            input_tokens=sum(scaled_length(i, scale) for i in self.recorded_in),
            output_tokens=sum(output_length(o, scale, output_scale) for o in self.recorded_out),
            max_context_tokens=max(self.context_sizes(scale, output_scale), default=0),
        )


def preflight_picks(sizes: Sequence[int], budget: int) -> list[int]:
    """Which sessions pre-flight reads, in the order it reads them: every one when they fit `budget`;
    else the first ones (at least one, up to a quarter of it), then sessions evenly spread over the
    rest until `budget` is spent (the last may overrun it)."""
    total = sum(sizes)
    if total <= budget:
        return list(range(len(sizes)))
    picks: list[int] = []
    used = 0
    for i, size in enumerate(sizes):
        if picks and used + size > budget // 4:
            break
        picks.append(i)
        used += size
    head, rest = len(picks), len(sizes) - len(picks)
    if rest == 0:
        return picks
    average = (total - used) / rest
    wanted = max(1, min(rest, int((budget - used) / average)))
    step = rest / wanted
    for j in range(wanted):
        if used >= budget:
            break
        i = head + int(j * step + step / 2)
        picks.append(i)
        used += sizes[i]
    return picks


class SessionStream:
    """The sessions of a folder or file, indexed, read as users take them (the module docstring)."""

    def __init__(
        self,
        source: Path,
        refs: tuple[sessionfile.SessionRef, ...],
        read_ahead: ReadAhead,
        *,
        scale: float = 1.0,
        output_scale: float = 1.0,
        trees: Mapping[int, SessionTree] | None = None,
    ) -> None:
        self.source = source
        self.refs = refs
        self.read_ahead = read_ahead
        self.scale = scale
        self.output_scale = output_scale  # answers only, on top of `scale` (base.py)
        self._start(trees or {})

    def _start(self, trees: Mapping[int, SessionTree]) -> None:
        """This process's trees: none read yet but `trees` (pre-flight's), nothing being read."""
        self._keep = len(self.refs) if self.whole else KEEP_RECENT
        self._kept: OrderedDict[int, SessionTree] = OrderedDict(trees)
        self._live: weakref.WeakValueDictionary[int, SessionTree] = weakref.WeakValueDictionary(trees)
        self._bad: dict[int, WorkloadError] = {}

    # What travels to a worker process: the index and the read-ahead's figures, never a tree.
    _SHARED = ("source", "refs", "read_ahead", "scale", "output_scale")

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._SHARED}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._start({})

    # -- what it holds -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.refs)

    @property
    def whole(self) -> bool:
        """Every session was read (and checked) at pre-flight."""
        return self.read_ahead.sessions == len(self.refs)

    @property
    def size_bytes(self) -> int:
        return sum(ref.length for ref in self.refs)

    @property
    def trees(self) -> Sequence[SessionTree]:
        """The trees in replay order, each read when it is looked at (tests and tools: iterating reads
        one tree after another, holding none)."""
        return _Trees(self)

    def context_needed(self) -> int:
        """The p95 of `in` + `out` over the read-ahead's calls: a replay fits to the context over calls,
        not sessions (two 450 K-token files of the shipped 40 are outliers, skipped and counted)."""
        return p95(self.read_ahead.context_sizes(self.scale, self.output_scale))

    def describe(self) -> str:
        figures = self.read_ahead.figures(self.scale, self.output_scale)
        if self.whole:
            return figures.describe(self.source, self.scale, self.output_scale)
        return (
            f"{len(self.refs)} agent session(s) from {self.source.name} ({self.size_bytes / 1e6:,.0f} MB), read as "
            f"they are replayed; the {figures.sessions} read ahead: {figures.calls:,} calls, "
            f"{figures.subagents} sub-agent(s) in {figures.with_subagents} session(s), "
            f"contexts up to {compact(figures.max_context_tokens)} tokens"
            + (f" (scale {self.scale:g})" if self.scale != 1.0 else "")
            + (f" (outputs ×{self.output_scale:g})" if self.output_scale != 1.0 else "")
        )

    def with_scale(self, scale: float, output_scale: float = 1.0) -> SessionStream:
        """The same sessions at `scale` and `output_scale` (relative to the recorded sizes); the trees
        this process keeps come along, rescaled."""
        kept = {i: rescaled_tree(tree, scale, output_scale) for i, tree in self._kept.items()}
        return SessionStream(
            self.source, self.refs, self.read_ahead, scale=scale, output_scale=output_scale, trees=kept
        )

    # -- reading (plain calls: the replay's loop reads in a thread, one read at a time) ----------------------

    def index_of(self, session_id: int) -> int:
        """The session a user replays as `session_id`: files in order, recycled (workloads/README.md)."""
        return session_id % len(self.refs)

    def held(self, index: int) -> SessionTree | None:
        """Session `index` when this process holds its tree (kept, or replayed by a user now); its
        `WorkloadError` again when it could not be read."""
        bad = self._bad.get(index)
        if bad is not None:
            raise bad
        found = self._kept.get(index)
        if found is not None:
            self._kept.move_to_end(index)
            return found
        return self._live.get(index)

    def read(self, index: int) -> SessionTree:
        """Session `index` read from its file now (nothing held changes: safe in another thread);
        `WorkloadError` when it cannot be."""
        return read_tree(self.refs[index], self.scale, self.output_scale)

    def keep(self, index: int, tree: SessionTree) -> SessionTree:
        """Hold `tree` while any user replays it, and among the last kept."""
        self._live[index] = tree
        self._kept[index] = tree
        self._kept.move_to_end(index)
        while len(self._kept) > self._keep:
            self._kept.popitem(last=False)
        return tree

    def refuse(self, index: int, bad: WorkloadError) -> None:
        """Session `index` cannot be read: `held` raises `bad` from now on, and it is not read again."""
        self._bad[index] = bad

    def tree(self, index: int) -> SessionTree:
        """Session `index` (0 ≤ index < len), held or read now; `WorkloadError` when it cannot be."""
        found = self.held(index)
        if found is not None:
            return found
        try:
            return self.keep(index, self.read(index))
        except WorkloadError as bad:
            self.refuse(index, bad)
            raise


class _Trees(Sequence[SessionTree]):
    def __init__(self, stream: SessionStream) -> None:
        self._stream = stream

    def __len__(self) -> int:
        return len(self._stream)

    @overload
    def __getitem__(self, index: int) -> SessionTree: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[SessionTree]: ...

    def __getitem__(self, index: int | slice) -> SessionTree | Sequence[SessionTree]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        return self._stream.tree(index % len(self))


def open_session_stream(path: Path, *, scale: float = 1.0, output_scale: float = 1.0) -> SessionStream:
    """The sessions of a folder or a file, indexed, with pre-flight's read-ahead done (the module
    docstring); any problem found so far is one `WorkloadError`."""
    checked_factor(scale)
    checked_factor(output_scale, "--output-scale")
    refs = sessionfile.index_sessions(session_files(path))
    picks = preflight_picks([ref.length for ref in refs], PREFLIGHT_BYTES)
    keep = len(refs) if len(picks) == len(refs) else KEEP_RECENT
    kept: dict[int, SessionTree] = {}

    def read_ahead() -> Iterator[tuple[SessionTree, int]]:  # one tree at a time: only the numbers stay
        for i in picks:
            tree = read_tree(refs[i], scale, output_scale)
            if i == len(kept) < keep:  # the first sessions (users take them first), or all of a small corpus
                kept[i] = tree
            yield tree, refs[i].length

    ahead = ReadAhead.of(read_ahead())
    return SessionStream(path, refs, ahead, scale=scale, output_scale=output_scale, trees=kept)
