"""The published corpora's variants read as the reference session-file format (sessionfile/variants.py),
and the corpus layouts (JSONL, one session a line; nested folders) read by sessionfile/reader.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentx_tui.errors import WorkloadError
from agentx_tui.load.workload.sessions import SessionSubAgent, SessionTree, load_session_set
from agentx_tui.sessionfile import SessionFile, normalise, read_session_file
from tests.helpers.paths import AGENTX_WEKA, AGENTX_WEKA_ABSENT
from tests.helpers.traces import session_tree


def call(t: float, ids: list[Any], *, tokens: int = 256, api: float | None = 1.0, think: float = 0.5) -> dict[str, Any]:
    return {"t": t, "type": "n", "model": "m", "in": tokens, "out": 8, "hash_ids": ids, "api_time": api,
            "think_time": think}  # fmt: skip


def sub(t: float, calls: list[dict[str, Any]], duration_ms: float | None, agent_id: str = "a1") -> dict[str, Any]:
    return {"t": t, "type": "subagent", "agent_id": agent_id, "subagent_type": "Explore", "duration_ms": duration_ms,
            "status": "completed", "models": ["m"], "requests": calls}  # fmt: skip


def session(requests: list[Any], **top: Any) -> dict[str, Any]:
    return {"id": "s", "block_size": 64, "hash_id_scope": "local", "requests": requests, **top}


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data))
    return path


def shape(tree: SessionTree) -> Any:
    """Everything the replay reads off a tree, for comparing two readings of one session."""

    def calls(cs: Any) -> list[Any]:
        return [(c.index, c.t, c.think_time, c.api_time, c.input_tokens, c.output_tokens, list(c.hash_ids)) for c in cs]

    def subs(ss: tuple[SessionSubAgent, ...]) -> list[Any]:
        return [(s.agent_id, s.t, s.start, s.spawn_after, s.join_at, calls(s.calls), subs(s.subagents)) for s in ss]

    return (tree.block_size, calls(tree.calls), subs(tree.subagents))


def load_one(tmp_path: Path, data: dict[str, Any], name: str = "s.json") -> SessionTree:
    return load_session_set(write(tmp_path / name, data)).trees[0]


def fail(where: str, problem: str) -> Any:
    raise AssertionError(f"{where}: {problem}")


def validated(data: dict[str, Any]) -> SessionFile:
    return SessionFile.model_validate(data, by_name=False)


def normalised(data: dict[str, Any]) -> dict[str, Any]:
    """`data` read and rewritten into the reference format, as JSON again."""
    return normalise(validated(data), fail).model_dump(mode="json")


# -- sub-agent clocks ---------------------------------------------------------------------------------------


# One session written both ways. The parent calls at 0 (1 s) and 20; a sub-agent spawns at 3 and runs 5 s,
# its calls at 3.5 and 6 on the session's clock (0.5 and 3 from its spawn).
REFERENCE = session([call(0, [1, 2]), sub(8.0, [call(0.5, [1, 9]), call(3.0, [1, 9, 10])], 5000), call(20, [1, 2, 3])])
ON_SESSION_CLOCK = session(
    [call(0, [1, 2]), sub(3.0, [call(3.5, [1, 9]), call(6.0, [1, 9, 10])], 5000), call(20, [1, 2, 3])]
)


def test_sub_agent_calls_on_the_session_clock_read_as_the_reference_form(tmp_path: Path) -> None:
    reference = load_one(tmp_path, REFERENCE, "reference.json")
    captured = load_one(tmp_path, ON_SESSION_CLOCK, "captured.json")
    assert shape(captured) == shape(reference)
    assert [c.t for c in captured.subagents[0].calls] == [0.5, 3.0]


def test_a_sub_agent_without_duration_ends_when_its_last_call_does(tmp_path: Path) -> None:
    # On the session's clock: spawn 3, last call at 6 for 1.5 s, so it ended at 7.5 (4.5 after its spawn).
    captured = session([call(0, [1]), sub(3.0, [call(3.0, [1, 5]), call(6.0, [1, 5, 6], api=1.5)], None), call(9, [1])])
    data = normalised(captured)
    marker = data["requests"][1]
    assert marker["t"] == 7.5 and marker["duration_ms"] is None
    assert [c["t"] for c in marker["requests"]] == [0.0, 3.0]
    reference = session(
        [call(0, [1]), sub(7.5, [call(0.0, [1, 5]), call(3.0, [1, 5, 6], api=1.5)], None), call(9, [1])]
    )
    assert shape(load_one(tmp_path, captured, "a.json")) == shape(load_one(tmp_path, reference, "b.json"))


def test_nested_sub_agents_move_onto_their_parents_clocks() -> None:
    # Session clock: outer spawns at 10 (runs 30 s), inner spawns at 12 (runs 4 s) with a call at 13.
    inner = sub(12.0, [call(13.0, [7])], 4000, "inner")
    data = normalised(session([call(0, [1]), sub(10.0, [call(10.0, [1, 2]), inner], 30_000, "outer")]))
    outer = data["requests"][1]
    assert outer["t"] == 40.0  # its end, on the session's clock
    assert outer["requests"][0]["t"] == 0.0
    assert outer["requests"][1]["t"] == 6.0  # the inner one's end (16), on the outer one's clock
    assert outer["requests"][1]["requests"][0]["t"] == 1.0  # 13, on the inner one's clock


def test_a_call_a_millisecond_before_its_spawn_is_jitter(tmp_path: Path) -> None:
    data = normalised(session([call(0, [1]), sub(3.0, [call(2.9995, [1, 2])], 1000), call(5, [1])]))
    assert data["requests"][1]["requests"][0]["t"] == 0.0


def test_a_file_mixing_the_two_clocks_is_one_sentence_naming_file_and_field(tmp_path: Path) -> None:
    mixed = session(
        [call(0, [1]), sub(3.0, [call(3.0, [1, 2])], 1000), call(5, [1]), sub(9.0, [call(0.0, [1, 3])], 2000, "b")]
    )
    path = write(tmp_path / "mixed.json", mixed)
    with pytest.raises(WorkloadError) as info:
        load_session_set(path)
    message = str(info.value)
    assert message.startswith(f"Session file {path}, requests[1]: the sub-agent's calls are on the session's clock")
    assert "requests[3]" in message and "one clock" in message
    assert message.count(". ") <= 1 and "\n" not in message  # one sentence, then the format hint


def test_files_without_evidence_are_left_as_they_are() -> None:
    # No sub-agents, or one at the session's very start: both readings agree, nothing is rewritten.
    for data in (session([call(0, [1]), call(4, [1, 2])]), session([sub(0.0, [call(0.0, [5])], 1000), call(2, [1])])):
        model = validated(data)
        assert normalise(model, fail) is model


def test_files_in_the_reference_format_are_not_touched() -> None:
    for seed in range(4):
        model = validated(session_tree(seed))
        assert normalise(model, fail) is model  # nothing rewritten: the very same model


@pytest.mark.skipif(not AGENTX_WEKA.is_dir(), reason=AGENTX_WEKA_ABSENT)
def test_the_forty_reference_files_are_not_touched() -> None:
    for path in sorted(AGENTX_WEKA.glob("*.json")):
        model = SessionFile.model_validate_json(path.read_bytes(), by_name=False)
        assert normalise(model, fail) is model, path.name  # nothing rewritten: the very same model
        assert read_session_file(path) == model


# -- hash ids -----------------------------------------------------------------------------------------------


def test_hex_hash_ids_are_renumbered_per_file_keeping_equal_ids_equal(tmp_path: Path) -> None:
    hexed = session([
        call(0, ["9f86d081", "60303ae2"]),
        sub(5.0, [call(0.0, ["9f86d081", "fd61a03a"])], 3000),
        call(9, ["9f86d081", "60303ae2", "a4e624d6"]),
    ])  # fmt: skip
    numbered = session([call(0, [0, 1]), sub(5.0, [call(0.0, [0, 2])], 3000), call(9, [0, 1, 3])])
    assert shape(load_one(tmp_path, hexed, "hex.json")) == shape(load_one(tmp_path, numbered, "int.json"))


def test_ids_past_64_bits_are_renumbered_and_small_integer_ids_are_kept(tmp_path: Path) -> None:
    big = 2**100
    tree = load_one(tmp_path, session([call(0, [big, big + 1]), call(3, [big, big + 1, 7])]))
    assert [list(c.hash_ids) for c in tree.calls] == [[0, 1], [0, 1, 2]]
    tree = load_one(tmp_path, session([call(0, [40, 41]), call(3, [40, 41, 7])]), "small.json")
    assert [list(c.hash_ids) for c in tree.calls] == [[40, 41], [40, 41, 7]]


def test_a_global_hash_id_scope_is_one_sentence_naming_the_field(tmp_path: Path) -> None:
    path = write(tmp_path / "g.json", session([call(0, [1])], hash_id_scope="global"))
    with pytest.raises(WorkloadError, match=r"^Session file .*g\.json: `hash_id_scope` is \"global\"; only \"local\""):
        load_session_set(path)


# -- the published corpora's layout and fields --------------------------------------------------------------


def captured_session(session_id: str, start_id: int = 0) -> dict[str, Any]:
    """A session as the SemiAnalysis captures write it: a 36-hex-digit id, extra fields, the session clock."""
    base = list(range(start_id, start_id + 3))
    return {
        "id": session_id, "models": ["claude-opus-4-7", "claude-haiku-4-5-20251001"], "block_size": 64,
        "hash_id_scope": "local", "tool_tokens": 9000, "system_tokens": 3000, "totals": {"requests": 3},
        "requests": [
            {**call(0.0, base), "type": "s", "ttft": 0.4, "input_types": ["text"], "output_types": ["tool_use"],
             "stop": "tool_use"},
            {**sub(2.0, [call(2.1, [*base[:2], 90]), call(4.0, [*base[:2], 90, 91])], 4000), "total_tokens": 900,
             "tool_use_count": 2},
            call(7.0, [*base, 5]),
        ],
    }  # fmt: skip


def test_a_jsonl_corpus_is_one_session_a_line(tmp_path: Path) -> None:
    ids = ["009dfc4e83422be8d3daa41cfda78036b2cd", "00ac905ea15e7901d7e2e5e41eb2e8f09684"]
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(captured_session(ids[0])) + "\n\n" + json.dumps(captured_session(ids[1], 100)) + "\n")
    sessions = load_session_set(path)
    assert [t.session_id for t in sessions.trees] == ids
    assert [t.name for t in sessions.trees] == ["traces.jsonl:1", "traces.jsonl:3"]
    assert len({t.key for t in sessions.trees}) == 2  # each session's text is its own
    # Read onto the reference clocks: the sub-agent stamped with its end (spawn 2 + 4 s), its calls from its spawn.
    first = sessions.trees[0].subagents[0]
    assert first.t == 6.0 and [c.t for c in first.calls] == pytest.approx([0.1, 2.0])


def test_a_bad_session_in_a_jsonl_file_names_the_file_its_line_and_the_field(tmp_path: Path) -> None:
    bad = captured_session("b")
    del bad["requests"][2]["in"]
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(captured_session("a")) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(WorkloadError, match=r"^Session file .*traces\.jsonl, line 2, requests\[2\]: `in` is missing"):
        load_session_set(path)
    path.write_text(json.dumps(captured_session("a")) + "\n{nope\n")
    with pytest.raises(WorkloadError, match=r"traces\.jsonl, line 2, is not JSON \(.*, column 2\)\."):
        load_session_set(path)
    path.write_text("\n\n")
    with pytest.raises(WorkloadError, match=r"traces\.jsonl holds no sessions"):
        load_session_set(path)


def test_a_folder_reads_json_and_jsonl_files_and_looks_into_subfolders_only_when_it_must(tmp_path: Path) -> None:
    write(tmp_path / "a.json", captured_session("one"))
    (tmp_path / "b.jsonl").write_text(json.dumps(captured_session("two")) + "\n" + json.dumps(captured_session("3")))
    (tmp_path / "README.md").write_text("# a corpus")
    (tmp_path / "nested").mkdir()
    write(tmp_path / "nested" / "c.json", captured_session("ignored: the top level has files"))
    assert [t.session_id for t in load_session_set(tmp_path).trees] == ["one", "two", "3"]

    pulled = tmp_path / "pulled"
    (pulled / "data").mkdir(parents=True)
    (pulled / ".cache").mkdir()
    (pulled / "README.md").write_text("# a dataset card")
    (pulled / "data" / "traces.jsonl").write_text(json.dumps(captured_session("deep")))
    write(pulled / ".cache" / "x.json", {"not": "a session"})
    assert [t.session_id for t in load_session_set(pulled).trees] == ["deep"]


def test_flat_sub_agents_are_read_as_the_parent_calls_they_are_written_as(tmp_path: Path) -> None:
    # A worker forked from the parent's first two blocks, its calls interleaved, untagged: the file says
    # nothing of agents, so they stay parent calls in file order (prefix sharing kept by the ids).
    flat = session([call(0, [1, 2, 3]), call(1, [1, 2, 50]), call(2, [1, 2, 3, 4]), call(3, [1, 2, 50, 51])])
    tree = load_one(tmp_path, flat)
    assert tree.subagents == () and [list(c.hash_ids) for c in tree.calls][1] == [1, 2, 50]
