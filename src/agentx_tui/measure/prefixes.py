"""What a perfect, unbounded prefix cache would hold of the prompts sent, as the client counts it for the
ceiling and a prompt's reused tokens (docs/metrics.md §4): the keys of the prefixes seen, in bounded
memory (`SeenPrefixes`), and what such a cache could serve of a prompt (`cacheable_tokens`). The load
client keys its prompts' prefix points (load/workload/conversation.py), the proxy its calls' token
blocks (proxy/_reuse.py); the rule is the same.
"""

from __future__ import annotations

from collections.abc import Iterable


def cacheable_tokens(shared: int, prompt_tokens: int, block_size: int) -> int:
    """What a prefix cache could serve of a prompt whose first `shared` tokens it has seen: it must leave
    the last prompt token to compute, and it serves whole blocks only."""
    return max(min(shared, prompt_tokens - 1), 0) // block_size * block_size


class SeenPrefixes:
    """The keys seen, in two generations: when the newer one holds `max_keys // 2` keys (checked by
    `turn`, once a prompt) it becomes the older one and the oldest is forgotten, and a key found in the
    older one is carried into the newer. So the keys in use stay (an LRU in effect) while a day-long
    run's memory stays flat (~60 bytes a key)."""

    __slots__ = ("_generation_size", "newer", "older")

    def __init__(self, max_keys: int) -> None:
        self._generation_size = max(1, max_keys // 2)
        self.newer: set[int] = set()
        self.older: set[int] = set()

    def __len__(self) -> int:
        """The keys held: a key carried into the newer generation counts twice until the older goes."""
        return len(self.newer) + len(self.older)

    def turn(self) -> None:
        if len(self.newer) >= self._generation_size:
            self.newer, self.older = set(), self.newer

    def seen(self, key: int) -> bool:
        if key in self.newer:
            return True
        if key in self.older:
            self.newer.add(key)
            return True
        return False

    def leading_seen(self, keys: Iterable[int]) -> int:
        """How many of `keys`, from the first, were seen (each carried forward as `seen` does)."""
        newer, older = self.newer, self.older
        count = 0
        for key in keys:
            if key not in newer:
                if key not in older:
                    break
                newer.add(key)
            count += 1
        return count

    def none_seen(self, keys: Iterable[int]) -> bool:
        return self.newer.isdisjoint(keys) and self.older.isdisjoint(keys)

    def add(self, keys: Iterable[int]) -> None:
        self.newer.update(keys)
