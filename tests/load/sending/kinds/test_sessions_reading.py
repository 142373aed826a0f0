"""How the sessions loop reads a tree when a user takes it (load/sending/kinds/sessions.py, docs/sessions.md):
in a thread, one read at a time, one read for every user waiting for the same session, and a user
cancelled while waiting leaves the read to the others."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from agentx_tui.errors import WorkloadError
from agentx_tui.load import prepare_workload
from agentx_tui.load.sending.context import LoopContext
from agentx_tui.load.sending.kinds.sessions import SessionsLoop
from agentx_tui.load.workload import session_stream
from agentx_tui.load.workload.sessions import PreparedSessions


def _loop(folder: Path, monkeypatch: pytest.MonkeyPatch, reads: list[str]) -> SessionsLoop:
    for i in range(10):
        requests = [{"t": 0, "in": 200, "out": 5, "hash_ids": [1, 2, 3]}]
        if i == 4:
            requests[0]["in"] = 0
        (folder / f"s{i}.json").write_text(json.dumps({"block_size": 64, "requests": requests}))
    monkeypatch.setattr(session_stream, "PREFLIGHT_BYTES", 1)  # nothing but the first session read ahead
    read_tree = session_stream.read_tree

    def counted(ref: Any, *args: Any) -> Any:
        reads.append(threading.current_thread().name)
        return read_tree(ref, *args)

    monkeypatch.setattr(session_stream, "read_tree", counted)
    workload = prepare_workload(str(folder))
    assert isinstance(workload, PreparedSessions)
    reads.clear()
    return SessionsLoop(workload, cast(LoopContext, None))  # reading needs no context


async def test_users_taking_one_session_at_once_share_one_read_in_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    loop = _loop(tmp_path, monkeypatch, reads)
    a, b, c = await asyncio.gather(loop._take(7), loop._take(17), loop._take(8))
    assert a is b and a.name == "s7.json" and c.name == "s8.json"
    assert len(reads) == 2 and threading.current_thread().name not in reads


async def test_a_user_cancelled_while_waiting_leaves_the_read_to_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    loop = _loop(tmp_path, monkeypatch, reads)
    waiting = asyncio.create_task(loop._take(3))
    other = asyncio.create_task(loop._take(13))
    await asyncio.sleep(0)
    waiting.cancel()
    assert (await other).name == "s3.json" and len(reads) == 1
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_an_unreadable_session_is_read_once_however_often_it_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    loop = _loop(tmp_path, monkeypatch, reads)
    for session_id in (4, 14, 24):
        with pytest.raises(WorkloadError, match=r"s4\.json, requests\[0\]: `in`"):
            await loop._take(session_id)
    assert len(reads) == 1
