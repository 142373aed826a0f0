"""Every variant the reader accepts, as a small hand-made file in variants/ (docs/sessions.md lists where
each comes from), read into the reference format; and what the reader tolerates or refuses beyond them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentx_tui.errors import WorkloadError
from agentx_tui.sessionfile import Call, SessionFile, SubAgent, read_session_bytes, read_session_file, read_sessions

VARIANTS = Path(__file__).parent / "variants"


def only(path: Path) -> SessionFile:
    ((_, session),) = read_sessions(path)
    return session


def calls(requests: list[SubAgent | Call]) -> list[Call]:
    return [r for r in requests if isinstance(r, Call)]


def subs(requests: list[SubAgent | Call]) -> list[SubAgent]:
    return [r for r in requests if isinstance(r, SubAgent)]


def test_every_variant_file_is_read() -> None:
    readable = sorted(p.name for p in VARIANTS.iterdir() if p.name != "global_scope.json")
    for name in readable:
        assert list(read_sessions(VARIANTS / name)), name


def test_kv_cache_testers_v8_traces_are_the_reference_format_read_as_they_are() -> None:
    raw = (VARIANTS / "kv_cache_tester_v8.json").read_bytes()
    session = only(VARIANTS / "kv_cache_tester_v8.json")
    assert session == SessionFile.model_validate_json(raw, by_name=False)  # nothing rewritten
    assert session.id == "trace_0001" and session.block_size == 64 and session.tool_tokens == 12439
    assert session.totals is not None and session.totals.subagent_count == 2
    first, worker, empty = session.requests[0], *subs(session.requests)
    assert isinstance(first, Call) and first.output_types == ["thinking", "tool_use"] and first.stop == "tool_use"
    assert (worker.t, worker.duration_ms, worker.agent_id, worker.total_tokens) == (9.0, 6000, "agent_001", 309)
    assert [c.t for c in calls(worker.requests)] == [0.0, 3.0] and calls(worker.requests)[0].ttft == 0.4
    assert empty.duration_ms is None and empty.requests == []
    last = calls(session.requests)[-1]
    assert last.api_time is None and last.think_time is None  # optional: the replay reads no think time as 0


def test_the_semianalysis_captures_move_onto_the_reference_clocks() -> None:
    (_, spawned), (_, without_duration) = read_sessions(VARIANTS / "semianalysis_session_clock.jsonl")
    worker = subs(spawned.requests)[0]
    assert worker.t == 7.0 and [c.t for c in calls(worker.requests)] == pytest.approx([0.1, 2.0])  # end 3 + 4 s
    late = subs(without_duration.requests)[0]
    assert late.t == 3.5 and calls(late.requests)[0].t == 0.5  # no duration: its last call's end (1.5 + 2.0)
    assert spawned.id == "009dfc4e83422be8d3daa41cfda78036b2cd"


def test_flat_sub_agents_and_sessions_without_any_are_parent_calls() -> None:
    flat = only(VARIANTS / "flat_sub_agents.json")
    assert len(calls(flat.requests)) == 4 and not subs(flat.requests)
    plain = only(VARIANTS / "no_sub_agents.json")
    assert [c.output_tokens for c in calls(plain.requests)] == [8, 0]


def test_hash_ids_that_are_strings_or_wider_than_64_bits_are_renumbered_in_first_seen_order() -> None:
    hexed = only(VARIANTS / "hex_hash_ids.json")
    first, worker, last = hexed.requests
    assert isinstance(first, Call) and isinstance(worker, SubAgent) and isinstance(last, Call)
    assert first.hash_ids == [0, 1] and calls(worker.requests)[0].hash_ids == [0, 2] and last.hash_ids == [0, 1, 3]
    wide = only(VARIANTS / "wide_hash_ids.json")
    assert [c.hash_ids for c in calls(wide.requests)] == [[0, 1], [0, 1, 2]]


def test_the_first_kv_cache_tester_traces_lack_fields_the_replay_does_without() -> None:
    early = only(VARIANTS / "kv_cache_tester_feb2026.json")
    assert early.hash_id_scope is None
    unknown, integral, _, untyped = early.requests
    assert isinstance(unknown, Call) and unknown.type == "?" and unknown.think_time is None
    assert isinstance(integral, Call) and integral.input_tokens == 200  # 200.0 in the file
    assert isinstance(untyped, Call) and untyped.type is None


def test_a_global_hash_id_scope_is_refused() -> None:
    with pytest.raises(WorkloadError, match=r'global_scope\.json: `hash_id_scope` is "global"; only "local"'):
        read_session_file(VARIANTS / "global_scope.json")


def test_our_own_capture_is_read() -> None:
    captured = only(VARIANTS / "agentx_tui_capture.json")
    assert captured.captured_by == "agentx-tui 0.1.0 proxy" and captured.tokenizer == "m"
    first = calls(captured.requests)[0]
    assert (first.cached, first.counts_from, first.ttft) == (8, "server_usage", 0.1)
    assert captured.totals is not None and captured.totals.cached_tokens is None
    assert captured.totals.parent_tokens is not None and captured.totals.parent_tokens.input == 97


# -- beyond the variants ------------------------------------------------------------------------------------


def session(*requests: dict[str, Any], **top: Any) -> bytes:
    return json.dumps({"block_size": 64, "requests": list(requests), **top}).encode()


CALL = {"t": 0, "in": 100, "out": 5, "hash_ids": [1]}


def test_fields_the_replay_does_not_read_take_any_value() -> None:
    odd = {**CALL, "model": 7, "stop": None, "cached": "many", "ttft": "soon", "input_types": "text", "type": 5}
    worker = {"type": "subagent", "t": 1, "agent_id": 3, "models": "m", "status": [], "requests": [CALL]}
    read = read_session_bytes(session(odd, worker, id=42, totals=[1], models={}), Path("odd.json"))
    call, sub = read.requests
    assert isinstance(call, Call) and (call.model, call.cached, call.ttft, call.type, call.input_types) == (
        None, None, None, None, None
    )  # fmt: skip
    assert isinstance(sub, SubAgent) and sub.agent_id is None and sub.models is None
    assert read.id is None and read.totals is None and read.models is None


def test_encodings_json_reads_are_read() -> None:
    text = session(CALL).decode()
    for raw in (b"\xef\xbb\xbf" + text.encode(), text.encode("utf-16"), text.encode("utf-32")):
        assert read_session_bytes(raw, Path("s.json")).block_size == 64


@pytest.mark.parametrize(
    ("requests", "expected"),
    [
        ([{**CALL, "in": "100"}], "requests[0]: `in` must be a positive integer (prompt tokens), not \"100\""),
        ([{**CALL, "out": True}], "requests[0]: `out` must be a non-negative integer (output tokens), not true"),
        ([{**CALL, "t": "0"}], 'requests[0]: `t` must be a non-negative number, not "0"'),
        ([CALL, {"type": "subagent", "t": 1, "requests": [CALL], "duration_ms": "x"}], "requests[1]: `duration_ms`"),
        ([CALL, {**CALL, "type": "subagent"}], "requests[1]: `requests` is missing; it must be a list of the sub"),
        ([CALL, {"type": "subagent", "t": 1, "requests": [{**CALL, "hash_ids": ["a", 1.5]}]}],
         "requests[1].requests[0]: `hash_ids[1]` must be an integer (64 bits at most), not 1.5"),
        ([CALL, {"type": "subagent", "t": 1, "requests": [{**CALL, "hash_ids": [1, 2, 3]}]}],
         "requests[1].requests[0]: `hash_ids` has 3 ids, more than `in` (100 tokens) allows in blocks of 64"),
    ],
)  # fmt: skip
def test_a_bad_field_is_named_where_the_request_is_read_as_what_its_type_says(
    requests: list[dict[str, Any]], expected: str
) -> None:
    with pytest.raises(WorkloadError) as info:
        read_session_bytes(session(*requests), Path("bad.json"), line=3)
    assert info.value.message.startswith(f"Session file bad.json, line 3, {expected}"), info.value.message
    assert info.value.exit_code == 2
