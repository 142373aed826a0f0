from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentx_tui.errors import WorkloadError
from agentx_tui.load.workload.sessions import SessionSet, load_session_set
from tests.helpers.paths import AGENTX_WEKA, AGENTX_WEKA_ABSENT
from tests.helpers.traces import SUBAGENTS_PER_TREE, write_session_corpus, write_session_tree

WEKA = AGENTX_WEKA
needs_weka = pytest.mark.skipif(not WEKA.is_dir(), reason=AGENTX_WEKA_ABSENT)


def call(t: float, think: float | None = 0.0, *, tokens: int = 200, out: int = 10, api: float | None = 1.0,
         ids: list[int] | None = None) -> dict[str, Any]:  # fmt: skip
    c: dict[str, Any] = {"t": t, "type": "n", "in": tokens, "out": out, "hash_ids": [1, 2, 3] if ids is None else ids}
    if think is not None:
        c["think_time"] = think
    if api is not None:
        c["api_time"] = api
    return c


def sub(
    t: float, calls: list[dict[str, Any]], duration_ms: float | None, agent_id: str = "agent_001"
) -> dict[str, Any]:
    return {"t": t, "type": "subagent", "agent_id": agent_id, "subagent_type": "Explore",
            "duration_ms": duration_ms, "requests": calls}  # fmt: skip


def write(folder: Path, requests: Any, name: str = "s.json", **top: Any) -> Path:
    path = folder / name
    path.write_text(json.dumps({"id": path.stem, "block_size": 64, "requests": requests, **top}))
    return path


# -- the real files (checks about the recorded data) ---------------------------------------------------


@pytest.fixture(scope="module")
def weka() -> SessionSet:
    return load_session_set(WEKA)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> SessionSet:
    return load_session_set(write_session_corpus(tmp_path_factory.mktemp("sessions")))


@needs_weka
def test_all_forty_real_files_load_with_their_sub_agents(weka: SessionSet) -> None:
    assert len(weka.trees) == 40
    assert [t.name for t in weka.trees] == sorted(p.name for p in WEKA.glob("*.json"))
    assert weka.with_subagents == 10 and weka.subagents == 34
    assert weka.calls == 2732 == sum(1 for t in weka.trees for _ in t.all_calls())
    assert weka.max_context_tokens > 400_000  # trace_0478 runs to 448 K tokens
    assert "40 agent session(s)" in weka.describe() and "34 sub-agent(s) in 10 session(s)" in weka.describe()
    for tree in weka.trees:
        assert tree.block_size == 64 and sorted(c.seq for c in tree.all_calls()) == list(range(tree.call_count))
        for c in tree.all_calls():
            assert len(c.hash_ids) * 64 <= c.input_tokens and c.output_tokens >= 1


@needs_weka
def test_real_schedules_follow_the_recorded_times(weka: SessionSet) -> None:
    # A sub-agent's `t` is its end (workloads/README.md): it started t − duration after the parent call before
    # it ended (0.1–1.0 s after, but for one pair of clock outliers), and the parent's next call, the
    # first recorded at or after its end, waits for it.
    background, started = 0, []
    for tree in weka.trees:
        for s in tree.subagents:
            assert s.calls and s.start is not None and s.start < s.t and s.agent_id.startswith("agent_")
            if s.spawn_after is not None:
                before = tree.calls[s.spawn_after]
                started.append(s.start - (before.t + (before.api_time or 0.0)))
            after = 0 if s.spawn_after is None else s.spawn_after + 1
            if s.join_at is None:
                background += 1
                assert all(c.t < s.t for c in tree.calls[after:])
            else:
                assert s.join_at == after  # the very next parent call
                assert tree.calls[s.join_at].t >= s.t
    assert background >= 2  # trace_0004's two last sub-agents have no parent call after them
    assert len(started) == 34 and sum(0.05 <= gap <= 1.1 for gap in started) == 32, sorted(started)
    t4 = next(t for t in weka.trees if t.name == "trace_0004.json")
    assert [(s.spawn_after, s.join_at) for s in t4.subagents] == [(181, None), (181, None)]
    assert t4.subagents[0].start == pytest.approx(440243.409 - 94.117)


# -- files made here (tests/helpers/traces.py) ---------------------------------------------------------


def test_made_files_load_with_their_sub_agents(made: SessionSet) -> None:
    assert len(made.trees) == 4 and made.with_subagents == 4 and made.subagents == 4 * SUBAGENTS_PER_TREE
    assert "4 agent session(s)" in made.describe() and "16 sub-agent(s) in 4 session(s)" in made.describe()
    for tree in made.trees:
        assert tree.block_size == 64 and sorted(c.seq for c in tree.all_calls()) == list(range(tree.call_count))
        for c in tree.all_calls():
            assert len(c.hash_ids) * 64 <= c.input_tokens and c.output_tokens >= 1
        parallel_a, parallel_b, late, never = tree.subagents
        assert (parallel_a.spawn_after, parallel_a.join_at) == (parallel_b.spawn_after, parallel_b.join_at) == (1, 2)
        assert None in (parallel_a.start, parallel_b.start)  # one with a null duration_ms
        assert (late.spawn_after, late.join_at) == (3, 5) and never.join_at is None


def test_missing_think_time_is_zero(tmp_path: Path) -> None:
    (tree,) = load_session_set(write_session_tree(tmp_path)).trees
    assert tree.calls[5].think_time == 0.0 and tree.calls[3].think_time > 0  # call 5 was written without one


def test_scaling_keeps_in_exact_and_scales_the_block(made: SessionSet) -> None:
    small = made.with_scale(0.03)
    assert small.scale == 0.03 and small.trees[0].block_tokens == pytest.approx(1.92)
    for big, little in zip(made.trees[0].all_calls(), small.trees[0].all_calls(), strict=True):
        assert little.input_tokens == max(1, round(big.recorded_in * 0.03))
        assert little.output_tokens == max(1, round(big.recorded_out * 0.03))
        assert little.hash_ids is big.hash_ids  # shared, not copied
    assert small.with_scale(1.0).input_tokens == made.input_tokens


# -- schedules on hand-made files ------------------------------------------------------------------


def test_join_is_the_first_parent_call_at_or_after_the_sub_agents_t_its_end(tmp_path: Path) -> None:
    path = write(tmp_path, [
        call(0), sub(35, [call(0), call(20)], duration_ms=30_000),  # back at 35, so it started at 5
        sub(10, [call(0, api=4.0)], duration_ms=None, agent_id="agent_002"),  # back at 10; span unknown
        call(8), call(10), call(35), call(50),
    ])  # fmt: skip
    tree = load_session_set(path).trees[0]
    a, b = tree.subagents
    assert (a.spawn_after, a.join_at, a.t, a.start) == (0, 3, 35.0, 5.0)
    assert (b.spawn_after, b.join_at, b.t, b.start) == (0, 2, 10.0, None)  # a null duration: the order stands
    assert [c.index for c in tree.calls] == [0, 1, 2, 3, 4]
    assert [c.seq for c in tree.calls] == [0, 4, 5, 6, 7] and [c.seq for c in (*a.calls, *b.calls)] == [1, 2, 3]
    assert a.calls[1].where == "requests[1].requests[1]" and a.label == "agent_001 Explore"


def test_sub_agents_at_the_start_and_in_the_background(tmp_path: Path) -> None:
    path = write(tmp_path, [sub(0.4, [call(0)], 400), call(0.5), call(2), sub(102, [call(0)], 99_000)])
    a, b = load_session_set(path).trees[0].subagents
    assert (a.spawn_after, a.join_at) == (None, 0)  # before any parent call: the first one joins it
    assert (b.spawn_after, b.join_at) == (1, None)


def test_nested_sub_agents_are_scheduled_against_their_parent_sub_agent(tmp_path: Path) -> None:
    inner = sub(3, [call(0)], 2000, agent_id="inner")  # 1..3 on the outer sub-agent's clock
    outer = sub(20, [call(0), inner, call(2), call(4)], 10_000)  # 10..20 on the parent's
    tree = load_session_set(write(tmp_path, [call(0), outer, call(30)])).trees[0]
    (o,) = tree.subagents
    (i,) = o.subagents
    assert (o.spawn_after, o.join_at) == (0, 1)
    assert (i.spawn_after, i.join_at, i.t, i.start) == (0, 2, 3.0, 1.0)
    assert i.calls[0].where == "requests[1].requests[1].requests[0]"
    assert tree.subagent_count == 2 and tree.call_count == 6


def test_a_folder_is_read_in_name_order_and_out_zero_still_asks_for_one_token(tmp_path: Path) -> None:
    write(tmp_path, [call(0, out=0)], name="b.json")
    write(tmp_path, [call(0)], name="a.json")
    (tmp_path / "notes.txt").write_text("not a session")
    loaded = load_session_set(tmp_path)
    assert [t.name for t in loaded.trees] == ["a.json", "b.json"]
    assert loaded.trees[1].calls[0].output_tokens == 1 and loaded.trees[1].calls[0].recorded_out == 0
    assert loaded.trees[0].key != loaded.trees[1].key


# -- bad files: one sentence naming the file, the request and the field ----------------------------------


def _with(changes: dict[str, Any]) -> list[Any]:
    return [call(0), {**call(1), **changes}]


BAD: list[tuple[str, Any, str, str]] = [
    # (case, requests, where, field)
    ("t missing", [call(0), {k: v for k, v in call(1).items() if k != "t"}], "requests[1]", "`t`"),
    ("t negative", _with({"t": -1}), "requests[1]", "`t`"),
    ("think_time text", _with({"think_time": "abc"}), "requests[1]", "`think_time`"),
    ("think_time negative", _with({"think_time": -0.5}), "requests[1]", "`think_time`"),
    ("think_time boolean", _with({"think_time": True}), "requests[1]", "`think_time`"),
    ("api_time negative", _with({"api_time": -2}), "requests[1]", "`api_time`"),
    ("in missing", [call(0), {k: v for k, v in call(1).items() if k != "in"}], "requests[1]", "`in`"),
    ("in zero", _with({"in": 0}), "requests[1]", "`in`"),
    ("in fractional", _with({"in": 1.5}), "requests[1]", "`in`"),
    ("out negative", _with({"out": -1}), "requests[1]", "`out`"),
    ("out text", _with({"out": "ten"}), "requests[1]", "`out`"),
    ("hash_ids not a list", _with({"hash_ids": 7}), "requests[1]", "`hash_ids`"),
    # String ids and ids past 64 bits are renumbered, not refused (tests/sessionfile/test_variants.py).
    ("hash id float", _with({"hash_ids": [1, 2.5]}), "requests[1]", "`hash_ids[1]`"),
    ("hash id null", _with({"hash_ids": [1, None]}), "requests[1]", "`hash_ids[1]`"),
    ("hash_ids too long", _with({"in": 129, "hash_ids": [1, 2, 3, 4]}), "requests[1]", "`hash_ids`"),
    ("request not an object", [call(0), 5], "requests[1]", "object"),
    ("sub-agent requests missing", [call(0), {"type": "subagent", "t": 1, "duration_ms": 5}], "requests[1]",
     "`requests`"),
    ("sub-agent duration negative", [call(0), sub(1, [call(0)], -5)], "requests[1]", "`duration_ms`"),
    ("nested call field", [call(0), sub(1, [call(0), {**call(1), "out": None}], 5)], "requests[1].requests[1]",
     "`out`"),
]  # fmt: skip


def _one_sentence(err: WorkloadError, path: Path, *parts: str) -> None:
    assert err.exit_code == 2
    message = err.message
    assert "\n" not in message and message.endswith(".") and ". " not in message, message
    assert str(path) in message, message
    for part in parts:
        assert part in message, message


@pytest.mark.parametrize(("case", "requests", "where", "field"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_request_is_one_sentence_naming_file_request_and_field(
    tmp_path: Path, case: str, requests: Any, where: str, field: str
) -> None:
    path = write(tmp_path, requests)
    with pytest.raises(WorkloadError) as info:
        load_session_set(path)
    _one_sentence(info.value, path, f", {where}:", field)


@pytest.mark.parametrize(
    ("case", "content", "expected"),
    [
        ("not JSON", "{nope", "is not JSON"),
        ("not UTF-8", b"\xff\xfe{", "is not UTF-8 text"),
        ("not an object", "[1, 2]", "one JSON object, not a list"),
        ("no block_size", json.dumps({"requests": [call(0)]}), "`block_size` is missing"),
        ("zero block_size", json.dumps({"block_size": 0, "requests": [call(0)]}), "`block_size`"),
        ("text block_size", json.dumps({"block_size": "64", "requests": [call(0)]}), "`block_size`"),
        ("no requests", json.dumps({"block_size": 64}), "`requests` is missing"),
        ("requests not a list", json.dumps({"block_size": 64, "requests": {}}), "`requests`"),
        ("no calls", json.dumps({"block_size": 64, "requests": []}), "holds no calls"),
        ("only an empty sub-agent", json.dumps({"block_size": 64, "requests": [sub(0, [], 10)]}), "holds no calls"),
    ],
)
def test_a_bad_file_is_one_sentence_naming_it(tmp_path: Path, case: str, content: str | bytes, expected: str) -> None:
    path = tmp_path / "bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(WorkloadError) as info:
        load_session_set(path)
    _one_sentence(info.value, path, expected)


def test_an_empty_folder_a_missing_path_and_a_bad_scale_are_refused(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="holds no agent-session files"):
        load_session_set(tmp_path)
    with pytest.raises(WorkloadError, match="No agent-session file or folder"):
        load_session_set(tmp_path / "absent")
    with pytest.raises(WorkloadError, match="--scale"):
        load_session_set(write(tmp_path, [call(0)]), scale=0)


def test_one_bad_file_in_a_folder_names_that_file(tmp_path: Path) -> None:
    write(tmp_path, [call(0)], name="a.json")
    bad = write(tmp_path, _with({"think_time": -1}), name="b.json")
    with pytest.raises(WorkloadError) as info:
        load_session_set(tmp_path)
    _one_sentence(info.value, bad, "requests[1]", "`think_time`")
