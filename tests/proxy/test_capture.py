"""Capture files: the AgentX format our loader replays, sub-agents nested as the corpus records them,
salted block hashes, and nothing of what was said, nor any header value, on disk."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from agentx_tui.load.workload.sessions import load_session_set
from agentx_tui.proxy import Capture, LiveProxy, LiveSessions, Tokenizer
from agentx_tui.proxy._blocks import BlockChain, BlockHasher, IdTable
from tests.proxy.calls import SYSTEM, assistant, make_call, stream, tool, user
from tests.proxy.upstream import Upstream, chat_ids

CANARY = "canary-7f3a9e-do-not-store"
KEY = "sk-capture-KEY-5566778899"


def words(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def only_file(folder: Path) -> dict[str, Any]:
    (path,) = folder.glob("*.json")
    data: dict[str, Any] = json.loads(path.read_bytes())
    return data


# -- block hashes ------------------------------------------------------------------------------------


def test_block_hashes_chain_over_whole_blocks_and_depend_on_the_key() -> None:
    hasher = BlockHasher(b"k" * 32, block_size=4)
    chain = BlockChain(hasher)
    ids, known, total = chain.prepare(list(range(10)))  # 2 whole blocks; the last 2 tokens are dropped
    assert (known, total) == (0, 2)
    chain.hash_blocks(ids, 0, total)
    first = chain.hashes(2)
    ids, known, total = chain.prepare([*range(10), 10, 11, 12])  # extends: the first two are reused
    assert (known, total) == (2, 3)
    chain.hash_blocks(ids, known, total)
    assert chain.hashes(3)[:2] == first
    ids, known, total = chain.prepare([0, 1, 2, 3, 99, 5, 6, 7])  # diverges in block 1
    assert known == 1
    chain.hash_blocks(ids, known, total)
    assert chain.hashes(2)[0] == first[0] and chain.hashes(2)[1] != first[1]
    # A chain: the same block after a different prefix hashes differently.
    other = BlockChain(hasher)
    ids, _, total = other.prepare([9, 9, 9, 9, 4, 5, 6, 7])
    other.hash_blocks(ids, 0, total)
    assert other.hashes(2)[1] != first[1]
    # Another capture's key: nothing is comparable across captures.
    elsewhere = BlockChain(BlockHasher(b"q" * 32, block_size=4))
    ids, _, total = elsewhere.prepare(list(range(8)))
    elsewhere.hash_blocks(ids, 0, total)
    assert not set(elsewhere.hashes(2)) & set(first)
    table = IdTable()
    assert list(table.number(first)) == [1, 2] and list(table.number([first[1], b"x" * 32])) == [2, 3]


# -- the file ----------------------------------------------------------------------------------------


async def test_a_tree_with_a_sub_agent_is_written_in_the_corpus_format(tmp_path: Path, upstream: Upstream) -> None:
    capture = Capture(tmp_path, tokenizer_name="m")
    sessions = LiveSessions(capture=capture, tokenizer=Tokenizer(upstream.url))
    await sessions.start()
    shared = {"role": "system", "content": words(200, "sys")}
    history = [shared, user(words(30, "task"))]

    def run(messages: list[dict[str, Any]], at: float, tokens: int, **kw: Any) -> Any:
        call = make_call(messages, at=at, **kw)
        sessions.call_started(call)
        stream(call, first=at + 0.1, tokens=tokens, gap=0.01, prompt=len(chat_ids(messages)), cached=64)
        sessions.call_ended(call)
        return call

    p1 = run(history, 100.0, 3, header="parent")  # ends at 100.131
    sub_messages = [{"role": "system", "content": words(100, "sub")}, user("look around")]
    s1 = run(sub_messages, 100.7, 2, header="child", parent="parent")  # spawned 0.57 s after the parent's call
    sub_messages += [assistant("ls"), tool(words(70, "out"))]
    s2 = run(sub_messages, 101.5, 2, header="child", parent="parent")
    history += [assistant("delegated"), tool(words(10, "res"))]
    p2 = run(history, 103.0, 4, header="parent")
    await sessions.close()

    data = only_file(tmp_path)
    assert data["block_size"] == 64 and data["hash_id_scope"] == "local" and data["tokenizer"] == "m"
    assert data["captured_by"].startswith("agentx-tui ") and len(data["id"]) == 16
    first, sub, second = data["requests"]
    assert first["t"] == 0.0 and first["think_time"] == 0.0 and first["type"] == "s"
    assert first["in"] == p1.prompt_tokens and first["out"] == 3 and first["cached"] == 64
    assert first["stop"] == "stop" and first["counts_from"] == "server_usage"
    assert first["ttft"] == pytest.approx(0.1) and first["api_time"] == pytest.approx(
        p1.ended_at - p1.received_at, abs=1e-3
    )
    assert first["hash_ids"] == list(range(1, first["in"] // 64 + 1))  # whole blocks only, numbered 1, 2, 3...
    # The sub-agent: placed by its end, t = its end on the parent's clock, calls on its own clock.
    assert sub["type"] == "subagent" and sub["agent_id"] == "agent_001"
    sub_end = s2.ended_at - p1.received_at
    assert sub["t"] == pytest.approx(sub_end, abs=1e-3)
    assert sub["duration_ms"] == round((s2.ended_at - s1.received_at) * 1000)
    c1, c2 = sub["requests"]
    assert c1["t"] == 0.0 and c1["think_time"] == pytest.approx(100.7 - p1.ended_at, abs=1e-3)
    assert c2["t"] == pytest.approx(0.8) and c2["think_time"] == pytest.approx(101.5 - s1.ended_at, abs=1e-3)
    assert c2["hash_ids"][: len(c1["hash_ids"])] == c1["hash_ids"]  # the sub-agent's prompt grew
    assert not set(c1["hash_ids"]) & set(first["hash_ids"])  # a different system prompt shares nothing
    # The parent's next call: its think time counts from its own previous call (the sub-agent inside it).
    assert second["t"] == pytest.approx(3.0) and second["think_time"] == pytest.approx(103.0 - p1.ended_at, abs=1e-3)
    assert second["hash_ids"][: len(first["hash_ids"])] == first["hash_ids"]
    assert second["input_types"] == ["tool_result"] and first["input_types"] == ["text"]
    totals = data["totals"]
    assert totals["parent_tokens"] == {"input": p1.prompt_tokens + p2.prompt_tokens, "output": 7}
    assert totals["subagent_tokens"]["output"] == 4 and totals["subagent_count"] == 1
    assert totals["combined_tokens"]["input"] == sum(c.prompt_tokens for c in (p1, s1, s2, p2))
    # Our own loader replays it, with the sub-agent scheduled after the first call and joined by the second.
    loaded = load_session_set(tmp_path)
    (tree,) = loaded.trees
    assert tree.call_count == 4 and tree.subagent_count == 1
    (scheduled,) = tree.subagents
    assert (scheduled.spawn_after, scheduled.join_at) == (0, 1)
    assert capture.figures().captured_sessions == 1


async def test_nothing_said_no_key_and_no_header_value_reaches_the_folder(tmp_path: Path, upstream: Upstream) -> None:
    folder = tmp_path / "captures"
    proxy = LiveProxy(upstream.url, capture_dir=folder, model="fake", api_key=KEY)
    await proxy.start()
    secrets = [CANARY, KEY, "session-value-XYZ", "parent-value-QRS", "user-field-ABC", "x-custom-val"]
    headers = {
        "Authorization": f"Bearer {KEY}",
        "X-Session-ID": "session-value-XYZ",
        "X-Parent-Session-ID": "parent-value-QRS",
        "X-Custom": "x-custom-val",
    }
    history = [{"role": "system", "content": f"{CANARY} " + words(150, "w")}, user(f"{CANARY} please")]
    async with aiohttp.ClientSession(headers=headers) as http:
        for step in range(3):
            body = {
                "model": "fake",
                "messages": history,
                "stream": True,
                "stream_options": {"include_usage": True},
                "user": "user-field-ABC",
            }
            async with http.post(f"{proxy.url}/v1/chat/completions", json=body) as resp:
                assert resp.status == 200
                await resp.read()
            history += [assistant(f"{CANARY} reply {step}"), tool(f"{CANARY} " + words(40, f"t{step}"))]
    await proxy.close()
    files = list(folder.iterdir())
    assert [f.suffix for f in files] == [".json"]  # no temporary file left behind
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    blob = files[0].read_bytes()
    for secret in secrets:
        assert secret.encode() not in blob, f"{secret} reached the capture"
    for line in proxy.events():
        assert not any(s in line for s in secrets)
    data = json.loads(blob)
    assert len(data["requests"]) == 3 and all(r["hash_ids"] for r in data["requests"])
    # Not even the token ids: every number in hash_ids is a small per-file index.
    ids = {i for r in data["requests"] for i in r["hash_ids"]}
    assert ids == set(range(1, len(ids) + 1))
    assert proxy.figures().captured_sessions == 1


async def test_close_writes_every_completed_call_of_open_sessions(tmp_path: Path, upstream: Upstream) -> None:
    proxy = LiveProxy(upstream.url, capture_dir=tmp_path)
    await proxy.start()
    async with aiohttp.ClientSession() as http:
        history = [SYSTEM, user(words(80, "a"))]
        for step in range(4):
            body = {"model": "fake", "messages": history, "stream": True}  # no usage asked for
            async with http.post(f"{proxy.url}/v1/chat/completions", json=body) as resp:
                await resp.read()
            history += [assistant("ok"), tool(words(20, f"s{step}"))]
        # A non-streamed call of another session.
        async with http.post(f"{proxy.url}/v1/chat/completions", json={"model": "fake", "messages": [user("x")]}):
            pass
    await proxy.close()
    await proxy.close()
    by_calls = sorted((json.loads(p.read_bytes()) for p in tmp_path.glob("*.json")), key=lambda d: len(d["requests"]))
    single, agent = by_calls
    assert len(agent["requests"]) == 4
    for call in agent["requests"]:
        # Without usage: `in` from /tokenize, `out` from the content events, `cached` unknown.
        assert call["counts_from"] == "tokenize_and_events" and call["cached"] is None and call["out"] == 5
    assert agent["totals"]["cached_tokens"] is None
    assert [r["in"] for r in agent["requests"]] == sorted(r["in"] for r in agent["requests"])
    (whole,) = single["requests"]
    assert whole["type"] == "n" and "ttft" not in whole and whole["counts_from"] == "server_usage"
    assert len(load_session_set(tmp_path).trees) == 2


def test_files_are_written_atomically_with_mode_0600(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    capture = Capture(tmp_path)
    tree = capture.open_tree()
    call = make_call([SYSTEM, user("x")], at=0.0)
    stream(call, first=0.1)
    capture.add_call(tree.root, call, tokens_coming=False)
    path = capture.write(tree)
    assert path is not None and stat.S_IMODE(path.stat().st_mode) == 0o600
    before = path.read_bytes()

    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    second = make_call([SYSTEM, user("x"), assistant("y"), tool("z")], at=1.0)
    stream(second, first=1.1)
    capture.add_call(tree.root, second, tokens_coming=False)
    assert capture.write(tree) is None
    assert path.read_bytes() == before  # the old file stands whole
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # and no temporary file is left
    assert "No space left" in (capture.figures().last_error or "")
    monkeypatch.undo()
    assert capture.write(tree) == path and len(json.loads(path.read_bytes())["requests"]) == 2
    assert capture.figures().captured_sessions == 1  # one tree, one file, however often rewritten


def test_an_unwritable_folder_is_said_before_anything_starts(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(Exception, match="cannot be made"):
        Capture(blocker / "sub")
