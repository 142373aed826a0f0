"""What the writer writes, the reader reads back as it was: generated session trees (sub-agents inside
sub-agents, every optional field present or not) through `write_session_file` and `read_session_file`.

The trees are in the reference format, as the capture writes them (a sub-agent's first call at its
spawn, its `t` its end; integer hash ids), which the reader leaves as they are."""

from __future__ import annotations

import stat
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentx_tui.sessionfile import (
    Call,
    SessionFile,
    SubAgent,
    TokenCounts,
    Totals,
    read_session_file,
    session_file_bytes,
    write_session_file,
)

BLOCK = 16
seconds = st.floats(min_value=0, max_value=1e7, allow_nan=False, allow_infinity=False)
words = st.text(max_size=12)
counts = st.integers(min_value=0, max_value=10**9)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


@st.composite
def calls(draw: st.DrawFn, *, t: st.SearchStrategy[float] = seconds) -> Call:
    tokens = draw(st.integers(min_value=1, max_value=4000))
    blocks = draw(st.integers(min_value=0, max_value=-(-tokens // BLOCK)))
    return Call(
        t=draw(t),
        type=draw(maybe(st.sampled_from(["s", "n", "?"]))),
        model=draw(maybe(words)),
        input_tokens=tokens,
        output_tokens=draw(st.integers(min_value=0, max_value=2000)),
        cached=draw(maybe(st.integers(min_value=0, max_value=tokens))),
        hash_ids=draw(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=blocks, max_size=blocks)),
        input_types=draw(maybe(st.lists(words, max_size=2))),
        output_types=draw(maybe(st.lists(words, max_size=2))),
        stop=draw(maybe(words)),
        api_time=draw(maybe(seconds)),
        think_time=draw(maybe(seconds)),
        counts_from=draw(maybe(st.sampled_from(["server_usage", "tokenize_and_events"]))),
        ttft=draw(maybe(seconds)),
    )


def sub_agents(requests: st.SearchStrategy[list[SubAgent | Call]]) -> st.SearchStrategy[SubAgent]:
    # On its own clock its first call is at its spawn (0) and its end comes later: the reference format.
    first = calls(t=st.just(0.0))
    return st.builds(
        lambda t, duration, first, rest, extra: SubAgent(t=t, duration_ms=duration, requests=[first, *rest], **extra),
        st.floats(min_value=0.01, max_value=1e7, allow_nan=False, allow_infinity=False),
        maybe(st.one_of(st.integers(min_value=0, max_value=10**9).map(float), seconds)),
        first,
        requests,
        st.fixed_dictionaries(
            {},
            optional={
                "agent_id": words,
                "subagent_type": words,
                "status": words,
                "models": st.lists(words, max_size=2),
                "total_tokens": counts,
                "tool_use_count": counts,
                "tool_tokens": counts,
                "system_tokens": counts,
            },
        ),
    )


# Requests of any depth: calls and sub-agents holding requests of their own.
requests: st.SearchStrategy[list[SubAgent | Call]] = st.recursive(
    st.lists(calls(), max_size=3),
    lambda inner: st.lists(st.one_of(calls(), sub_agents(inner)), max_size=4),
    max_leaves=12,
)
totals = st.builds(
    Totals,
    parent_tokens=maybe(st.builds(TokenCounts, input=maybe(counts), output=maybe(counts))),
    cached_tokens=maybe(counts),
    subagent_count=maybe(counts),
    failed_calls_left_out=maybe(counts),
)
session_files = st.builds(
    lambda first, rest, extra: SessionFile(block_size=BLOCK, requests=[first, *rest], **extra),
    calls(),  # at least one call: a file without any is refused
    requests,
    st.fixed_dictionaries(
        {},
        optional={
            "id": words,
            "captured_by": words,
            "tokenizer": maybe(words),
            "models": st.lists(words, max_size=2),
            "hash_id_scope": st.just("local"),
            "tool_tokens": counts,
            "system_tokens": counts,
            "totals": totals,
        },
    ),
)


def _call(t: float, ids: list[int]) -> Call:
    return Call(t=t, input_tokens=40, output_tokens=3, hash_ids=ids, think_time=0.5)


# Always among the examples: a sub-agent inside a sub-agent, and one whose duration is unknown.
NESTED = SessionFile(
    block_size=BLOCK,
    requests=[
        _call(0.0, [1, 2]),
        SubAgent(
            t=9.5,
            duration_ms=6000,
            requests=[
                _call(0.0, [1, 3]),
                SubAgent(t=2.0, duration_ms=None, requests=[_call(0.0, [4])]),
                _call(2.5, []),
            ],
        ),
        _call(10.0, [1, 2, 3]),
    ],
)


@example(session=NESTED)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(session=session_files)
def test_what_is_written_is_read_back_as_it_was(session: SessionFile) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.json"
        write_session_file(path, session)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        read = read_session_file(path)
        assert read == session
        assert session_file_bytes(read) == path.read_bytes()  # and written again byte for byte
