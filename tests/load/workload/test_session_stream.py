"""A replay's sessions read as users take them (load/workload/session_stream.py, docs/sessions.md): the
index and the read-ahead before the first request, trees shared while replayed and dropped after, a
bad session found late skipped (not re-read), and nothing of the corpus pickled to a worker."""

from __future__ import annotations

import gc
import json
import os
import pickle
import shutil
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any

import pytest

from agentx_tui.errors import WorkloadError
from agentx_tui.load import prepare_workload
from agentx_tui.load.workload import session_stream
from agentx_tui.load.workload.base import p95
from agentx_tui.load.workload.session_stream import (
    KEEP_RECENT,
    SessionStream,
    open_session_stream,
    preflight_picks,
)
from agentx_tui.load.workload.sessions import PreparedSessions, load_session_set
from tests.helpers.paths import AGENTX_WEKA, AGENTX_WEKA_ABSENT, REPO

needs_weka = pytest.mark.skipif(not AGENTX_WEKA.is_dir(), reason=AGENTX_WEKA_ABSENT)


def _write(folder: Path, name: str, calls: int = 3, *, tokens: int = 200, bad: bool = False) -> Path:
    requests: list[dict[str, Any]] = [
        {"t": i, "in": tokens + i, "out": 10, "hash_ids": [1, 2, 3], "think_time": 0} for i in range(calls)
    ]
    if bad:
        requests[-1]["t"] = -1
    path = folder / name
    path.write_text(json.dumps({"id": path.stem, "block_size": 64, "requests": requests}))
    return path


def _folder(folder: Path, count: int) -> list[str]:
    names = [f"s{i:03d}.json" for i in range(count)]
    for i, name in enumerate(names):
        _write(folder, name, calls=2 + i % 3, tokens=200 * (i + 1))
    return names


# -- what pre-flight reads ---------------------------------------------------------------------------------


def test_preflight_reads_all_that_fits_else_the_first_sessions_then_an_even_spread() -> None:
    assert preflight_picks([10] * 5, 50) == [0, 1, 2, 3, 4]
    picks = preflight_picks([10] * 100, 200)
    assert picks[:5] == [0, 1, 2, 3, 4]  # a quarter of the budget on the first ones
    spread = picks[5:]
    assert len(spread) == 15 and spread == sorted(spread) and spread[0] > 4 and spread[-1] > 90
    assert preflight_picks([500, 10, 10], 100) == [0]  # the first always, whatever its size
    assert preflight_picks([10, 500, 10, 10], 100) == [0, 2]  # at least one spread over the rest


@needs_weka
def test_a_corpus_that_fits_the_read_ahead_is_read_whole_as_before() -> None:
    stream, whole = open_session_stream(AGENTX_WEKA), load_session_set(AGENTX_WEKA)
    assert stream.whole and len(stream) == 40 and stream.describe() == whole.describe()
    everything = [c.input_tokens + c.output_tokens for t in whole.trees for c in t.all_calls()]
    assert stream.context_needed() == p95(everything)
    assert [t.name for t in stream.trees] == [t.name for t in whole.trees]
    half, half_whole = stream.with_scale(0.5, 0.5), whole.with_scale(0.5, 0.5)
    assert half.describe() == half_whole.describe() and half.context_needed() < stream.context_needed()
    for got, expected in zip(half.trees, half_whole.trees, strict=True):
        assert [(c.input_tokens, c.output_tokens) for c in got.all_calls()] == [
            (c.input_tokens, c.output_tokens) for c in expected.all_calls()
        ]


def test_a_big_corpus_reads_ahead_a_sample_and_the_rest_when_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = _folder(tmp_path, 60)
    size = sum((tmp_path / n).stat().st_size for n in names)
    monkeypatch.setattr(session_stream, "PREFLIGHT_BYTES", size // 6)
    stream = open_session_stream(tmp_path)
    assert not stream.whole and 6 < stream.read_ahead.sessions < 20 and len(stream) == 60
    assert stream.describe().startswith(f"60 agent session(s) from {tmp_path.name} (")
    assert f"the {stream.read_ahead.sessions} read ahead" in stream.describe()
    assert stream.context_needed() > 0
    assert [t.name for t in stream.trees] == names  # every one readable, in order


def test_a_bad_file_past_the_read_ahead_is_found_when_taken_and_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _folder(tmp_path, 40)
    bad = _write(tmp_path, "s021.json", bad=True)  # between the read-ahead's first and spread sessions
    monkeypatch.setattr(session_stream, "PREFLIGHT_BYTES", 600)
    stream = open_session_stream(tmp_path)
    assert 21 not in session_stream.preflight_picks([r.length for r in stream.refs], 600)
    reads: list[int] = []
    read_tree = session_stream.read_tree
    monkeypatch.setattr(session_stream, "read_tree", lambda ref, *a: reads.append(1) or read_tree(ref, *a))
    messages = []
    for session_id in (21, 61):  # the second comes round to the same file
        with pytest.raises(WorkloadError) as info:
            stream.tree(stream.index_of(session_id))
        messages.append(info.value.message)
    first, again = messages
    assert first == again and str(bad) in first and "requests[2]" in first and "`t`" in first
    assert len(reads) == 1


def test_a_bad_file_among_the_first_sessions_stops_the_run_before_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _folder(tmp_path, 40)
    bad = _write(tmp_path, "s000.json", bad=True)
    monkeypatch.setattr(session_stream, "PREFLIGHT_BYTES", 600)
    with pytest.raises(WorkloadError) as info:
        prepare_workload(str(tmp_path))
    assert info.value.exit_code == 2 and str(bad) in info.value.message and "\n" not in info.value.message


# -- trees while they are replayed -----------------------------------------------------------------------


def test_files_are_taken_in_order_and_recycled(tmp_path: Path) -> None:
    names = _folder(tmp_path, 5)
    stream = open_session_stream(tmp_path)
    assert [stream.tree(stream.index_of(session_id)).name for session_id in range(12)] == [
        names[i % 5] for i in range(12)
    ]


def test_a_tree_is_shared_while_replayed_and_dropped_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _folder(tmp_path, 30)
    monkeypatch.setattr(session_stream, "PREFLIGHT_BYTES", 1)  # nothing but the first session read ahead
    stream = open_session_stream(tmp_path)
    a, b = stream.tree(stream.index_of(7)), stream.tree(stream.index_of(37))  # two users on one session
    assert a is b and stream.held(7) is a
    gone = weakref.ref(a)
    del a, b
    for session_id in range(10, 10 + KEEP_RECENT):  # users move on: it falls out of the last kept
        stream.tree(stream.index_of(session_id))
    gc.collect()
    assert gone() is None and stream.held(7) is None  # no user holds it: dropped
    assert len(stream._kept) == KEEP_RECENT


def test_a_stream_pickles_without_its_trees(tmp_path: Path) -> None:
    _folder(tmp_path, 20)
    prepared = prepare_workload(str(tmp_path))
    assert isinstance(prepared, PreparedSessions) and len(prepared.sessions._kept) == 20  # all held here
    copy = pickle.loads(pickle.dumps(prepared))
    assert isinstance(copy, PreparedSessions) and isinstance(copy.sessions, SessionStream)
    assert not copy.sessions._kept and copy.sessions.describe() == prepared.sessions.describe()
    assert [list(c.hash_ids) for t in copy.sessions.trees for c in t.all_calls()] == [
        list(c.hash_ids) for t in prepared.sessions.trees for c in t.all_calls()
    ]


# -- a big folder, end to end ------------------------------------------------------------------------------


@needs_weka
def test_a_big_folder_replays_its_first_request_within_seconds_in_bounded_memory(tmp_path: Path) -> None:
    # The 40 shared sessions (19 MB) copied five times: ~95 MB, 200 files. Read whole before the first
    # request (as before), this run took 4.3 s to its first request and peaked at 180 MB here; read as
    # users take them, 2.4 s and 104 MB, as for a folder of 1 GB (docs/sessions.md).
    folder = tmp_path / "copies"
    folder.mkdir()
    for copy in range(5):
        for path in sorted(AGENTX_WEKA.glob("*.json")):
            shutil.copyfile(path, folder / f"c{copy}_{path.name}")
    size = sum(p.stat().st_size for p in folder.iterdir())
    assert size > 90e6
    args = ["--sim", "-w", str(folder), "-u", "4", "--headless", "--duration", "1"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    done = subprocess.run(
        [sys.executable, "-m", "tests.helpers.first_request", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["exit_code"] == 0, done.stderr[-2000:]
    assert found["first_request_s"] is not None and found["first_request_s"] < 10
    assert found["peak_rss_mb"] < 150, (found, done.stderr[-3000:])  # the folder alone is 95 MB
