"""The prompt text of one pass of an AgentX session file (workloads/README.md, a contract).

One user message per call, laid out in prompt-token positions, header
included (the recorded blocks covered the whole prompt, template and all):
    [chat header][marker of this pass][block 0][block 1]...[block k-1][tail of this call][trailer+gen]
Block i covers positions ⌊i·b⌋ to ⌊(i+1)·b⌋ (b = the scaled block size), so at scale 1 the blocks
sit exactly where the recorded ones did and a server's 16-token blocks line up with them; the header
and marker take the front of the first block. Equal hash ids give byte-identical text within a pass;
a fresh pass (a recycled file, or the same file replayed by two users) gets a new marker and new
block text, so it shares no cache with any other pass. The prompt is exactly `in` tokens: when the
template's trailer and generation prompt do not fit after the last whole block, the last blocks are
left out (their tokens become tail text) rather than shortened, so a block is always either whole and
shared or not there. Only an `in` smaller than the template and marker themselves comes out longer
(`Conversation.prompt_tokens` says by how much).

Built incrementally: an agent's call mostly repeats its previous call's leading blocks (95% of the
blocks of the shipped files), so each agent's latest prompt is kept and the next one starts from its
longest common run of hash ids (a sub-agent's first call from its parent's latest prompt); only the
blocks after it get text, JSON encoding and prefix hashes (`SingleMessage.fork`). A block's text
depends only on its hash id and its size (its position), so what is reused is exactly what building
from scratch (`segments`) gives.
"""

from __future__ import annotations

import bisect
import math
from array import array

from agentx_tui.load.workload.conversation import Conversation, Segment, SingleMessage
from agentx_tui.load.workload.sessions import SessionCall, SessionSubAgent, SessionTree
from agentx_tui.load.workload.text import TextMaker

_MARKER, _BLOCK, _TAIL = 0x3A55_0001, 0x3A55_0002, 0x3A55_0003
_MARKER_BITS = 48  # a marker tells this many bits' worth of passes apart
_BOUNDS: dict[float, list[int]] = {}  # scaled block size: ⌊i·b⌋ for i = 0, 1, ... (shared by every pass)


class _Latest:
    """An agent's latest prompt: its message and which of its hash ids are whole blocks in it."""

    __slots__ = ("blocks", "ids", "message")

    def __init__(self, ids: array[int], blocks: int, message: SingleMessage) -> None:
        self.ids, self.blocks, self.message = ids, blocks, message


class PassPrompts:
    """The prompts of one pass of `tree` for one model (`maker`); `pass_key` must be new for each pass.

    Memory: the latest prompt of each agent of the tree (its JSON bytes, 24 bytes a block of hashes,
    positions and offsets), a sub-agent's dropped at the parent call that waits for it, so about one
    prompt (the parent's) between sub-agents and one more per sub-agent running."""

    def __init__(self, tree: SessionTree, pass_key: int, maker: TextMaker) -> None:
        self.tree, self.pass_key, self.maker = tree, pass_key, maker
        tm = maker.model
        self._head = tm.header_tokens("user", first=True)
        self._after = tm.message_tokens("user", 0, first=True) - self._head + tm.generation_prompt
        self._marker = _marker_segment(maker, hash((_MARKER, tree.key, pass_key)))
        self._content_start = self._head + self._marker.tokens
        # Block i covers prompt positions bounds[i] to bounds[i + 1].
        self._bounds = _bounds(tree.block_tokens, tree.max_blocks + 1)
        # Blocks before `_first` lie wholly under the header and marker: they have no text of their own.
        self._first = bisect.bisect_right(self._bounds, self._content_start) - 1
        self._opening = SingleMessage(tm)
        self._opening.add(self._marker)
        self._opening.finish()
        # Agents by slot (0: the parent): each call's slot, each slot's parent, who is joined where.
        self._slot: dict[int, int] = {}  # call seq: slot
        self._parent: list[int] = [0]
        self._joined: dict[int, list[int]] = {}  # seq of a call: slots it waits for (their nested ones too)
        self._index(tree, 0)
        self._latest: dict[int, _Latest] = {}

    @property
    def held_bytes(self) -> int:
        """The bytes of the prompts kept for the calls to come (their JSON, points and offsets)."""
        return sum(latest.message.nbytes for latest in self._latest.values())

    def build(self, call: SessionCall) -> tuple[Conversation, int]:
        """The call's conversation (one user message, `call.input_tokens` long) and its output tokens."""
        ids, k = call.hash_ids, self._whole_blocks(call)
        slot = self._slot.get(call.seq, 0)
        for done in self._joined.get(call.seq, ()):  # they have ended: nothing extends their prompts
            self._latest.pop(done, None)
        latest = self._latest.get(slot) or self._latest.get(self._parent[slot])
        shared = _common_run(latest.ids, ids, min(latest.blocks, k)) if latest is not None else 0
        # The marker is segment 0, block i (from `_first` on) segment i - _first + 1.
        start = latest.message if latest is not None and shared > self._first else self._opening
        message = start.fork(1 + max(shared - self._first, 0))
        message.extend_parts(*self._blocks(ids, max(shared, self._first), k), plain=self.maker.json_plain)
        tail = self._tail(call, k)
        if tail is not None:
            message.add(tail)
        conv = message.finish()
        self._latest[slot] = _Latest(ids, k, message)
        return conv, call.output_tokens

    def segments(self, call: SessionCall) -> list[Segment]:
        """The call's content from scratch (what `build` puts together from earlier prompts)."""
        ids, k = call.hash_ids, self._whole_blocks(call)
        segments = [self._marker, *map(Segment, *self._blocks(ids, self._first, k))]
        tail = self._tail(call, k)
        return [*segments, tail] if tail is not None else segments

    def _whole_blocks(self, call: SessionCall) -> int:
        """The most leading blocks that fit whole: the rest of the prompt is the call's own tail."""
        end = call.input_tokens - self._after  # where the content must end, in prompt positions
        return max(bisect.bisect_right(self._bounds, end, 0, len(call.hash_ids) + 1) - 1, 0)

    def _blocks(self, ids: array[int], lo: int, hi: int) -> tuple[list[int], list[str], list[int]]:
        """Blocks `lo` to `hi` (their hash ids in `ids`) as their keys, texts and token counts: a
        block's text is decided by its hash id and its size (its place)."""
        bounds, content_start, text = self._bounds, self._content_start, self.maker.text
        tree_key, pass_key = self.tree.key, self.pass_key
        keys, texts, tokens = [], [], []
        for i in range(lo, hi):
            # The header and marker take the front of the first block with text.
            begin = bounds[i]
            key = hash((_BLOCK, tree_key, pass_key, ids[i]))
            words, real = text(key, bounds[i + 1] - (begin if begin > content_start else content_start))
            keys.append(key)
            texts.append(words)
            tokens.append(real)
        return keys, texts, tokens

    def _tail(self, call: SessionCall, k: int) -> Segment | None:
        tail = call.input_tokens - self._after - max(self._bounds[k], self._content_start)
        if tail <= 0:
            return None
        key = hash((_TAIL, self.tree.key, self.pass_key, call.seq))
        text, real = self.maker.text(key, tail)
        return Segment(key, text, real)

    def _index(self, agent: SessionTree | SessionSubAgent, slot: int) -> None:
        for c in agent.calls:
            self._slot[c.seq] = slot
        for sub in agent.subagents:
            child = len(self._parent)
            self._parent.append(slot)
            first = len(self._parent)
            self._index(sub, child)
            if sub.join_at is not None:
                waits = self._joined.setdefault(agent.calls[sub.join_at].seq, [])
                waits.extend([child, *range(first, len(self._parent))])


def _common_run(a: array[int], b: array[int], n: int) -> int:
    """How many leading ids of `a` and `b` (at most `n`) are equal: slices compared in C, bisected."""
    if a[:n] == b[:n]:
        return n  # the common case: the call extends the previous one
    low, high = 0, n - 1  # a[:low] == b[:low] and a[:high + 1] != b[:high + 1]
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _bounds(block_tokens: float, count: int) -> list[int]:
    """⌊i·b⌋ for i < count at least, kept per block size: a pass does not compute thousands again."""
    bounds = _BOUNDS.setdefault(block_tokens, [])
    if len(bounds) < count:
        bounds.extend(math.floor(i * block_tokens) for i in range(len(bounds), count))
    return bounds


def _marker_segment(maker: TextMaker, key: int) -> Segment:
    """A few of the cheapest pool words spelling `key` in base (how many there are): a pass's marker."""
    tm = maker.model
    cheapest = min(tm.costs)
    digits = [(w, c) for w, c in zip(tm.words, tm.costs, strict=True) if c == cheapest]
    if len(digits) < 2:  # a degenerate pool: spell with every word, whatever each costs
        digits = list(zip(tm.words, tm.costs, strict=True))
    count = max(4, math.ceil(_MARKER_BITS / math.log2(max(len(digits), 2))))
    value = key % len(digits) ** count
    words: list[str] = []
    tokens = 0
    for _ in range(count):
        value, digit = divmod(value, len(digits))
        word, cost = digits[digit]
        words.append(word)
        tokens += cost
    return Segment(key, "".join(words), tokens)
