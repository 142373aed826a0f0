"""Prompt blocks as salted hash chains: what a capture keeps of a prompt instead of its tokens.

A prompt's token ids are cut into whole blocks of `block_size` tokens (a partial last block is dropped,
as the AgentX corpus does); block i's hash is HMAC-SHA256(key, hash of block i−1 ‖ the block's ids),
so equal hashes mean equal prefixes up to that block, as in a prefix cache. The key is random per
capture and held only in memory: without it a hash cannot be checked against a guessed text, and
hashes of two captures cannot be compared. A file then numbers its distinct hashes 1, 2, 3… (`IdTable`).

An agent's next prompt usually extends its last one, so `BlockChain` keeps the last prompt's ids and
hashes and only hashes the blocks that are new (a C-level comparison finds the common prefix).
"""

from __future__ import annotations

import hashlib
import hmac
from array import array
from collections.abc import Sequence

BLOCK_SIZE = 64
_SEED = b"\x00" * 32  # the "previous hash" of a prompt's first block


class BlockHasher:
    def __init__(self, key: bytes, block_size: int = BLOCK_SIZE) -> None:
        if len(key) < 16:
            raise ValueError("the block key must be at least 16 random bytes")
        self.block_size = block_size
        self._base = hmac.new(key, digestmod=hashlib.sha256)  # copied per block: no re-keying

    def extend(self, hashes: list[bytes], ids: array[int], start: int, stop: int) -> None:
        """Append the hashes of whole blocks `start` to `stop` (exclusive) of `ids` to `hashes`, which
        must hold the hashes of blocks 0 to `start` − 1."""
        bs = self.block_size
        prev = hashes[start - 1] if start else _SEED
        base = self._base
        for b in range(start, stop):
            h = base.copy()
            h.update(prev)
            h.update(ids[b * bs : (b + 1) * bs].tobytes())
            prev = h.digest()
            hashes.append(prev)


class BlockChain:
    """One agent's prompts as block hashes, reusing the previous prompt's common whole blocks."""

    __slots__ = ("_hasher", "_hashes", "_ids")

    def __init__(self, hasher: BlockHasher) -> None:
        self._hasher = hasher
        self._ids: array[int] = array("I")
        self._hashes: list[bytes] = []

    def prepare(self, token_ids: Sequence[int]) -> tuple[array[int], int, int]:
        """(ids, blocks already known, whole blocks in all) for `token_ids`; `hash_blocks` then fills
        the rest, possibly in several slices so that a long prompt does not hold the event loop."""
        ids = array("I", token_ids)
        bs = self._hasher.block_size
        total = len(ids) // bs
        known = min(total, len(self._hashes))
        if known and ids[: known * bs] != self._ids[: known * bs]:
            # Diverged somewhere: find the first differing block (rare; usually a prompt extends the last).
            same = 0
            while same < known and ids[same * bs : (same + 1) * bs] == self._ids[same * bs : (same + 1) * bs]:
                same += 1
            known = same
        del self._hashes[known:]
        self._ids = ids
        return ids, known, total

    def hash_blocks(self, ids: array[int], start: int, stop: int) -> None:
        self._hasher.extend(self._hashes, ids, start, stop)

    def hashes(self, blocks: int) -> list[bytes]:
        return self._hashes[:blocks]


class IdTable:
    """A file's numbering of block hashes: 1, 2, 3… in order of first appearance (`hash_id_scope:
    local`: ids say nothing across files)."""

    __slots__ = ("_ids",)

    def __init__(self) -> None:
        self._ids: dict[bytes, int] = {}

    def number(self, hashes: Sequence[bytes]) -> array[int]:
        ids = self._ids
        out = array("I")
        for h in hashes:
            n = ids.get(h)
            if n is None:
                n = ids[h] = len(ids) + 1
            out.append(n)
        return out

    def __len__(self) -> int:
        return len(self._ids)
