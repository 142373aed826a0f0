"""A session's history, serialised incrementally, with the prefix points the ceiling needs.

The messages array is kept as already-encoded JSON (`bytearray`), so building step 200's request body
costs about the bytes it sends: one `json.dumps` of the new message and one join. Alongside, every
place where two prompts can share a prefix is a *point*: a chained hash of all content before it and
the prompt-token position it sits at. Two prompts that share a point hash share every token before
it, which is what a perfect prefix cache can serve (docs/metrics.md).

A prompt of one long user message that mostly repeats an earlier one (a replayed session's calls) is
built by `SingleMessage`: it starts from the leading segments of an earlier message (their JSON bytes
and their points, as they were) and encodes and hashes only what is new. Its bytes and points are
exactly what `Conversation.add` gives for the same segments (a test holds them equal).
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # how json.dumps(..., ensure_ascii=False) writes a string
from typing import NamedTuple

from agentx_tui.load.workload.text import TokenModel
from agentx_tui.measure import SeenPrefixes, cacheable_tokens

_END = 0x5EED_E17D
_GEN = 0x6E17_A5E7
_CLOSE = b'"}'  # after a SingleMessage's content


def _int64s() -> array[int]:
    return array("q")  # Python's hashes, token positions and byte offsets: signed 64-bit integers


def _role_link(h: int, role: str) -> int:
    return hash((h, hash(role)))


def _link(h: int, seg: Segment) -> int:
    return hash((h, seg.key, seg.tokens))


def _ended(h: int) -> int:
    return hash((h, _END))


def _encoded(text: str) -> bytes:
    """`text` as it sits inside a JSON string (what json.dumps(..., ensure_ascii=False) writes)."""
    return encode_basestring(text)[1:-1].encode()


class Segment(NamedTuple):
    """A piece of message content whose text is fully decided by `key` (equal keys, equal text). A
    named tuple: a replayed session's prompt makes a hundred a call, and a frozen dataclass costs
    three times as much to make."""

    key: int
    text: str
    tokens: int


@dataclass
class Conversation:
    tm: TokenModel
    tokens: int = 0  # prompt tokens of the messages so far (no generation prompt)
    messages: int = 0
    # Every point as (chained hash, token position), in two arrays: a point costs 16 bytes, not a tuple,
    # and the CeilingTracker takes a prompt's thousands of hashes in one C call.
    point_hashes: array[int] = field(default_factory=_int64s)
    point_positions: array[int] = field(default_factory=_int64s)
    registered: int = 0  # points already handed to the CeilingTracker
    _json: bytearray = field(default_factory=bytearray)
    _hash: int = 0

    def add(self, role: str, segments: Sequence[Segment], *, extra: dict[str, object] | None = None) -> None:
        first = self.messages == 0
        position = self.tokens + self.tm.header_tokens(role, first=first)
        hashes, positions = self.point_hashes, self.point_positions
        if role == "assistant":
            # The previous prompt ended with the generation prompt; the answer's header is that text.
            hashes.append(hash((self._hash, _GEN)))
            positions.append(self.tokens + self.tm.generation_prompt)
        h = _role_link(self._hash, role)
        # The role's header is shared by every prompt that goes on with the same role: a cache block
        # that ends inside it is served too (without this point the ceiling fell one block short).
        hashes.append(h)
        positions.append(position)
        for seg in segments:
            position += seg.tokens
            h = _link(h, seg)
            hashes.append(h)
            positions.append(position)
        content = sum(seg.tokens for seg in segments)
        self.tokens += self.tm.message_tokens(role, content, first=first)
        self._hash = _ended(h)
        hashes.append(self._hash)
        positions.append(self.tokens)
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


class SingleMessage:
    """A conversation of one user message, built segment by segment, then `finish`ed.

    `fork(n)` of a finished one starts another whose first `n` segments are this one's: their JSON is
    a slice of this one's bytes and their points are copied, so a prompt that repeats most of an
    earlier one costs the encoding and hashing of its new segments and one join of the bytes."""

    __slots__ = (
        "_ends",
        "_h",
        "_open",
        "_pieces",
        "_position",
        "_registered",
        "_size",
        "conversation",
        "hashes",
        "positions",
        "tm",
    )

    def __init__(self, tm: TokenModel) -> None:
        self.tm = tm
        opening = json.dumps({"role": "user", "content": ""}, ensure_ascii=False, separators=(",", ":"))
        head = opening.encode()[: -len(_CLOSE)]
        self._pieces: list[bytes | memoryview] = [head]
        self._size = self._open = len(head)
        self._ends = _int64s()  # byte offset in the message just after each segment's text
        self._h = _role_link(0, "user")
        self._position = tm.header_tokens("user", first=True)
        self.hashes, self.positions = _int64s(), _int64s()
        self.hashes.append(self._h)
        self.positions.append(self._position)
        self.conversation: Conversation | None = None  # once finished
        self._registered = 0  # leading points the CeilingTracker already has (`Conversation.registered`)

    @property
    def nbytes(self) -> int:
        """What it holds once finished: its JSON, and 24 bytes a segment of points and offsets."""
        message = len(self.conversation._json) if self.conversation is not None else self._size
        return message + sum(a.itemsize * len(a) for a in (self._ends, self.hashes, self.positions))

    def add(self, seg: Segment) -> None:
        self.extend_parts((seg.key,), (seg.text,), (seg.tokens,))

    def extend(self, segments: Sequence[Segment]) -> None:
        """`add` each of `segments`, in order."""
        self.extend_parts([s.key for s in segments], [s.text for s in segments], [s.tokens for s in segments])

    def extend_parts(
        self, keys: Sequence[int], texts: Sequence[str], tokens: Sequence[int], *, plain: bool = False
    ) -> None:
        """`extend` by segments given as their keys, texts and token counts: a prompt's new blocks in
        one call, with no `Segment` made for each (a replayed session's call has a hundred). `plain`:
        the texts are known to need no JSON escaping (`TextMaker.json_plain`)."""
        pieces, ends, hashes, positions = self._pieces, self._ends, self.hashes, self.positions
        size, position, h = self._size, self._position, self._h
        text = "".join(texts)
        encoded = text.encode() if plain else _encoded(text)
        # Nothing escaped, all ASCII (the word pool's text): each segment's bytes are its characters, so
        # the segments are encoded at once, not one call each.
        whole = len(encoded) == len(text)
        if whole:
            pieces.append(encoded)
        for key, piece, count in zip(keys, texts, tokens, strict=True):
            if whole:
                size += len(piece)
            else:
                encoded = _encoded(piece)
                pieces.append(encoded)
                size += len(encoded)
            ends.append(size)
            position += count
            h = hash((h, key, count))  # `_link`, inline: this loop runs a hundred times a call
            hashes.append(h)
            positions.append(position)
        self._size, self._position, self._h = size, position, h

    def finish(self) -> Conversation:
        """The conversation of this message (its bytes joined once); nothing may be added after."""
        if self.conversation is not None:
            return self.conversation
        self._pieces.append(_CLOSE)
        message = bytearray().join(self._pieces)
        self._pieces = []  # drops the slice of the message this one was forked from
        content = self._position - self.positions[0]
        tokens = self.tm.message_tokens("user", content, first=True)
        end = _ended(self._h)
        self.hashes.append(end)
        self.positions.append(tokens)
        self.conversation = Conversation(
            self.tm, tokens=tokens, messages=1, point_hashes=self.hashes, point_positions=self.positions,
            registered=self._registered, _json=message, _hash=end,
        )  # fmt: skip
        return self.conversation

    def fork(self, n: int) -> SingleMessage:
        """A new message that starts with the first `n` segments of this finished one."""
        if self.conversation is None or not 0 <= n <= len(self._ends):
            raise ValueError(f"fork({n}) of a message that is unfinished or has {len(self._ends)} segments")
        other = SingleMessage.__new__(SingleMessage)
        other.tm, other.conversation, other._open = self.tm, None, self._open
        other._size = self._ends[n - 1] if n else self._open
        other._pieces = [memoryview(self.conversation._json)[: other._size]]
        other._ends = self._ends[:n]
        other.hashes, other.positions = self.hashes[: n + 1], self.positions[: n + 1]
        other._h, other._position = other.hashes[n], other.positions[n]
        # The points it shares with this one went to the CeilingTracker with it (a session's prompts go
        # to one server): only its new points are handed over again.
        other._registered = min(self.conversation.registered, n + 1)
        return other


class CeilingTracker:
    """Prompt tokens a perfect unbounded prefix cache per endpoint would serve, block-aligned.

    "Unbounded" within a memory bound: the prefix points seen are kept per endpoint in `SeenPrefixes`'
    two generations (`max_points` in all), so the points in use stay while a 24-hour run's memory
    stays flat."""

    def __init__(self, block_size: int = 16, max_points: int = 400_000) -> None:
        self.block_size = block_size
        self._max_points = max_points
        self._seen: dict[str, SeenPrefixes] = {}  # by endpoint

    def observe(self, endpoint: str, conv: Conversation) -> int:
        """Register the prompt `conv` is about to send; return its cacheable tokens."""
        seen = self._seen.get(endpoint)
        if seen is None:
            seen = self._seen[endpoint] = SeenPrefixes(self._max_points)
        seen.turn()
        shared = 0
        hashes = conv.point_hashes
        whole = hash((conv._hash, _GEN))
        known = conv.registered  # its leading points this tracker already has (an earlier prompt's too)
        new = hashes[known:] if known else hashes
        if seen.seen(whole):
            shared = conv.prompt_tokens
        else:  # its longest prefix seen: from its last point back; in C while none of its new ones was
            last = len(hashes) - 1 if not seen.none_seen(new) else known - 1
            for j in range(last, -1, -1):
                if seen.seen(hashes[j]):
                    shared = conv.point_positions[j]
                    break
        # (Its known points are not handed over again: like a conversation's earlier messages, they stay
        # in the generation they went into.)
        seen.add(new)
        conv.registered = len(hashes)
        seen.newer.add(whole)
        return cacheable_tokens(shared, conv.prompt_tokens, self.block_size)
