"""Mooncake-format trace replay (workloads/README.md): one JSON object per line with `timestamp` (ms),
`input_length`, `output_length` and `hash_ids` (one per 512-token block; equal ids, equal blocks).

Each request becomes one user message made of its blocks' text: equal hash ids give byte-identical
text, so the server sees the trace's real prefix sharing. `scale` multiplies every length and the
block size, so a trace of 12K-token prompts can run on a 4096-token model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from agentx_tui.errors import WorkloadError
from agentx_tui.load.workload.conversation import Conversation, Segment
from agentx_tui.load.workload.spec import Workload
from agentx_tui.load.workload.text import TextMaker

_TRACE_KEY = 1 << 62


@dataclass(frozen=True, slots=True)
class TraceRequest:
    index: int
    timestamp_s: float
    input_length: int
    output_length: int
    hash_ids: tuple[int, ...]


@lru_cache(maxsize=4)
def load_trace(path: str, skip: int = 0, limit: int | None = None) -> tuple[TraceRequest, ...]:
    out: list[TraceRequest] = []
    try:
        with Path(path).open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if number <= skip or not line.strip():
                    continue
                if limit is not None and len(out) >= limit:
                    break
                try:
                    row = json.loads(line)
                    out.append(
                        TraceRequest(
                            index=number - 1,
                            timestamp_s=float(row.get("timestamp", 0)) / 1000.0,
                            input_length=int(row["input_length"]),
                            output_length=int(row["output_length"]),
                            hash_ids=tuple(int(h) for h in row.get("hash_ids", ())),
                        )
                    )
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
                    raise WorkloadError(
                        f"{path}, line {number}: not a Mooncake trace record ({exc!r}); each line needs "
                        "timestamp (ms), input_length, output_length and hash_ids."
                    ) from exc
    except OSError as exc:
        raise WorkloadError(f"Cannot read the trace {path} ({exc.strerror or exc}).") from exc
    if not out:
        raise WorkloadError(f"The trace {path} holds no requests (after skip={skip}, limit={limit}).")
    return tuple(out)


def trace_requests(w: Workload) -> tuple[TraceRequest, ...]:
    if w.trace is None:
        raise WorkloadError(f"Workload '{w.name}' is not a trace replay.")
    return load_trace(w.trace.path, w.trace.skip, w.trace.limit)


def build_request(conv: Conversation, req: TraceRequest, w: Workload, maker: TextMaker) -> int:
    """Fill `conv` with `req`'s blocks; returns the output tokens to ask for."""
    block_tokens = w.trace.block_tokens if w.trace is not None else 512
    block = max(1, round(block_tokens * w.scale))
    tm = conv.tm
    content = round(req.input_length * w.scale)
    content -= tm.message_tokens("user", 0, first=True) + tm.generation_prompt
    content = max(content, 1)
    segments = []
    ids = req.hash_ids or (req.index + (1 << 40),)
    for i, hid in enumerate(ids):
        if content <= 0:
            break
        tokens = content if i == len(ids) - 1 else min(block, content)
        key = _TRACE_KEY + hid
        text, real = maker.text(key, tokens)
        segments.append(Segment(key, text, real))
        content -= tokens
    conv.add("user", segments)
    return max(1, round(req.output_length * w.scale))
