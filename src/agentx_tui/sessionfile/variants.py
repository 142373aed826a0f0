"""The published AgentX corpora's variants, rewritten into the reference session-file format as a file
is read (docs/sessions.md has the findings and their sources).

The reference format is the one of the 40 files in ../shared/traces/agentx-weka/ (kv-cache-tester's
v8 traces, described in the traces README): a sub-agent's calls count their `t` from its spawn, and
its own `t` is when its result came back to the parent (its end). Everything downstream (the
schedule, the prompts) reads that one shape, so a variant is handled here or nowhere. What differs:

- **Sub-agent clocks.** The SemiAnalysis captures on Hugging Face (`semianalysisai/cc-traces-weka-*`)
  stamp every call on the session's clock, a sub-agent's calls too, and a sub-agent's `t` with its
  spawn (its end is `t + duration_ms/1000`; AIPerf's Weka loader calls this the "absolute" nested
  timestamp basis and refuses a sub-agent call before its spawn). Which clock a file uses is read
  from the file itself: on the session's clock no sub-agent call precedes its sub-agent's `t`; on
  the spawn's clock its first call is at 0 while `t`, the end, is later. A file that shows both is
  refused (one clock per producer); a file with no evidence (no sub-agent with calls after time 0)
  is left as it is, which is right for either reading.
- **Hash ids that are not 64-bit integers** (hex strings, or integers past 64 bits): no published
  corpus has them (theirs are small per-file integers, as are kv-cache-tester's), but a hash is the
  natural thing for a producer to write. They are renumbered per file in first-seen order, so equal
  ids stay equal and different ids stay different; that is all a replay needs (ids are only ever
  compared within one file).
- **`hash_id_scope`** other than `local` (kv-cache-tester documents a `global` scope, ids comparable
  across files) is refused: the replay gives every file its own text, so sharing across files
  would silently be lost. No published corpus uses it (AIPerf's Weka loader accepts only `local`).

Extra fields (`models`, `totals`, `ttft`, `status`, `total_tokens`, `tool_use_count`, `kind`, ...)
need nothing: the schema reads the fields it knows leniently and ignores the others. Sub-agents
recorded *flat* (untagged calls of parallel agents interleaved with the parent's, found in the newer
captures) are read as what they are written as, parent calls in file order; AIPerf splits them into
agents by a heuristic over the hash ids, which would be a replay rule of its own
(workloads/README.md), not a reading of the file.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from typing import Literal, NoReturn, cast

from agentx_tui.sessionfile.schema import Call, SessionFile, SubAgent

# A reason the file cannot be read: `fail(where, problem)` raises the reader's one-sentence error.
Fail = Callable[[str, str], NoReturn]
Clock = Literal["session", "spawn", "unknown"]

# Recorded times have millisecond resolution; a sub-agent call up to this far before its spawn is
# clock jitter (moved to the spawn), further is an error.
CLOCK_EPS = 1e-3


def normalise(session: SessionFile, fail: Fail) -> SessionFile:
    """`session` (as validated from its file) in the reference format: itself when it is already."""
    _check_scope(session, fail)
    requests = session.requests
    if _sub_agent_clock(requests, fail) == "session":
        requests = _to_spawn_clocks(requests, "", 0.0, fail)
    requests = _renumbered_hash_ids(requests)
    return session if requests is session.requests else session.model_copy(update={"requests": requests})


# -- hash_id_scope -----------------------------------------------------------------------------------------


def _check_scope(session: SessionFile, fail: Fail) -> None:
    scope = session.hash_id_scope
    if scope is not None and scope != "local":
        fail(
            "",
            f'`hash_id_scope` is "{scope}"; only "local" (hash ids compared within one file) can be replayed, '
            "as every file gets its own text",
        )


# -- sub-agent clocks --------------------------------------------------------------------------------------


def _sub_agent_clock(requests: list[SubAgent | Call], fail: Fail) -> Clock:
    """`session` when the file's sub-agent calls are on the session's clock, `spawn` when they count from
    their sub-agent's spawn (the reference), `unknown` when the file shows neither."""
    on_session: str | None = None
    on_spawn: str | None = None
    for sub, where in _sub_agents(requests, ""):
        starts = [c.t for c in sub.requests if isinstance(c, Call)]
        if sub.t <= 0 or not starts:
            continue  # no evidence: a sub-agent at the session's start reads the same on either clock
        if min(starts) >= sub.t - CLOCK_EPS:
            on_session = on_session or where
        else:
            on_spawn = on_spawn or where
    if on_session is not None and on_spawn is not None:
        fail(
            on_session,
            f"the sub-agent's calls are on the session's clock (none before its `t`), but those of {on_spawn} "
            "count from its spawn; a file must use one clock",
        )
    return "session" if on_session else "spawn" if on_spawn else "unknown"


def _to_spawn_clocks(requests: list[SubAgent | Call], prefix: str, origin: float, fail: Fail) -> list[SubAgent | Call]:
    """One agent's `requests`, read on the session's clock, on the reference clocks: its calls count from
    `origin` (its spawn; 0 for the session), a sub-agent's `t` is its end on that clock."""
    out: list[SubAgent | Call] = []
    for i, item in enumerate(requests):
        where = f"{prefix}requests[{i}]"
        if isinstance(item, Call):
            if origin > 0 and item.t < origin - CLOCK_EPS:
                fail(where, f"`t` ({item.t:g}) is before its sub-agent's spawn ({origin:g}) on the session's clock")
            out.append(item.model_copy(update={"t": max(0.0, item.t - origin)}) if origin > 0 else item)
            continue
        end = _end(item, item.t)  # read before the calls below are moved onto the sub-agent's clock
        inner = _to_spawn_clocks(item.requests, where + ".", item.t, fail)
        out.append(item.model_copy(update={"t": max(0.0, end - origin), "requests": inner}))
    return out


def _end(sub: SubAgent, spawn: float) -> float:
    """A sub-agent's end on the session's clock: spawn + `duration_ms`, else the end of its last call (or
    nested sub-agent) as recorded (`t` + `api_time`), else its spawn; as AIPerf's Weka loader reads it."""
    if sub.duration_ms is not None:
        return spawn + sub.duration_ms / 1000.0
    ends = [spawn]
    for item in sub.requests:
        if isinstance(item, SubAgent):
            ends.append(_end(item, item.t))
        else:
            ends.append(item.t + (item.api_time or 0.0))
    return max(ends)


def _sub_agents(requests: list[SubAgent | Call], prefix: str) -> Iterator[tuple[SubAgent, str]]:
    for i, item in enumerate(requests):
        if isinstance(item, SubAgent):
            where = f"{prefix}requests[{i}]"
            yield item, where
            yield from _sub_agents(item.requests, where + ".")


# -- hash ids ----------------------------------------------------------------------------------------------


def _renumbered_hash_ids(requests: list[SubAgent | Call]) -> list[SubAgent | Call]:
    """`requests` with every id of the file renumbered when any is a string or does not fit 64 bits;
    otherwise (every published corpus) `requests` itself."""
    if all(_fits_64_bits(call.hash_ids) for call in _calls(requests)):
        return requests
    numbers: dict[tuple[bool, int | str], int] = {}

    def renumbered(items: list[SubAgent | Call]) -> list[SubAgent | Call]:
        out: list[SubAgent | Call] = []
        for item in items:
            if isinstance(item, SubAgent):
                out.append(item.model_copy(update={"requests": renumbered(item.requests)}))
            else:
                ids = [numbers.setdefault((isinstance(h, str), h), len(numbers)) for h in item.hash_ids]
                out.append(item.model_copy(update={"hash_ids": ids}))
        return out

    return renumbered(requests)


def _calls(requests: list[SubAgent | Call]) -> Iterator[Call]:
    for item in requests:
        if isinstance(item, SubAgent):
            yield from _calls(item.requests)
        else:
            yield item


def _fits_64_bits(ids: list[int | str]) -> bool:
    # array() checks every item in C: a whole corpus of integer ids costs milliseconds, not a Python loop.
    try:
        array("q", cast(list[int], ids))  # a string is refused: that is the point
    except (TypeError, OverflowError):
        return False
    return True
