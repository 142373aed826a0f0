"""Paged KV cache with prefix caching, after vLLM V1's ``BlockPool`` / ``KVCacheManager``.

- A fixed pool of blocks of ``block_size`` tokens. Block 0 is the null block vLLM reserves, so
  ``num_blocks - 1`` are usable and usage = 1 − free / (num_blocks − 1), as vLLM reports it.
- Every *full* block of a sequence gets a chained hash: hash(previous block's hash, its tokens), so a
  block hash identifies the whole prefix up to and including that block.
- Freed blocks keep their hash and stay findable until reused: the free queue is an LRU (eviction from
  its head), and a request's blocks are freed tail first so that a prefix outlives its suffixes.
- A cache lookup returns the longest run of cached leading blocks, but never the whole prompt: the last
  prompt token must be computed to produce logits (vLLM's ``(num_tokens - 1) // block_size`` rule).
- With a CPU KV tier (sim/offload.py), a cached block the pool reclaims spills to it, and a lookup goes
  on there where the GPU's cached blocks end (`find_offloaded`).
- KV residency, as vLLM's ``--kv-cache-metrics`` records it (`BlockResidency`, every block sampled):
  when a block is allocated, each prefix-cache hit on it, and when its cached content is evicted.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import cast

from agentx_tui.sim.offload import CpuTier

# vLLM keeps a block's last few access times (`BlockMetricsState.access_history`); its reuse gaps are
# the gaps between them.
ACCESS_HISTORY = 4


@dataclass(frozen=True, slots=True)
class Eviction:
    """One evicted block's residency, as vLLM's `KVCacheEvictionEvent` reports it (seconds)."""

    lifetime_s: float
    idle_s: float
    reuse_gaps_s: tuple[float, ...]


class BlockResidency:
    """vLLM's `KVCacheMetricsCollector` for every block (its sample rate 1): a block's birth and its
    recent accesses, and an `Eviction` when its cached content is evicted (drained by the engine)."""

    def __init__(self, num_blocks: int) -> None:
        self._born = [0.0] * num_blocks
        self._last = [0.0] * num_blocks
        self._accesses: list[list[float]] = [[] for _ in range(num_blocks)]
        self.evictions: list[Eviction] = []

    def allocated(self, block_id: int, now: float) -> None:
        self._born[block_id] = self._last[block_id] = now
        self._accesses[block_id] = []

    def accessed(self, block_id: int, now: float) -> None:
        self._last[block_id] = now
        history = self._accesses[block_id]
        history.append(now)
        if len(history) > ACCESS_HISTORY:
            del history[0]

    def evicted(self, block_id: int, now: float) -> None:
        history = self._accesses[block_id]
        gaps = tuple(later - earlier for earlier, later in pairwise(history))
        self.evictions.append(Eviction(now - self._born[block_id], now - self._last[block_id], gaps))

    def drain(self) -> list[Eviction]:
        out, self.evictions = self.evictions, []
        return out


def chain_hashes(parent: int, tokens: Sequence[int], block_size: int, out: list[int]) -> int:
    """Append the chained hash of each full block of ``tokens`` to ``out``, the first one chained to
    ``parent`` (0 at the start of a sequence); returns the last hash appended (``parent`` if none)."""
    for start in range(0, len(tokens) - block_size + 1, block_size):
        parent = hash((parent, *tokens[start : start + block_size]))
        out.append(parent)
    return parent


@dataclass(frozen=True, slots=True)
class PromptBlocks:
    """A prompt as the cache sees it: its length, the chained hashes of its full blocks and the tokens
    after them. Built incrementally for chat histories (`prompts.ChatPrompts`), so that a 100 K-token
    history is not re-tokenised and re-hashed every turn."""

    num_tokens: int
    hashes: list[int]
    tail: list[int]  # the last ``num_tokens % block_size`` tokens


@dataclass(slots=True)
class _Block:
    ref: int = 0
    hash: int | None = None


@dataclass(slots=True)
class KVSeq:
    """The per-request cache state the manager keeps (embedded in the scheduler's request).

    ``tokens`` holds the sequence from token ``offset`` on; the tokens before it are known only by
    their block hashes (``offset`` is a multiple of the block size, and ``hashes`` covers it)."""

    tokens: list[int]
    blocks: list[int] = field(default_factory=list)
    hashes: list[int] = field(default_factory=list)
    num_cached_blocks: int = 0
    offset: int = 0

    @classmethod
    def from_prompt(cls, prompt: PromptBlocks) -> KVSeq:
        return cls(tokens=list(prompt.tail), hashes=list(prompt.hashes), offset=prompt.num_tokens - len(prompt.tail))

    @property
    def num_tokens(self) -> int:
        return self.offset + len(self.tokens)

    def reset(self) -> None:
        self.blocks = []
        self.num_cached_blocks = 0


class KVCacheManager:
    def __init__(
        self,
        num_blocks: int,
        block_size: int,
        *,
        enable_prefix_caching: bool = True,
        offload: CpuTier | None = None,
        residency: bool = True,
    ) -> None:
        if num_blocks < 2:
            raise ValueError("the KV cache needs at least 2 blocks (one is the null block)")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.enable_prefix_caching = enable_prefix_caching
        self._blocks = [_Block() for _ in range(num_blocks)]
        self._free: OrderedDict[int, None] = OrderedDict((i, None) for i in range(1, num_blocks))
        self._cached: dict[int, int] = {}
        self.evictions = 0
        self.offload = offload
        self.residency = BlockResidency(num_blocks) if residency else None
        self.now = 0.0  # the engine's clock, set by the scheduler each step (residency times)

    @property
    def num_free_blocks(self) -> int:
        return len(self._free)

    @property
    def usage(self) -> float:
        return 1.0 - len(self._free) / (self.num_blocks - 1)

    @property
    def num_cached_blocks(self) -> int:
        return len(self._cached)

    def _update_hashes(self, seq: KVSeq, upto_tokens: int) -> None:
        bs = self.block_size
        hashes = seq.hashes
        done = len(hashes)
        if upto_tokens // bs <= done:
            return
        start = done * bs - seq.offset
        chain_hashes(hashes[-1] if hashes else 0, seq.tokens[start : upto_tokens - seq.offset], bs, hashes)

    def find_cached_prefix(self, seq: KVSeq) -> list[int]:
        """Block ids of the longest cached prefix of ``seq`` (not yet referenced)."""
        if not self.enable_prefix_caching:
            return []
        limit = (seq.num_tokens - 1) // self.block_size
        self._update_hashes(seq, limit * self.block_size)
        # A request waiting for blocks is looked up again every step (as in vLLM), and a long context
        # has thousands of blocks: the lookups run in C (`map`), in chunks that double in size so that
        # an early miss stays cheap.
        get, hashes = self._cached.get, seq.hashes
        hit: list[int] = []
        start, size = 0, 64
        while start < limit:
            chunk = list(map(get, hashes[start : min(limit, start + size)]))
            if None in chunk:
                hit += cast(list[int], chunk[: chunk.index(None)])
                break
            hit += cast(list[int], chunk)
            start += size
            size *= 2
        return hit

    def find_offloaded(self, seq: KVSeq, start: int) -> int:
        """How many blocks of ``seq``'s prompt, from block `start` on (where its GPU hits end), the CPU
        tier holds; never the last prompt token's block (see `find_cached_prefix`)."""
        if self.offload is None or not self.enable_prefix_caching:
            return 0
        limit = (seq.num_tokens - 1) // self.block_size
        if start >= limit:
            return 0
        self._update_hashes(seq, limit * self.block_size)
        return self.offload.lookup(seq.hashes, start, limit)

    def allocate(self, seq: KVSeq, num_computed: int, num_new_tokens: int, computed: list[int] | None = None) -> bool:
        """Reserve blocks so that ``seq`` holds ``num_computed + num_new_tokens`` tokens, where
        ``num_computed`` counts the prefix-cache hits ``computed`` of a request being admitted. False,
        and no change, when the pool cannot supply them."""
        computed = computed or []
        have = len(seq.blocks) + len(computed)
        needed = -(-(num_computed + num_new_tokens) // self.block_size) - have
        # Hits sitting in the free queue are about to be taken out of it, so they cannot be evicted.
        # (Counted only when it decides the answer: a request waiting for blocks comes back every step.)
        free = len(self._free)
        if needed > free:
            return False
        if needed > free - len(computed):
            blocks = self._blocks
            if needed > free - sum(1 for b in computed if blocks[b].ref == 0):
                return False
        residency, now = self.residency, self.now
        for block_id in computed:
            block = self._blocks[block_id]
            if block.ref == 0:
                del self._free[block_id]
            block.ref += 1
            if residency is not None:
                residency.accessed(block_id, now)
        seq.blocks.extend(computed)
        if computed:
            seq.num_cached_blocks = len(seq.blocks)
        for _ in range(max(0, needed)):
            block_id, _ = self._free.popitem(last=False)
            block = self._blocks[block_id]
            if block.hash is not None:
                if self._cached.get(block.hash) == block_id:
                    del self._cached[block.hash]
                    self.evictions += 1
                    if residency is not None:
                        residency.evicted(block_id, now)
                    if self.offload is not None:
                        self.offload.store(block.hash)
                block.hash = None
            block.ref = 1
            if residency is not None:
                residency.allocated(block_id, now)
            seq.blocks.append(block_id)
        return True

    def cache_full_blocks(self, seq: KVSeq, num_computed: int) -> None:
        """Register the blocks of ``seq`` that became full once ``num_computed`` tokens are in the cache."""
        if not self.enable_prefix_caching:
            return
        full = min(num_computed // self.block_size, len(seq.blocks))
        if full <= seq.num_cached_blocks:
            return
        self._update_hashes(seq, full * self.block_size)
        for i in range(seq.num_cached_blocks, full):
            block_id, h = seq.blocks[i], seq.hashes[i]
            block = self._blocks[block_id]
            if block.hash is None and h not in self._cached:
                block.hash = h
                self._cached[h] = block_id
        seq.num_cached_blocks = full

    def free(self, seq: KVSeq) -> None:
        for block_id in reversed(seq.blocks):
            block = self._blocks[block_id]
            block.ref -= 1
            if block.ref == 0:
                self._free[block_id] = None
        seq.reset()

    def reset_prefix_cache(self) -> None:
        for block_id in self._free:
            self._blocks[block_id].hash = None
        self._cached = {h: b for h, b in self._cached.items() if self._blocks[b].ref > 0}
