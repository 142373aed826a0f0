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
"""

from __future__ import annotations

import bisect
import math

from agentx_tui.load.workload.conversation import Conversation, Segment
from agentx_tui.load.workload.session_files import SessionCall, SessionTree
from agentx_tui.load.workload.text import TextMaker

_MARKER, _BLOCK, _TAIL = 0x3A55_0001, 0x3A55_0002, 0x3A55_0003
_MARKER_BITS = 48  # a marker tells this many bits' worth of passes apart
_MIN_CACHE = 256


class PassPrompts:
    """The prompts of one pass of `tree` for one model (`maker`); `pass_key` must be new for each pass.

    Block text is kept in two generations of about one prompt's blocks each (like the CeilingTracker's
    points), so the blocks a call repeats from the previous ones cost a dictionary lookup, not new
    text, while memory stays about two prompts' worth per pass."""

    def __init__(self, tree: SessionTree, pass_key: int, maker: TextMaker) -> None:
        self.tree, self.pass_key, self.maker = tree, pass_key, maker
        tm = maker.model
        self._head = tm.header_tokens("user", first=True)
        self._after = tm.message_tokens("user", 0, first=True) - self._head + tm.generation_prompt
        self._marker = _marker_segment(maker, hash((_MARKER, tree.key, pass_key)))
        self._content_start = self._head + self._marker.tokens
        # Block i covers prompt positions bounds[i] to bounds[i + 1].
        self._bounds = [math.floor(i * tree.block_tokens) for i in range(tree.max_blocks + 1)]
        self._generation = max(_MIN_CACHE, tree.max_blocks)
        self._newer: dict[int, tuple[int, Segment]] = {}  # hash id: (tokens asked for, its block)
        self._older: dict[int, tuple[int, Segment]] = {}

    def build(self, call: SessionCall) -> tuple[Conversation, int]:
        """The call's conversation (one user message, `call.input_tokens` long) and its output tokens."""
        end = call.input_tokens - self._after  # where the content must end, in prompt positions
        ids, bounds, start = call.hash_ids, self._bounds, self._content_start
        # The most leading blocks that fit whole: the rest of the prompt is the call's own tail.
        k = max(bisect.bisect_right(bounds, end, 0, len(ids) + 1) - 1, 0)
        segments = [self._marker]
        for i in range(k):
            low, high = bounds[i], bounds[i + 1]
            if low < start:  # the header and marker take the front of the first block(s)
                low = start
                if high <= low:
                    continue
            found = self._newer.get(ids[i])  # the common case, inline: a block the last prompts had
            if found is not None and found[0] == high - low:
                segments.append(found[1])
            else:
                segments.append(self._block_segment(ids[i], high - low))
        tail = end - max(bounds[k], start)
        if tail > 0:
            key = hash((_TAIL, self.tree.key, self.pass_key, call.seq))
            text, real = self.maker.text(key, tail)
            segments.append(Segment(key, text, real))
        conv = Conversation(self.maker.model)
        conv.add("user", segments)
        return conv, call.output_tokens

    def _block_segment(self, hash_id: int, tokens: int) -> Segment:
        found = self._newer.get(hash_id) or self._older.get(hash_id)
        if found is not None and found[0] == tokens:
            seg = found[1]
        else:  # new, or the id met at another position (not in the shipped files): text of its size
            key = hash((_BLOCK, self.tree.key, self.pass_key, hash_id))
            text, real = self.maker.text(key, tokens)
            seg = Segment(key, text, real)
        if len(self._newer) >= self._generation:
            self._newer, self._older = {}, self._newer
        self._newer[hash_id] = (tokens, seg)
        return seg


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
