"""`kind: sessions`: AgentX agent-session files (workloads/README.md; the format is in the traces README),
loaded, checked and turned into immutable session trees once, before any server starts.

A file is one JSON object with `block_size` and `requests`: calls (`t`, `in`, `out`, `hash_ids`,
`think_time`, `api_time`) and `subagent` entries holding calls of their own, whose `t` counts from
the sub-agent's spawn. A sub-agent's own `t` is when its result came back to the parent — its end,
not its start (workloads/README.md, measured on the shipped files: read so, every sub-agent with a duration
but one pair of clock outliers starts 0.1–1.0 s after the parent call before it ended, and no parent
call falls inside its span). Each sub-agent gets its schedule here: it spawns after the parent call
just before it in `requests`; the first later parent call whose `t` is at or after the sub-agent's
`t` (its join) waits for it (none: the tree ends when it does). A null `duration_ms` changes nothing
about that order (only the span is unknown). Sub-agents inside sub-agents are read the same way, one
level down (the shipped files have none).

Where sessions come from: every `*.json` (one session) and `*.jsonl` (one session per line, the
layout of the published corpora on Hugging Face) of a folder, in path order, looking into its
subfolders only when it has none at the top (a pulled corpus keeps its files where the publisher
put them); or one file. The published corpora's variants (sub-agent clocks, hash-id forms, extra
fields) are rewritten into this format by `session_variants.normalise` before anything is checked.

Choices the format leaves open:
- a missing or null `think_time` is 0 (two calls of the shipped files have none);
- `hash_ids` may have one id per whole block (as recorded) or also one for a partial last block
  (as Mooncake traces do); more than that is an error;
- `scale` multiplies `in`, `out` and the block size alike; `in` is rounded to the nearest token
  (at least 1) and `out` too (at least 1, so a recorded `out` of 0 still asks for a token); the
  block size is *not* rounded: block i covers ⌊i·b⌋ to ⌊(i+1)·b⌋ tokens (b = block_size × scale),
  so the recorded shared fraction of every prompt survives any scale (rounding 1.92 to 2 or to 1
  would move it by 4% or 48%);
- hash ids are kept as `array`s of 32- (or 64-) bit integers: 4 M ids cost 16 MB, not ~150 MB of
  int objects. Treat them as read-only.
"""

from __future__ import annotations

import json
import math
import zlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, NoReturn

from agentx_tui.errors import WorkloadError
from agentx_tui.load.workload.base import Prepared, Spec, WorkloadBase, checked_factor, p95, scaled_length
from agentx_tui.load.workload.session_variants import normalise
from agentx_tui.units import compact

_HINT = (
    "A session file is one JSON object with block_size and requests; each call needs t, in, out and "
    "hash_ids (think_time and api_time optional), each sub-agent t, duration_ms (or null) and requests."
)
_MISSING: Any = object()


class SessionsSpec(Spec):
    """Replay of AgentX agent sessions: a folder of session `.json` files, or one."""

    path: str


class SessionsWorkload(WorkloadBase):
    kind: Literal["sessions"]
    sessions: SessionsSpec


_EPS = 1e-6  # recorded times are milliseconds: this only absorbs float rounding (a rewritten clock)


@dataclass(frozen=True, slots=True, eq=False)
class SessionCall:
    index: int  # position among its agent's calls
    seq: int  # position among all calls of the tree, in file order: unique within the tree
    where: str  # e.g. "requests[40].requests[3]", for messages
    t: float  # recorded start, seconds on its agent's clock (a sub-agent's starts at its spawn)
    think_time: float  # recorded seconds the client waited after the agent's previous call
    api_time: float | None  # recorded seconds the server took; some calls have none
    input_tokens: int  # `in` × scale: the prompt's exact length
    output_tokens: int  # `out` × scale, at least 1
    hash_ids: array[int]  # one id per block of the prompt; equal ids (within a file) = equal blocks
    recorded_in: int
    recorded_out: int


@dataclass(frozen=True, slots=True, eq=False)
class SubAgent:
    where: str  # "requests[40]"
    agent_id: str
    subagent_type: str
    t: float  # its end, recorded on the parent's clock: when its result came back
    start: float | None  # t − duration_ms/1000 on the parent's clock; None when duration_ms is null
    spawn_after: int | None  # index of the parent call after which it starts; None: at the start
    join_at: int | None  # index of the parent call that waits for it; None: the tree ends with it
    calls: tuple[SessionCall, ...]
    subagents: tuple[SubAgent, ...]  # nested ones, scheduled against this sub-agent's calls

    @property
    def label(self) -> str:
        return f"{self.agent_id} {self.subagent_type}".strip()


@dataclass(frozen=True, slots=True, eq=False)
class SessionTree:
    name: str  # the file's name
    path: Path
    session_id: str  # the file's `id`
    key: int  # from the file's path (stable across runs): scopes the text of this file's blocks
    block_size: int  # recorded tokens per hash id
    scale: float
    calls: tuple[SessionCall, ...]  # the parent's
    subagents: tuple[SubAgent, ...]
    call_count: int  # every call, sub-agents' included
    subagent_count: int
    input_tokens: int  # scaled
    output_tokens: int
    max_context_tokens: int  # the largest in + out of a call (scaled): what the model must hold
    max_blocks: int  # the most hash ids in one call

    @property
    def block_tokens(self) -> float:
        """The scaled block size (not rounded; see the module docstring)."""
        return self.block_size * self.scale

    @property
    def label(self) -> str:
        return self.session_id

    def all_calls(self) -> Iterator[SessionCall]:
        return _walk(self.calls, self.subagents)


@dataclass(frozen=True, slots=True, eq=False)
class SessionSet:
    source: Path
    scale: float
    trees: tuple[SessionTree, ...]
    calls: int
    subagents: int
    with_subagents: int  # trees with at least one sub-agent
    input_tokens: int
    output_tokens: int
    max_context_tokens: int

    def describe(self) -> str:
        return (
            f"{len(self.trees)} agent session(s) from {self.source.name}: {self.calls:,} calls, "
            f"{self.subagents} sub-agent(s) in {self.with_subagents} session(s), "
            f"{compact(self.input_tokens)} input / {compact(self.output_tokens)} output tokens, "
            f"contexts up to {compact(self.max_context_tokens)} tokens"
            + (f" (scale {self.scale:g})" if self.scale != 1.0 else "")
        )

    def with_scale(self, scale: float) -> SessionSet:
        """The same sessions at `scale` (relative to the recorded sizes, not to this set's)."""
        return _make_set(self.source, scale, tuple(_rescaled_tree(t, scale) for t in self.trees))


def load_session_set(path: Path, *, scale: float = 1.0) -> SessionSet:
    """The sessions of a folder's `*.json` and `*.jsonl` files (see the module docstring) or of one file;
    any problem is one `WorkloadError`."""
    checked_factor(scale)
    if path.is_dir():
        files = _session_files(path)
        if not files:
            raise WorkloadError(
                f"The folder {path} holds no agent-session files (*.json, or *.jsonl with one session a line).",
                _HINT,
            )
    elif path.is_file():
        files = [path]
    else:
        raise WorkloadError(f"No agent-session file or folder at {path}.")
    trees = tuple(tree for p in files for tree in _file_trees(p))
    loaded = _make_set(path, 1.0, trees)
    return loaded if scale == 1.0 else loaded.with_scale(scale)


# -- corpus files: folders and JSONL -----------------------------------------------------------------------

_SESSION_SUFFIXES = (".json", ".jsonl")


def _session_files(folder: Path) -> list[Path]:
    """The folder's session files; its subfolders' (hidden ones aside) only when it has none of its own."""
    files = sorted(p for p in folder.iterdir() if p.suffix in _SESSION_SUFFIXES and p.is_file())
    if files:
        return files
    found = (
        p
        for p in folder.rglob("*")
        if p.suffix in _SESSION_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
        and p.is_file()
    )
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def _file_trees(path: Path) -> Iterator[SessionTree]:
    if path.suffix != ".jsonl":
        yield _Parser(path).tree()
        return
    count = 0
    try:
        with path.open("rb") as lines:  # line by line: a published corpus is one file of 2 GB
            for number, line in enumerate(lines, 1):
                if line.strip():
                    count += 1
                    yield _Parser(path, line=number).tree_of(_json(line, f"{path}, line {number},", one_line=True))
    except OSError as exc:
        raise WorkloadError(f"Cannot read the session file {path} ({exc.strerror or exc}).") from exc
    if count == 0:
        raise WorkloadError(f"The session file {path} holds no sessions (one JSON object a line).", _HINT)


def _json(raw: bytes, place: str, *, one_line: bool = False) -> Any:
    try:
        return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise WorkloadError(f"The session file {place} is not UTF-8 text ({exc.reason}).", _HINT) from exc
    except json.JSONDecodeError as exc:
        at = f"column {exc.colno}" if one_line else f"line {exc.lineno} column {exc.colno}"
        raise WorkloadError(f"The session file {place} is not JSON ({exc.msg}, {at}).", _HINT) from exc


# -- parsing ---------------------------------------------------------------------------------------


class _Parser:
    def __init__(self, path: Path, *, line: int | None = None) -> None:
        self.path = path
        self.line = line  # the session's line in a `.jsonl` file
        self.block_size = 1
        self.seq = 0

    def fail(self, where: str, problem: str) -> NoReturn:
        place = (
            f"Session file {self.path}" + (f", line {self.line}" if self.line else "") + (f", {where}" if where else "")
        )
        raise WorkloadError(f"{place}: {problem}.", _HINT)

    def tree(self) -> SessionTree:
        try:
            raw = self.path.read_bytes()
        except OSError as exc:
            raise WorkloadError(f"Cannot read the session file {self.path} ({exc.strerror or exc}).") from exc
        return self.tree_of(_json(raw, str(self.path)))

    def tree_of(self, data: Any) -> SessionTree:
        if not isinstance(data, dict):
            self.fail("", f"it must hold one JSON object, not {_kind(data)}")
        data = normalise(data, self.fail)
        block = _integer(data.get("block_size", _MISSING))
        if block is None or block < 1:
            self._bad("", data, "block_size", "a positive integer (tokens per hash id)")
        self.block_size = block
        requests = data.get("requests", _MISSING)
        if not isinstance(requests, list):
            self._bad("", data, "requests", "a list of calls and sub-agents")
        calls, subagents = self.agent(requests, "")
        if self.seq == 0:
            self.fail("", "`requests` holds no calls")
        session_id = data.get("id")
        suffix = f":{self.line}" if self.line else ""
        return _make_tree(
            name=self.path.name + suffix,
            path=self.path,
            session_id=session_id if isinstance(session_id, str) and session_id else self.path.stem + suffix,
            key=zlib.crc32(f"{self.path}{suffix}".encode()),
            block_size=block,
            scale=1.0,
            calls=calls,
            subagents=subagents,
        )

    def agent(self, requests: list[Any], prefix: str) -> tuple[tuple[SessionCall, ...], tuple[SubAgent, ...]]:
        """One agent's requests: its calls, and its sub-agents with their schedule against those calls."""
        calls: list[SessionCall] = []
        found: list[tuple[SubAgent, int | None]] = []
        for i, item in enumerate(requests):
            where = f"{prefix}requests[{i}]"
            if not isinstance(item, dict):
                self.fail(where, f"it must be an object (a call or a sub-agent), not {_kind(item)}")
            if item.get("type") == "subagent":
                found.append((self.subagent(item, where), len(calls) - 1 if calls else None))
            else:
                calls.append(self.call(item, where, len(calls)))
        subagents = []
        for sub, after in found:
            first = 0 if after is None else after + 1
            join = next((j for j in range(first, len(calls)) if calls[j].t >= sub.t - _EPS), None)
            subagents.append(replace(sub, spawn_after=after, join_at=join))
        return tuple(calls), tuple(subagents)

    def call(self, item: dict[str, Any], where: str, index: int) -> SessionCall:
        t = self._seconds(item, where, "t")
        think = self._optional_seconds(item, where, "think_time")
        api = self._optional_seconds(item, where, "api_time")
        tokens_in = _integer(item.get("in", _MISSING))
        if tokens_in is None or tokens_in < 1:
            self._bad(where, item, "in", "a positive integer (prompt tokens)")
        tokens_out = _integer(item.get("out", _MISSING))
        if tokens_out is None or tokens_out < 0:
            self._bad(where, item, "out", "a non-negative integer (output tokens)")
        raw = item.get("hash_ids", _MISSING)
        if not isinstance(raw, list):
            self._bad(where, item, "hash_ids", "a list of integers (one per block)")
        ids = _id_array(raw)
        if isinstance(ids, int):
            self.fail(where, f"`hash_ids[{ids}]` must be an integer (64 bits at most), not {_show(raw[ids])}")
        if len(ids) > -(-tokens_in // self.block_size):
            self.fail(
                where,
                f"`hash_ids` has {len(ids)} ids, more than `in` ({tokens_in} tokens) allows in blocks of "
                f"{self.block_size}",
            )
        self.seq += 1
        return SessionCall(
            index=index, seq=self.seq - 1, where=where, t=t, think_time=think or 0.0, api_time=api,
            input_tokens=tokens_in, output_tokens=max(1, tokens_out), hash_ids=ids,
            recorded_in=tokens_in, recorded_out=tokens_out,
        )  # fmt: skip

    def subagent(self, item: dict[str, Any], where: str) -> SubAgent:
        t = self._seconds(item, where, "t")
        requests = item.get("requests", _MISSING)
        if not isinstance(requests, list):
            self._bad(where, item, "requests", "a list of the sub-agent's calls")
        calls, nested = self.agent(requests, where + ".")
        duration = self._optional_seconds(item, where, "duration_ms")
        agent_id, kind = item.get("agent_id"), item.get("subagent_type")
        return SubAgent(
            where=where, agent_id=agent_id if isinstance(agent_id, str) else where,
            subagent_type=kind if isinstance(kind, str) else "", t=t,
            start=None if duration is None else t - duration / 1000.0,
            spawn_after=None, join_at=None, calls=calls, subagents=nested,
        )  # fmt: skip

    def _seconds(self, item: dict[str, Any], where: str, name: str) -> float:
        number = _number(item.get(name, _MISSING))
        if number is None or number < 0:
            self._bad(where, item, name, "a non-negative number")
        return number

    def _optional_seconds(self, item: dict[str, Any], where: str, name: str) -> float | None:
        return None if item.get(name) is None else self._seconds(item, where, name)

    def _bad(self, where: str, item: dict[str, Any], name: str, rule: str) -> NoReturn:
        value = item.get(name, _MISSING)
        if value is _MISSING:
            self.fail(where, f"`{name}` is missing; it must be {rule}")
        self.fail(where, f"`{name}` must be {rule}, not {_show(value)}")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _id_array(values: list[Any]) -> array[int] | int:
    """The ids packed (32-bit when they fit), or the index of the first one that is not an integer."""
    for code in ("i", "q"):
        try:
            return array(code, values)
        except OverflowError:
            continue
        except TypeError:
            break
    for j, value in enumerate(values):
        if not isinstance(value, int) or isinstance(value, bool) or not -(2**63) <= value < 2**63:
            return j
    return 0  # not reached: array() refused something


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _kind(value: Any) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", type(None): "null", bool: "a boolean"}
    return kinds.get(type(value), "a number")


# -- derived figures and scaling -----------------------------------------------------------------------


def _walk(calls: tuple[SessionCall, ...], subagents: tuple[SubAgent, ...]) -> Iterator[SessionCall]:
    yield from calls
    for sub in subagents:
        yield from _walk(sub.calls, sub.subagents)


def _count_subagents(subagents: tuple[SubAgent, ...]) -> int:
    return sum(1 + _count_subagents(s.subagents) for s in subagents)


def _make_tree(**fields: Any) -> SessionTree:
    calls = list(_walk(fields["calls"], fields["subagents"]))
    return SessionTree(
        **fields,
        call_count=len(calls),
        subagent_count=_count_subagents(fields["subagents"]),
        input_tokens=sum(c.input_tokens for c in calls),
        output_tokens=sum(c.output_tokens for c in calls),
        max_context_tokens=max((c.input_tokens + c.output_tokens for c in calls), default=0),
        max_blocks=max((len(c.hash_ids) for c in calls), default=0),
    )


def _make_set(source: Path, scale: float, trees: tuple[SessionTree, ...]) -> SessionSet:
    return SessionSet(
        source=source,
        scale=scale,
        trees=trees,
        calls=sum(t.call_count for t in trees),
        subagents=sum(t.subagent_count for t in trees),
        with_subagents=sum(1 for t in trees if t.subagents),
        input_tokens=sum(t.input_tokens for t in trees),
        output_tokens=sum(t.output_tokens for t in trees),
        max_context_tokens=max((t.max_context_tokens for t in trees), default=0),
    )


def _rescaled_calls(calls: tuple[SessionCall, ...], scale: float) -> tuple[SessionCall, ...]:
    return tuple(
        replace(c, input_tokens=scaled_length(c.recorded_in, scale), output_tokens=scaled_length(c.recorded_out, scale))
        for c in calls
    )


def _rescaled_subagents(subagents: tuple[SubAgent, ...], scale: float) -> tuple[SubAgent, ...]:
    return tuple(
        replace(s, calls=_rescaled_calls(s.calls, scale), subagents=_rescaled_subagents(s.subagents, scale))
        for s in subagents
    )


def _rescaled_tree(tree: SessionTree, scale: float) -> SessionTree:
    return _make_tree(
        name=tree.name,
        path=tree.path,
        session_id=tree.session_id,
        key=tree.key,
        block_size=tree.block_size,
        scale=scale,
        calls=_rescaled_calls(tree.calls, scale),
        subagents=_rescaled_subagents(tree.subagents, scale),
    )


# -- the prepared workload -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PreparedSessions(Prepared[SessionsWorkload]):
    sessions: SessionSet  # at `spec.scale`

    @classmethod
    def load(cls, spec: SessionsWorkload) -> PreparedSessions:
        return cls(spec, load_session_set(Path(spec.sessions.path), scale=spec.scale))

    def context_needed(self) -> int:
        # Over calls, not sessions: two 450 K-token files are outliers, skipped and counted, not fitted.
        return p95([c.input_tokens + c.output_tokens for t in self.sessions.trees for c in t.all_calls()])

    def scaled(self, factor: float) -> PreparedSessions:
        spec = self.spec.scaled(factor)
        return PreparedSessions(spec, self.sessions.with_scale(spec.scale))

    def check_fits(self, max_model_len: int, scale: float | None) -> None:
        """Nothing to refuse: a call too long for the model ends its session and is counted."""
