"""A session's history, serialised incrementally, with the prefix points the ceiling needs.

The messages array is kept as already-encoded JSON (`bytearray`), so building step 200's request body
costs about the bytes it sends: one `json.dumps` of the new message and one join. Alongside, every
place where two prompts can share a prefix is a *point*: a chained hash of all content before it and
the prompt-token position it sits at. Two prompts that share a point hash share every token before
it, which is what a perfect prefix cache can serve (docs/metrics.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentx_tui.load.workload.text import TokenModel

_END = 0x5EED_E17D
_GEN = 0x6E17_A5E7


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of message content whose text is fully decided by `key` (equal keys, equal text)."""

    key: int
    text: str
    tokens: int


@dataclass
class Conversation:
    tm: TokenModel
    tokens: int = 0  # prompt tokens of the messages so far (no generation prompt)
    messages: int = 0
    points: list[tuple[int, int]] = field(default_factory=list)  # (chained hash, token position)
    registered: int = 0  # points already handed to the CeilingTracker
    _json: bytearray = field(default_factory=bytearray)
    _hash: int = 0

    def add(self, role: str, segments: Sequence[Segment], *, extra: dict[str, object] | None = None) -> None:
        first = self.messages == 0
        position = self.tokens + self.tm.header_tokens(role, first=first)
        if role == "assistant":
            # The previous prompt ended with the generation prompt; the answer's header is that text.
            self.points.append((hash((self._hash, _GEN)), self.tokens + self.tm.generation_prompt))
        h = hash((self._hash, hash(role)))
        # The role's header is shared by every prompt that goes on with the same role: a cache block
        # that ends inside it is served too (without this point the ceiling fell one block short).
        self.points.append((h, position))
        for seg in segments:
            position += seg.tokens
            h = hash((h, seg.key, seg.tokens))
            self.points.append((h, position))
        content = sum(seg.tokens for seg in segments)
        self.tokens += self.tm.message_tokens(role, content, first=first)
        self._hash = hash((h, _END))
        self.points.append((self._hash, self.tokens))
        message: dict[str, object] = {"role": role, "content": "".join(seg.text for seg in segments)}
        if extra:
            message.update(extra)
        if self._json:
            self._json += b","
        self._json += json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
        self.messages += 1

    def adjust(self, delta: int) -> None:
        """Correct the running token count (echoed answers whose length the server reported)."""
        self.tokens += delta

    @property
    def prompt_tokens(self) -> int:
        """What the next request's prompt costs: the history plus the generation prompt."""
        return self.tokens + self.tm.generation_prompt

    def body(self, head: bytes, tail: bytes) -> bytes:
        """`head` ends with `"messages":[`, `tail` starts with `]`."""
        return b"".join((head, self._json, tail))


class CeilingTracker:
    """Prompt tokens a perfect unbounded prefix cache per endpoint would serve, block-aligned.

    "Unbounded" within a memory bound: the prefix points seen are kept in two generations per endpoint;
    when the newer one holds `max_points // 2` points it becomes the older one and the oldest is
    forgotten, and a point found in the older generation is carried into the newer. So the points in
    use stay (an LRU in effect) while a 24-hour run's memory stays flat (~60 bytes a point)."""

    def __init__(self, block_size: int = 16, max_points: int = 400_000) -> None:
        self.block_size = block_size
        self._generation_size = max(1, max_points // 2)
        self._seen: dict[str, tuple[set[int], set[int]]] = {}  # endpoint: (newer, older)

    def observe(self, endpoint: str, conv: Conversation) -> int:
        """Register the prompt `conv` is about to send; return its cacheable tokens."""
        newer, older = self._seen.get(endpoint) or (set(), set())
        if len(newer) >= self._generation_size:
            newer, older = set(), newer
        self._seen[endpoint] = (newer, older)

        def seen(h: int) -> bool:
            if h in newer:
                return True
            if h in older:
                newer.add(h)
                return True
            return False

        cacheable = 0
        points = conv.points
        whole = hash((conv._hash, _GEN))
        if seen(whole):
            cacheable = conv.prompt_tokens
        else:
            for h, position in reversed(points):
                if seen(h):
                    cacheable = position
                    break
        for h, _ in points[conv.registered :]:
            newer.add(h)
        conv.registered = len(points)
        newer.add(whole)
        # A cache must leave the last prompt token to compute, and serves whole blocks only.
        cacheable = min(cacheable, conv.prompt_tokens - 1)
        return max(cacheable, 0) // self.block_size * self.block_size
