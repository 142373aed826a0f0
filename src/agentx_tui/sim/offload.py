"""The simulated engine's CPU KV tier (docs/sim.md, "CPU KV tier"): vLLM's native KV offloading to CPU
memory (`--kv-offloading-size`), as the engine model needs it.

- Blocks evicted from the GPU's prefix cache spill to CPU memory (the KV cache manager calls `store`),
  which keeps them by their chained hash, least recently used first out when it is full. A block
  already there is only touched: it is not copied again.
- A request's prefix lookup continues here where the GPU's ends (`lookup`): the leading blocks found
  are loaded into fresh GPU blocks (`load`) instead of being computed. The request waits for the load,
  which takes bytes ÷ bandwidth on the CPU→GPU link after the loads queued before it; other requests
  run meanwhile (vLLM loads asynchronously, the request waiting for its KV).
- GPU→CPU stores are asynchronous too: they cost no engine time; their bytes and transfer time are
  counted as vLLM counts them.

The link's bandwidth is per direction and per GPU: a tensor-parallel engine moves each GPU's share of a
block over that GPU's own link, so the engine's is `gpus` times it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

GB = 1e9


@dataclass(slots=True)
class TransferTotals:
    """What moved one way since the engine started: bytes and transfer seconds; each transfer's size goes
    to `observe` where one is set (the metrics' `vllm:kv_offload_*_size` histogram)."""

    bytes: float = 0.0
    seconds: float = 0.0
    observe: Callable[[float], None] | None = None

    def add(self, nbytes: float, seconds: float) -> None:
        self.bytes += nbytes
        self.seconds += seconds
        if self.observe is not None:
            self.observe(nbytes)


class CpuTier:
    def __init__(self, capacity_blocks: int, block_bytes: int, bytes_per_s: float) -> None:
        if capacity_blocks < 1:
            raise ValueError("a CPU KV tier holds at least one block")
        if not bytes_per_s > 0:
            raise ValueError("the CPU KV tier's link needs a positive bandwidth")
        self.capacity_blocks = capacity_blocks
        self.block_bytes = block_bytes
        self.bytes_per_s = bytes_per_s
        self._blocks: OrderedDict[int, None] = OrderedDict()
        self._link_free_at = 0.0  # when the CPU→GPU link has finished the loads queued on it
        self.loaded = TransferTotals()
        self.stored = TransferTotals()
        self._pending_store = 0  # blocks spilled since the last `flush_stores`: one transfer per step
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._blocks)

    @property
    def capacity_bytes(self) -> int:
        return self.capacity_blocks * self.block_bytes

    def store(self, block_hash: int) -> None:
        """A block evicted from the GPU: kept (most recently used), the oldest dropped when full."""
        blocks = self._blocks
        if block_hash in blocks:
            blocks.move_to_end(block_hash)
            return
        blocks[block_hash] = None
        self._pending_store += 1
        if len(blocks) > self.capacity_blocks:
            blocks.popitem(last=False)
            self.evictions += 1

    def flush_stores(self) -> None:
        """Count the blocks spilled in one engine step as one GPU→CPU transfer (as vLLM batches a step's)."""
        if self._pending_store:
            nbytes = self._pending_store * self.block_bytes
            self.stored.add(nbytes, nbytes / self.bytes_per_s)
            self._pending_store = 0

    def lookup(self, hashes: list[int], start: int, limit: int) -> int:
        """How many of the blocks ``hashes[start:limit]``, from the first on, are held here (each touched)."""
        blocks = self._blocks
        found = 0
        for index in range(start, limit):
            block_hash = hashes[index]
            if block_hash not in blocks:
                break
            blocks.move_to_end(block_hash)
            found += 1
        return found

    def load(self, num_blocks: int, now: float) -> float:
        """Queue the load of `num_blocks` blocks onto the GPU at `now`; returns when it is done."""
        nbytes = num_blocks * self.block_bytes
        seconds = nbytes / self.bytes_per_s
        start = max(now, self._link_free_at)
        self._link_free_at = start + seconds
        self.loaded.add(nbytes, seconds)
        return self._link_free_at
