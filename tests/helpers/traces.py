"""Small session files and traces the tests make themselves, so that a bare clone tests the replay.

`session_tree` is one AgentX session file (workloads/README.md) with what the replay rules are about:
a context that grows call after call (each call's hash ids extend the previous call's), sub-agents
sharing the parent's first blocks, two of them in parallel (one with a null `duration_ms`), one joined
late (a parent call runs beside it), one never joined (after the last parent call), a call without
`think_time`, and every sub-agent's `t` its end on the parent's clock. Same seed, same bytes.

`write_mooncake_trace` is a Mooncake-format trace (one JSON object a line) in the shape of the public
conversation trace's first requests: block 0 shared by every request, and one far longer than the rest.

The shared public traces (../shared/traces, not shipped) stay for the checks about the real data.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BLOCK = 64
SUBAGENTS_PER_TREE = 4  # two in parallel, one joined late, one never joined


@dataclass
class _Ids:
    """Hash ids of one file: each new block gets the next id (the corpus's `local` scope)."""

    last: int = 0

    def new(self, count: int) -> list[int]:
        self.last += count
        return list(range(self.last - count + 1, self.last + 1))


@dataclass
class _Agent:
    """One agent's calls; each prompt is the previous one's blocks and then new ones."""

    rng: random.Random
    ids: _Ids
    blocks: list[int] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    t: float = 0.0  # when its previous call ended, on its own clock

    def call(self, new_blocks: int, *, think: float | None, t: float | None = None) -> dict[str, Any]:
        self.blocks = self.blocks + self.ids.new(new_blocks)
        api = round(self.rng.uniform(0.5, 4.0), 3)
        start = round(self.t + (think or 0.0) if t is None else t, 3)
        request: dict[str, Any] = {
            "t": start,
            "type": "n",
            "model": "model-a",
            "in": len(self.blocks) * BLOCK + self.rng.randrange(BLOCK),  # a partial block of its own
            "out": self.rng.randrange(20, 400),
            "hash_ids": list(self.blocks),
            "api_time": api,
        }
        if think is not None:
            request["think_time"] = think
        self.requests.append(request)
        self.t = start + api
        return request

    def think(self) -> float:
        return round(self.rng.uniform(0.5, 6.0), 3)


def _subagent(parent: _Agent, agent_id: str, spawned: float, calls: int) -> tuple[dict[str, Any], float]:
    """A sub-agent spawned at `spawned` on the parent's clock: its entry (`t` = its end) and that end."""
    agent = _Agent(parent.rng, parent.ids, blocks=parent.blocks[:8])  # the parent's system prompt
    agent.call(parent.rng.randrange(4, 12), think=0.0, t=0.0)  # smaller than the parent, as recorded
    for _ in range(calls - 1):
        agent.call(parent.rng.randrange(1, 5), think=agent.think())
    end = round(spawned + agent.t, 3)
    entry = {
        "t": end,
        "type": "subagent",
        "agent_id": agent_id,
        "subagent_type": "Explore",
        "duration_ms": round(agent.t * 1000),
        "status": "completed",
        "models": ["model-b"],
        "requests": agent.requests,
    }
    return entry, end


def session_tree(seed: int = 0, *, parent_calls: int = 10) -> dict[str, Any]:
    """One session file's JSON: `parent_calls` parent calls (at least 6) and four sub-agents."""
    assert parent_calls >= 6
    rng = random.Random(seed)
    parent = _Agent(rng, _Ids())
    parent.call(rng.randrange(40, 60), think=0.0)  # system prompt, tools and the first message
    requests: list[dict[str, Any]] = parent.requests
    for k in range(1, parent_calls):
        spawned = parent.t + round(rng.uniform(0.1, 1.0), 3)
        if k == 2:  # after call 1: two sub-agents in parallel, joined by call 2; one's span unknown
            a, end_a = _subagent(parent, "agent_001", spawned, 3)
            b, end_b = _subagent(parent, "agent_002", spawned, 2)
            b["duration_ms"] = None
            requests += sorted([a, b], key=lambda s: s["t"])
            parent.call(rng.randrange(4, 12), think=parent.think(), t=max(end_a, end_b) + parent.think())
        elif k == 4:  # after call 3: one that call 4 runs beside, joined by call 5
            late, end = _subagent(parent, "agent_003", spawned, 6)
            requests.append(late)
            parent.call(rng.randrange(4, 12), think=0.3)
            assert parent.t < end, "the late sub-agent must outlast call 4"
        elif k == 5:
            parent.call(rng.randrange(4, 12), think=None, t=max(parent.t, end) + 0.5)  # no think_time: 0
        else:
            parent.call(rng.randrange(8, 30), think=parent.think())
    never, _ = _subagent(parent, "agent_004", parent.t + 0.4, 2)  # no parent call after it
    requests.append(never)
    return {"id": f"tree_{seed:04d}", "models": ["model-a"], "block_size": BLOCK, "hash_id_scope": "local",
            "requests": requests}  # fmt: skip


def write_session_tree(folder: Path, seed: int = 0, *, parent_calls: int = 10) -> Path:
    """`session_tree(seed)` as `folder/tree_<seed>.json`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"tree_{seed:04d}.json"
    path.write_text(json.dumps(session_tree(seed, parent_calls=parent_calls)), encoding="utf-8")
    return path


def write_session_corpus(folder: Path, count: int = 4, *, parent_calls: int = 10) -> Path:
    """A folder of `count` session files (seeds 0 … count − 1), as `-w FOLDER` reads them."""
    for seed in range(count):
        write_session_tree(folder, seed, parent_calls=parent_calls + seed)
    return folder


def write_mooncake_trace(folder: Path, rows: int = 48, seed: int = 0) -> Path:
    """`rows` first turns of a conversation trace (512-token blocks, timestamps in ms) as `trace.jsonl`:
    every request shares block 0 (the system prompt) and nothing else, as the public trace's first
    requests do; request 7 is ~90 K tokens, far longer than the rest."""
    rng = random.Random(seed)
    ids = _Ids()
    lines = []
    for i in range(rows):
        blocks = [0, *ids.new(175 if i == 7 else rng.randrange(1, 40))]
        row = {
            "timestamp": i * 300,
            "input_length": (len(blocks) - 1) * 512 + rng.randrange(1, 512),
            "output_length": rng.randrange(1, 900),
            "hash_ids": blocks,
        }
        lines.append(json.dumps(row))
    path = folder / "trace.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
