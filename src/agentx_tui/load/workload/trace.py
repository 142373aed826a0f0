"""`kind: trace`: a Mooncake-format trace (workloads/README.md), one JSON object per line with `timestamp`
(ms), `input_length`, `output_length` and `hash_ids` (one per `block_tokens`-token block; equal ids,
equal blocks).

Each request becomes one user message made of its blocks' text: equal hash ids give byte-identical
text, so the server sees the trace's real prefix sharing. Lengths and the block size follow the one
scaling rule, and answers the output scale too (load/workload/base.py). The loop that sends them is
load/sending/kinds/trace.py.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field

from agentx_tui.errors import WorkloadError
from agentx_tui.load.workload.base import (
    Prepared,
    Spec,
    WorkloadBase,
    WorkloadKind,
    output_length,
    p95,
    scaled_length,
)
from agentx_tui.load.workload.conversation import Conversation, Segment
from agentx_tui.load.workload.text import TextMaker

_TRACE_KEY = 1 << 62


class TraceReplay(Spec):
    """Where the trace is and how to replay it: `timed` (at its timestamps ÷ `speed`) or `closed`
    (each user sends the next request when its last one ended)."""

    path: str
    mode: Literal["timed", "closed"] = "timed"
    speed: float = Field(default=1.0, gt=0)
    block_tokens: int = Field(default=512, ge=1)
    skip: int = Field(default=0, ge=0)
    limit: int | None = Field(default=None, ge=1)


class TraceSpec(WorkloadBase):
    kind: Literal["trace"]
    trace: TraceReplay

    @classmethod
    def from_data(cls, path: Path) -> TraceSpec | None:
        """A `.jsonl` file is a Mooncake trace, replayed as it is."""
        if path.is_dir() or path.suffix != ".jsonl":
            return None
        return cls(
            name=path.name, description=f"replay of trace {path}", kind="trace", trace=TraceReplay(path=str(path))
        )

    def relative_to(self, folder: Path) -> TraceSpec:
        if Path(self.trace.path).is_absolute():
            return self
        return self.model_copy(update={"trace": self.trace.model_copy(update={"path": str(folder / self.trace.path)})})


@dataclass(frozen=True, slots=True)
class TraceRequest:
    index: int  # line number − 1: the request's place in the whole file
    timestamp_s: float
    input_tokens: int  # at the workload's scale
    output_tokens: int  # at its scale × its output scale
    hash_ids: tuple[int, ...]
    recorded_in: int
    recorded_out: int


@lru_cache(maxsize=4)
def load_trace(path: str, skip: int = 0, limit: int | None = None) -> tuple[TraceRequest, ...]:
    """The trace's requests as recorded (scale 1); every problem is one `WorkloadError`."""
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
                    tokens_in, tokens_out = int(row["input_length"]), int(row["output_length"])
                    out.append(
                        TraceRequest(
                            index=number - 1,
                            timestamp_s=float(row.get("timestamp", 0)) / 1000.0,
                            input_tokens=tokens_in,
                            output_tokens=max(1, tokens_out),
                            hash_ids=tuple(int(h) for h in row.get("hash_ids", ())),
                            recorded_in=tokens_in,
                            recorded_out=tokens_out,
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


@dataclass(frozen=True)
class PreparedTrace(Prepared[TraceSpec]):
    requests: tuple[TraceRequest, ...]  # at `spec.scale`

    @classmethod
    def load(cls, spec: TraceSpec) -> PreparedTrace:
        recorded = load_trace(spec.trace.path, spec.trace.skip, spec.trace.limit)
        return cls(spec, _at_scale(recorded, spec))

    @property
    def block_tokens(self) -> float:
        """The scaled block size (not rounded: the scaling rule)."""
        return self.spec.trace.block_tokens * self.spec.scale

    def context_needed(self) -> int:
        # A replay fits its 95th percentile: a few long outliers are skipped (and counted), not fitted,
        # or one 450 K-token request would shrink all the others a hundredfold.
        return p95([r.input_tokens + r.output_tokens for r in self.requests])

    def scaled(self, factor: float) -> PreparedTrace:
        spec = self.spec.scaled(factor)
        return PreparedTrace(spec, _at_scale(self.requests, spec))

    def check_fits(self, max_model_len: int, scale: float | None) -> None:
        """Nothing to refuse: a request too long for the model is skipped and counted, the rest run."""


KIND = WorkloadKind(TraceSpec, PreparedTrace.load)


def _at_scale(requests: tuple[TraceRequest, ...], spec: TraceSpec) -> tuple[TraceRequest, ...]:
    """The requests with their lengths at `spec`'s scale (answers at its output scale too), always from
    the recorded ones (the scaling rule)."""
    return tuple(
        replace(
            r,
            input_tokens=scaled_length(r.recorded_in, spec.scale),
            output_tokens=output_length(r.recorded_out, spec.scale, spec.output_scale),
        )
        for r in requests
    )


def build_request(conv: Conversation, req: TraceRequest, block_tokens: float, maker: TextMaker) -> int:
    """Fill `conv` with `req`'s blocks; returns the output tokens to ask for.

    Block i covers content tokens ⌊i·b⌋ to ⌊(i+1)·b⌋ (b: the scaled block size, not rounded); the last
    id's block ends where the prompt does."""
    tm = conv.tm
    content = req.input_tokens - tm.message_tokens("user", 0, first=True) - tm.generation_prompt
    content = max(content, 1)
    segments = []
    ids = req.hash_ids or (req.index + (1 << 40),)
    start = 0
    for i, hid in enumerate(ids):
        if start >= content:
            break
        end = content if i == len(ids) - 1 else min(math.floor((i + 1) * block_tokens), content)
        if end <= start:
            continue
        key = _TRACE_KEY + hid
        text, real = maker.text(key, end - start)
        segments.append(Segment(key, text, real))
        start = end
    conv.add("user", segments)
    return req.output_tokens
