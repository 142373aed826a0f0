"""Proxied sessions as AgentX session files (docs/capture.md): no text, no token ids, no
header values; lengths, timings and salted block hashes only.

One file per session tree (an agent and its sub-agents), in the format of the AgentX corpus
(`../shared/traces/agentx-weka/`), so that `-w DIR` replays it as it is (load/workload/sessions.py):
- a call: `t` (seconds from the start of its agent: the tree's first call, or the sub-agent's),
  `type` (`s` streamed, `n` not: the corpus's streamed calls are the ones with a `ttft`), `model`,
  `in`/`out`/`cached` (the server's usage), `hash_ids`, `input_types`, `stop`, `api_time`, `ttft`,
  `think_time` (its start − the end of the agent's previous call; a sub-agent's first call counts from
  the end of the parent call it followed), and `counts_from` (`server_usage`, or `tokenize_and_events`
  when the agent did not ask the server for usage: then `cached` is null);
- a sub-agent: `type: "subagent"`, `t` = its end (when its last call ended) on its parent's clock,
  `duration_ms`, `agent_id`, `subagent_type` (unknown: ""), `models`, `requests`, placed among the
  parent's requests in order of that end, as the corpus records them.

The file is built as the session-file schema's models (`agentx_tui.sessionfile`, where every field
name is spelled) and written through its writer: atomically (a temporary file in the same folder, then
a rename) with mode 0600, when its tree has been idle long enough (`LiveSessions`) and for every open
tree when the capture closes. What is written is what the replay reads: the same models read it.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentx_tui import __version__
from agentx_tui.errors import UsageError
from agentx_tui.proxy._blocks import BLOCK_SIZE, BlockChain, BlockHasher, IdTable
from agentx_tui.proxy._call import ProxiedCall
from agentx_tui.sessionfile import Call, SessionFile, SubAgent, TokenCounts, Totals, write_session_file

CountsFrom = Literal["server_usage", "tokenize_and_events"]
_HASH_SLICE = 512  # blocks hashed between two turns of the event loop (~1 ms)
_INPUT_TYPES = {"tool": "tool_result", "function": "tool_result"}


def prepare_capture_folder(folder: Path) -> None:
    """Make `folder` (owner-only) if it is not there; `UsageError` if it cannot be made or written to."""
    hint = "Pass --capture a folder you can write to."
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--capture {folder} is a file, not a folder.", hint)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"The capture folder {folder} cannot be made ({exc.strerror or exc}).", hint) from exc
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"The capture folder {folder} is not writable.", hint)


@dataclass(slots=True, eq=False)
class CapturedCall:
    """What a file keeps of one completed call (times: `time.monotonic()`)."""

    start: float
    end: float
    ttft: float | None
    streamed: bool
    model: str | None
    prompt_tokens: int | None  # the server's usage; None when it was not asked for
    output_tokens: int
    cached: int | None
    stop: str
    input_type: str
    tokenized: int | None = None  # the prompt's length as /tokenize counted it
    hash_ids: array[int] | None = None  # None until the prompt is tokenized (or when it cannot be)

    @property
    def counts_from(self) -> CountsFrom:
        return "server_usage" if self.prompt_tokens is not None else "tokenize_and_events"

    @property
    def input_tokens(self) -> int | None:
        return self.prompt_tokens if self.prompt_tokens is not None else self.tokenized


@dataclass(slots=True, eq=False)
class CaptureAgent:
    """One agent of a tree: the root, or a sub-agent (`parent`)."""

    tree: CaptureTree
    parent: CaptureAgent | None
    number: int  # 0 for the root; sub-agents 1, 2, ... in order of appearance
    spawned_after: float | None  # end of the parent's call that this sub-agent followed
    chain: BlockChain
    calls: list[CapturedCall] = field(default_factory=list)
    subagents: list[CaptureAgent] = field(default_factory=list)
    # One prompt at a time through `chain` (it keeps the previous prompt's blocks; two tokenizer
    # workers may finish calls of the same agent together).
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def start(self) -> float | None:
        return min((c.start for c in self.calls), default=None)

    def end(self) -> float | None:
        ends = [c.end for c in self.calls] + [e for s in self.subagents if (e := s.end()) is not None]
        return max(ends, default=None)


@dataclass(slots=True, eq=False)
class CaptureTree:
    id: str  # random: never the session header's value
    ids: IdTable = field(default_factory=IdTable)
    agents: list[CaptureAgent] = field(default_factory=list)
    pending: int = 0  # calls still waiting for their token ids
    failed_calls: int = 0
    written: Path | None = None

    @property
    def root(self) -> CaptureAgent:
        return self.agents[0]


@dataclass(frozen=True, slots=True)
class CaptureCounts:
    capture_dir: str
    captured_sessions: int  # session trees written (one file each)
    calls_written: int
    calls_without_hash_ids: int  # written with empty hash_ids: their prompt could not be tokenized in time
    tokenize_mismatches: int  # /tokenize's count differed from the server's usage
    write_errors: int
    last_error: str | None


class Capture:
    """Session files in `folder`. The key of the block hashes is random per capture, and kept only here."""

    def __init__(
        self,
        folder: Path,
        *,
        tokenizer_name: str | None = None,
        block_size: int = BLOCK_SIZE,
        key: bytes | None = None,
    ) -> None:
        self.folder = folder
        self.tokenizer_name = tokenizer_name
        self.block_size = block_size
        self._hasher = BlockHasher(key if key is not None else secrets.token_bytes(32), block_size)
        self._prefix = secrets.token_hex(4)
        self._files = 0
        self._calls_written = self._without_ids = self._mismatches = self._write_errors = 0
        self._last_error: str | None = None
        prepare_capture_folder(folder)

    # -- recording ----------------------------------------------------------------------------------
    def open_tree(self) -> CaptureTree:
        tree = CaptureTree(id=secrets.token_hex(8))
        self.open_agent(tree, None, None)
        return tree

    def open_agent(self, tree: CaptureTree, parent: CaptureAgent | None, spawned_after: float | None) -> CaptureAgent:
        """The tree's root when `parent` is None (made by `open_tree`), else a sub-agent of `parent`."""
        agent = CaptureAgent(tree, parent, len(tree.agents), spawned_after, BlockChain(self._hasher))
        tree.agents.append(agent)
        if parent is not None:
            parent.subagents.append(agent)
        return agent

    def add_call(self, agent: CaptureAgent, call: ProxiedCall, *, tokens_coming: bool) -> CapturedCall:
        """A completed call; `tokens_coming`: its token ids will be given to `add_tokens`."""
        request = call.request
        last_role = request.last_role if request is not None else None
        record = CapturedCall(
            start=call.received_at,
            end=call.ended_at,
            ttft=call.ttft_s,
            streamed=call.streamed,
            model=(request.model if request is not None else None) or self.tokenizer_name,
            prompt_tokens=call.prompt_tokens,
            output_tokens=call.output_tokens or 0,
            cached=call.cached_tokens,
            stop=call.finish_reason or "",
            input_type=_INPUT_TYPES.get(last_role or "", "text"),
        )
        agent.calls.append(record)
        if tokens_coming:
            agent.tree.pending += 1
        return record

    def add_failed(self, agent: CaptureAgent) -> None:
        agent.tree.failed_calls += 1

    async def add_tokens(self, agent: CaptureAgent, record: CapturedCall, token_ids: Sequence[int] | None) -> None:
        """The prompt's token ids (None: they could not be had) → the call's numbered block hashes."""
        tree = agent.tree
        try:
            if token_ids is None:
                return
            record.tokenized = len(token_ids)
            if record.prompt_tokens is not None and record.prompt_tokens != len(token_ids):
                self._mismatches += 1
            # Only whole blocks, and never more than the call's own count allows (the loader checks it).
            usable = min(len(token_ids), record.input_tokens or 0) // self.block_size
            async with agent.lock:
                ids, known, _ = agent.chain.prepare(token_ids)
                known = min(known, usable)
                for start in range(known, usable, _HASH_SLICE):
                    agent.chain.hash_blocks(ids, start, min(start + _HASH_SLICE, usable))
                    if usable - start > _HASH_SLICE:
                        await asyncio.sleep(0)  # a long new prompt: let the streams go on between slices
                record.hash_ids = tree.ids.number(agent.chain.hashes(usable))
        finally:
            tree.pending -= 1

    # -- files ---------------------------------------------------------------------------------------
    def figures(self) -> CaptureCounts:
        return CaptureCounts(
            capture_dir=str(self.folder),
            captured_sessions=self._files,
            calls_written=self._calls_written,
            calls_without_hash_ids=self._without_ids,
            tokenize_mismatches=self._mismatches,
            write_errors=self._write_errors,
            last_error=self._last_error,
        )

    def write(self, tree: CaptureTree) -> Path | None:
        """Write (or rewrite) the tree's file; None when it has no completed call or cannot be written."""
        try:
            built = self.document(tree)
        except ValueError as exc:  # pydantic's ValidationError: a bug here, counted rather than raised in the proxy
            self._write_errors += 1
            self._last_error = f"a session tree did not make a valid session file ({exc})"[:300]
            return None
        if built is None:
            return None
        session, calls, without = built
        path = tree.written or self.folder / f"capture-{self._prefix}-{self._files + 1:05d}-{tree.id}.json"
        try:
            write_session_file(path, session)
        except OSError as exc:
            self._write_errors += 1
            self._last_error = f"cannot write the session file {path.name} ({exc.strerror or exc})"
            return None
        if tree.written is None:
            self._files += 1
            self._calls_written += calls
            self._without_ids += without
        tree.written = path
        return path

    def document(self, tree: CaptureTree) -> tuple[SessionFile, int, int] | None:
        """(the file, calls in it, calls in it without hash ids); None when it would hold no call."""
        root = tree.root
        counts = _Counts()
        requests = self._requests(root, root.start() or 0.0, counts, top=True)
        if counts.calls == 0:
            return None
        models = sorted({c.model for a in tree.agents for c in a.calls if c.model})
        session = SessionFile(
            id=tree.id,
            captured_by=f"agentx-tui {__version__} proxy",
            tokenizer=self.tokenizer_name or (models[0] if models else None),
            models=models,
            block_size=self.block_size,
            hash_id_scope="local",
            requests=requests,
            totals=Totals(
                parent_tokens=TokenCounts(input=counts.parent_in, output=counts.parent_out),
                subagent_tokens=TokenCounts(input=counts.sub_in, output=counts.sub_out),
                combined_tokens=TokenCounts(
                    input=counts.parent_in + counts.sub_in, output=counts.parent_out + counts.sub_out
                ),
                cached_tokens=counts.cached if counts.cached_known else None,
                subagent_count=counts.subagents,
                calls=counts.calls,
                calls_counted_without_usage=counts.without_usage,
                calls_without_hash_ids=counts.without_ids,
                failed_calls_left_out=tree.failed_calls,
            ),
        )
        return session, counts.calls, counts.without_ids

    def _requests(self, agent: CaptureAgent, clock: float, counts: _Counts, *, top: bool) -> list[SubAgent | Call]:
        items: list[tuple[float, int, SubAgent | Call]] = []
        previous_end = agent.spawned_after
        for call in sorted(agent.calls, key=lambda c: c.start):
            think = max(0.0, call.start - previous_end) if previous_end is not None else 0.0
            previous_end = call.end
            tokens_in = call.input_tokens
            if tokens_in is None or tokens_in < 1:
                continue  # no count from the server nor from /tokenize: nothing to replay
            entry = Call(
                t=_r(call.start - clock),
                type="s" if call.streamed else "n",
                model=call.model or "",
                input_tokens=tokens_in,
                output_tokens=call.output_tokens,
                cached=call.cached,
                hash_ids=list(call.hash_ids) if call.hash_ids is not None else [],
                input_types=[call.input_type],
                stop=call.stop,
                api_time=_r(call.end - call.start),
                think_time=_r(think),
                counts_from=call.counts_from,
                ttft=_r(call.ttft) if call.ttft is not None else None,  # a streamed call's only
            )
            items.append((call.start - clock, 1, entry))
            counts.add(call, tokens_in, top=top)
        for sub in agent.subagents:
            start, end = sub.start(), sub.end()
            if start is None or end is None:
                continue
            counts.subagents += 1
            marker = SubAgent(
                t=_r(end - clock),
                agent_id=f"agent_{sub.number:03d}",
                subagent_type="",
                duration_ms=round((end - start) * 1000),
                status="completed",
                models=sorted({c.model for c in sub.calls if c.model}),
                requests=self._requests(sub, start, counts, top=False),
            )
            items.append((end - clock, 0, marker))  # at a tie, before the parent call that waited for it
        items.sort(key=lambda item: (item[0], item[1]))
        return [entry for _, _, entry in items]


@dataclass(slots=True)
class _Counts:
    parent_in: int = 0
    parent_out: int = 0
    sub_in: int = 0
    sub_out: int = 0
    cached: int = 0
    cached_known: bool = True
    calls: int = 0
    without_usage: int = 0
    without_ids: int = 0
    subagents: int = 0

    def add(self, call: CapturedCall, tokens_in: int, *, top: bool) -> None:
        self.calls += 1
        if top:
            self.parent_in += tokens_in
            self.parent_out += call.output_tokens
        else:
            self.sub_in += tokens_in
            self.sub_out += call.output_tokens
        if call.cached is None:
            self.cached_known = False
        else:
            self.cached += call.cached
        self.without_usage += call.prompt_tokens is None
        self.without_ids += call.hash_ids is None


def _r(seconds: float) -> float:
    return round(seconds, 3)  # milliseconds, as the corpus records times
