"""Paged KV cache with prefix caching, after vLLM V1's ``BlockPool`` / ``KVCacheManager``.

- A fixed pool of blocks of ``block_size`` tokens. Block 0 is the null block vLLM reserves, so
  ``num_blocks - 1`` are usable and usage = 1 − free / (num_blocks − 1), as vLLM reports it.
- Every *full* block of a sequence gets a chained hash: hash(previous block's hash, its tokens), so a
  block hash identifies the whole prefix up to and including that block.
- Freed blocks keep their hash and stay findable until reused: the free queue is an LRU (eviction from
  its head), and a request's blocks are freed tail first so that a prefix outlives its suffixes.
- A cache lookup returns the longest run of cached leading blocks, but never the whole prompt: the last
  prompt token must be computed to produce logits (vLLM's ``(num_tokens - 1) // block_size`` rule).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field


@dataclass(slots=True)
class _Block:
    ref: int = 0
    hash: int | None = None


@dataclass(slots=True)
class KVSeq:
    """The per-request cache state the manager keeps (embedded in the scheduler's request)."""

    tokens: list[int]
    blocks: list[int] = field(default_factory=list)
    hashes: list[int] = field(default_factory=list)
    num_cached_blocks: int = 0

    def reset(self) -> None:
        self.blocks = []
        self.num_cached_blocks = 0


class KVCacheManager:
    def __init__(self, num_blocks: int, block_size: int, *, enable_prefix_caching: bool = True) -> None:
        if num_blocks < 2:
            raise ValueError("the KV cache needs at least 2 blocks (one is the null block)")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.enable_prefix_caching = enable_prefix_caching
        self._blocks = [_Block() for _ in range(num_blocks)]
        self._free: OrderedDict[int, None] = OrderedDict((i, None) for i in range(1, num_blocks))
        self._cached: dict[int, int] = {}
        self.evictions = 0

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
        tokens, hashes = seq.tokens, seq.hashes
        for i in range(len(hashes), upto_tokens // bs):
            parent = hashes[i - 1] if i else 0
            hashes.append(hash((parent, *tokens[i * bs : (i + 1) * bs])))

    def find_cached_prefix(self, seq: KVSeq) -> list[int]:
        """Block ids of the longest cached prefix of ``seq`` (not yet referenced)."""
        if not self.enable_prefix_caching:
            return []
        limit = (len(seq.tokens) - 1) // self.block_size
        self._update_hashes(seq, limit * self.block_size)
        hit: list[int] = []
        for h in seq.hashes[:limit]:
            block_id = self._cached.get(h)
            if block_id is None:
                break
            hit.append(block_id)
        return hit

    def allocate(
        self, seq: KVSeq, num_computed: int, num_new_tokens: int, computed: list[int] | None = None
    ) -> bool:
        """Reserve blocks so that ``seq`` holds ``num_computed + num_new_tokens`` tokens, where
        ``num_computed`` counts the prefix-cache hits ``computed`` of a request being admitted. False,
        and no change, when the pool cannot supply them."""
        computed = computed or []
        have = len(seq.blocks) + len(computed)
        needed = -(-(num_computed + num_new_tokens) // self.block_size) - have
        # Hits sitting in the free queue are about to be taken out of it, so they cannot be evicted.
        evictable_hits = sum(1 for b in computed if self._blocks[b].ref == 0)
        if needed > len(self._free) - evictable_hits:
            return False
        for block_id in computed:
            block = self._blocks[block_id]
            if block.ref == 0:
                del self._free[block_id]
            block.ref += 1
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
                block.hash = None
            block.ref = 1
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
