"""`--output-scale` as a server sees it through the driver: every requested `max_tokens` scaled, the
prompts as without it (a synthetic session's history aside: it holds the shorter answers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentx_tui.engine import ServerInfo
from agentx_tui.load import Driver, LoadSettings, PreparedWorkload, prepare, prepare_workload
from agentx_tui.load.workload.spec import parse_workload
from tests.helpers.waiting import until
from tests.load.fake_openai import FakeServer, chat_ids


async def _requests(fake: FakeServer, workload: PreparedWorkload, *, seed: int = 3) -> list[dict[str, Any]]:
    """Every completion one session of `workload` asks `fake` for, in order."""
    fake.requests.clear()
    info = ServerInfo(fake.url, "fake", max_model_len=fake.max_model_len, block_size=4)
    driver = Driver(workload, [info], LoadSettings(users=1, seed=seed, sessions=1, max_think_s=0.0))
    await driver.start()
    await until(lambda: driver.finished, timeout=20)
    await driver.stop()
    return [r for r in fake.requests if r.get("stream")]


async def test_agent_sessions_ask_for_shorter_answers_and_keep_their_draws(fake: FakeServer) -> None:
    spec = {"shared_prefix_tokens": 100, "first_message_tokens": 30, "steps": 4, "output_tokens": 40,
            "tool_result_tokens": {"dist": "uniform", "min": 20, "max": 60}, "tool_latency_s": 0}  # fmt: skip
    plain = await _requests(fake, prepare(parse_workload(spec, source="t", default_name="t")))
    short_spec = parse_workload(spec, source="t", default_name="t").outputs_scaled(0.5)
    short = await _requests(fake, prepare(short_spec))
    assert [r["max_tokens"] for r in plain] == [40] * 4
    assert [r["max_tokens"] for r in short] == [20] * 4
    assert short[0]["messages"] == plain[0]["messages"]  # the same seed draws the same opening
    # Later prompts hold the shorter answers, and the same tool results: the same roles, the same
    # user turns, assistant turns of half the length.
    last_plain, last_short = plain[-1]["messages"], short[-1]["messages"]
    assert [m["role"] for m in last_short] == [m["role"] for m in last_plain]
    users = [(m, n) for m, n in zip(last_plain, last_short, strict=True) if m["role"] != "assistant"]
    assert all(m == n for m, n in users)
    answers = [(m, n) for m, n in zip(last_plain, last_short, strict=True) if m["role"] == "assistant"]
    assert len(answers) == 3
    assert all(len(chat_ids([n], False)) < len(chat_ids([m], False)) for m, n in answers)


async def test_session_replay_asks_for_scaled_answers_with_the_same_prompts(fake: FakeServer, tmp_path: Path) -> None:
    calls = [(300, 11), (340, 7), (400, 1), (460, 0), (520, 250)]  # (in, out)
    data = {
        "id": "s",
        "block_size": 64,
        "requests": [
            {"t": float(i), "in": n, "out": out, "hash_ids": list(range(1, n // 64 + 1)), "think_time": 0.0}
            for i, (n, out) in enumerate(calls)
        ],
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    plain = await _requests(fake, prepare_workload(str(path)))
    short = await _requests(fake, prepare_workload(str(path), output_scale=0.5))
    assert [r["max_tokens"] for r in plain] == [max(1, out) for _, out in calls]
    assert [r["max_tokens"] for r in short] == [max(1, round(out * 0.5)) for _, out in calls] == [6, 4, 1, 1, 125]
    assert [r["min_tokens"] for r in short] == [r["max_tokens"] for r in short]
    # Each pass of a file has its own marker (the run's nonce), so prompts match in length, not text.
    lengths = [len(chat_ids(r["messages"], True)) for r in plain]
    assert [len(chat_ids(r["messages"], True)) for r in short] == lengths == [n for n, _ in calls]
