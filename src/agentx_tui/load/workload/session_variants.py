"""The published AgentX corpora's variants, rewritten into the reference session-file format before
`session_files` validates a session (docs/sessions.md has the findings and their sources).

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
need nothing: the parser reads only the fields it uses. Sub-agents recorded *flat* (untagged calls of
parallel agents interleaved with the parent's, found in the newer captures) are read as what they
are written as, parent calls in file order; AIPerf splits them into agents by a heuristic over the
hash ids, which would be a replay rule of its own (workloads/README.md), not a reading of the file.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

# A reason the file cannot be read: `fail(where, problem)` raises the loader's one-sentence error.
Fail = Callable[[str, str], NoReturn]

# Recorded times have millisecond resolution; a sub-agent call up to this far before its spawn is
# clock jitter (moved to the spawn), further is an error.
CLOCK_EPS = 1e-3


def normalise(data: dict[str, Any], fail: Fail) -> dict[str, Any]:
    """`data` (one session, as parsed from JSON) in the reference format; rewritten in place.

    Only well-formed parts are rewritten: a value the parser will refuse (a negative or missing `t`, a
    list that is not one) is left as the file has it, so that the parser's message quotes the file."""
    _check_scope(data, fail)
    requests = data.get("requests")
    if isinstance(requests, list):
        if _sub_agent_clock(requests, fail) == "session":
            _to_spawn_clocks(requests, "", 0.0, fail)
        _renumber_hash_ids(requests)
    return data


# -- hash_id_scope -----------------------------------------------------------------------------------------


def _check_scope(data: dict[str, Any], fail: Fail) -> None:
    scope = data.get("hash_id_scope", "local")
    if scope is not None and scope != "local":
        shown = f'"{scope}"' if isinstance(scope, str) else repr(scope)
        fail(
            "",
            f'`hash_id_scope` is {shown}; only "local" (hash ids compared within one file) can be replayed, '
            "as every file gets its own text",
        )


# -- sub-agent clocks --------------------------------------------------------------------------------------


def _sub_agent_clock(requests: list[Any], fail: Fail) -> str:
    """`session` when the file's sub-agent calls are on the session's clock, `spawn` when they count from
    their sub-agent's spawn (the reference), `unknown` when the file shows neither."""
    on_session: str | None = None
    on_spawn: str | None = None
    for sub, where in _sub_agents(requests, ""):
        t = _seconds(sub.get("t"))
        starts = [s for c in _calls(sub) if (s := _seconds(c.get("t"))) is not None]
        if t is None or t <= 0 or not starts:
            continue  # no evidence: a sub-agent at the session's start reads the same on either clock
        if min(starts) >= t - CLOCK_EPS:
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


def _to_spawn_clocks(requests: list[Any], prefix: str, origin: float, fail: Fail) -> None:
    """Rewrite one agent's `requests`, read on the session's clock, onto the reference clocks: its calls
    count from `origin` (its spawn; 0 for the session), a sub-agent's `t` becomes its end on that clock."""
    for i, item in enumerate(requests):
        if not isinstance(item, dict):
            continue
        where = f"{prefix}requests[{i}]"
        t = _seconds(item.get("t"))
        if t is None:
            continue
        if item.get("type") != "subagent":
            if origin > 0:
                if t < origin - CLOCK_EPS:
                    fail(where, f"`t` ({t:g}) is before its sub-agent's spawn ({origin:g}) on the session's clock")
                item["t"] = max(0.0, t - origin)
            continue
        end = _end(item, t)  # read before the calls below are moved onto the sub-agent's clock
        inner = item.get("requests")
        if isinstance(inner, list):
            _to_spawn_clocks(inner, where + ".", t, fail)
        item["t"] = max(0.0, end - origin)


def _end(sub: dict[str, Any], spawn: float) -> float:
    """A sub-agent's end on the session's clock: spawn + `duration_ms`, else the end of its last call (or
    nested sub-agent) as recorded (`t` + `api_time`), else its spawn; as AIPerf's Weka loader reads it."""
    duration = _seconds(sub.get("duration_ms"))
    if duration is not None:
        return spawn + duration / 1000.0
    ends = [spawn]
    for item in sub.get("requests") or ():
        if not isinstance(item, dict) or (t := _seconds(item.get("t"))) is None:
            continue
        if item.get("type") == "subagent":
            ends.append(_end(item, t))
        else:
            ends.append(t + (_seconds(item.get("api_time")) or 0.0))
    return max(ends)


def _sub_agents(requests: list[Any], prefix: str) -> Iterator[tuple[dict[str, Any], str]]:
    for i, item in enumerate(requests):
        if isinstance(item, dict) and item.get("type") == "subagent":
            where = f"{prefix}requests[{i}]"
            yield item, where
            inner = item.get("requests")
            if isinstance(inner, list):
                yield from _sub_agents(inner, where + ".")


def _calls(sub: dict[str, Any]) -> Iterator[dict[str, Any]]:
    inner = sub.get("requests")
    if isinstance(inner, list):
        yield from (c for c in inner if isinstance(c, dict) and c.get("type") != "subagent")


def _seconds(value: Any) -> float | None:
    """A finite, non-negative number, or None (the parser says what is wrong with anything else)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


# -- hash ids ----------------------------------------------------------------------------------------------


def _renumber_hash_ids(requests: list[Any]) -> None:
    """Renumber every id of the file when any is a string or does not fit 64 bits; otherwise (every
    published corpus) touch nothing. Ids of other kinds (floats, null) are left for the parser to refuse."""
    lists = list(_hash_id_lists(requests))
    if all(_fits_64_bits(ids) for ids in lists):
        return
    numbers: dict[tuple[bool, Any], int] = {}
    for ids in lists:
        for j, h in enumerate(ids):
            if isinstance(h, str) or (isinstance(h, int) and not isinstance(h, bool)):
                ids[j] = numbers.setdefault((isinstance(h, str), h), len(numbers))


def _hash_id_lists(requests: list[Any]) -> Iterator[list[Any]]:
    for item in requests:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "subagent":
            inner = item.get("requests")
            if isinstance(inner, list):
                yield from _hash_id_lists(inner)
        elif isinstance(ids := item.get("hash_ids"), list):
            yield ids


def _fits_64_bits(ids: list[Any]) -> bool:
    # array() checks every item in C: a whole corpus of integer ids costs milliseconds, not a Python loop.
    try:
        array("q", ids)
    except (TypeError, OverflowError):
        return False
    return True
