"""The index of a corpus (sessionfile/index.py): where each session is, found without parsing one, and
each session read through its ref exactly as `read_sessions` reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentx_tui.errors import WorkloadError
from agentx_tui.sessionfile import SessionRef, index_sessions, read_ref, read_sessions
from agentx_tui.sessionfile import index as index_module

VARIANTS = Path(__file__).parent / "variants"


def _session(number: int, calls: int = 2) -> str:
    requests = [{"t": i, "in": 100, "out": 5, "hash_ids": [number, i]} for i in range(calls)]
    return json.dumps({"id": f"s{number}", "block_size": 64, "requests": requests})


def test_a_json_file_is_one_session_of_its_whole_size() -> None:
    path = VARIANTS / "kv_cache_tester_v8.json"
    (ref,) = index_sessions([path])
    assert ref == SessionRef(path, None, 0, path.stat().st_size) and ref.suffix == ""
    assert read_ref(ref) == next(read_sessions(path))[1]


@pytest.mark.parametrize("chunk", [7, 64, 8 << 20])  # lines spanning many chunks, and none
def test_a_jsonl_files_lines_are_found_by_their_newlines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         chunk: int) -> None:  # fmt: skip
    monkeypatch.setattr(index_module, "_CHUNK", chunk)
    path = tmp_path / "traces.jsonl"
    lines = [_session(1), "", "   \t", _session(2, calls=30), "", _session(3)]  # the last without a newline
    path.write_text("\n".join(lines))
    refs = index_sessions([path])
    assert [r.line for r in refs] == [1, 4, 6] and [r.suffix for r in refs] == [":1", ":4", ":6"]
    assert [read_ref(r) for r in refs] == [s for _, s in read_sessions(path)]
    assert [path.read_bytes()[r.offset : r.offset + r.length].decode() for r in refs] == [lines[0], lines[3], lines[5]]


def test_the_variants_corpus_reads_alike_through_its_index() -> None:
    path = VARIANTS / "semianalysis_session_clock.jsonl"
    refs = index_sessions([path])
    assert [(r.line, read_ref(r)) for r in refs] == list(read_sessions(path))


def test_crlf_lines_and_a_bad_line_read_as_read_sessions_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_bytes(f"{_session(1)}\r\n{{nope\r\n".encode())
    good, bad = index_sessions([path])
    assert read_ref(good).id == "s1"
    with pytest.raises(WorkloadError, match=r"traces\.jsonl, line 2, is not JSON"):
        read_ref(bad)


def test_a_jsonl_file_without_a_session_and_a_missing_file_are_one_sentence(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    with pytest.raises(WorkloadError, match="holds no sessions"):
        index_sessions([empty])
    with pytest.raises(WorkloadError, match="Cannot read the session file"):
        index_sessions([tmp_path / "gone.json"])


def test_a_file_cut_short_after_it_was_indexed_is_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(f"{_session(1)}\n{_session(2)}\n")
    _, second = index_sessions([path])
    path.write_text(f"{_session(1)}\n")
    with pytest.raises(WorkloadError, match="changed while it was replayed"):
        read_ref(second)
