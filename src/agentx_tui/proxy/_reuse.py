"""What the proxied agents sent before: each call's reused prompt tokens, for the split of its prompt into
cold, hit and evicted tokens (docs/metrics.md §4, "Where the prefix went"; docs/capture.md).

A proxied call's prompt is known as token ids only once the server has tokenized it, after the call
(`PromptTokens`). Its ids are cut into blocks of the server's KV block size; block i's key is a chained
hash of every id up to the block's end, so equal keys mean equal prefixes, as in a prefix cache. The
call's **reused** tokens are its longest run of leading blocks that an earlier call of the run sent
(any agent: a system prompt that two agents share is the same content), less the last prompt token a
cache must compute, block-aligned: the rule of the load client's ceiling (load/workload/conversation.py).

Earlier means *tokenized* earlier: the calls are taken in the order they were handed in (`ticket`,
the order the calls ended), whatever order the tokenizer's workers finish them in, so a later call of
an agent always sees its earlier calls' blocks. A call whose prompt could not be tokenized adds nothing.

Memory is bounded like the ceiling's: the keys sit in two generations; when the newer one holds half
the limit it becomes the older one and the oldest is forgotten, and a key found in the older one moves
into the newer. The keys of one process's hashes (Python's `hash`): never written anywhere.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence

from agentx_tui.measure import SeenPrefixes, cacheable_tokens

DEFAULT_BLOCK_SIZE = 16  # GPU vLLM's default, when the server does not say (`vllm:cache_config_info`)
MAX_KEYS = 400_000  # blocks remembered (~60 bytes each): the ceiling's bound
# Called with a call's reused tokens (None: its prompt could not be tokenized).
Reused = Callable[[int | None], None]


class SentBlocks:
    """`ticket()` when a call's prompt goes to be tokenized, then `observe(ticket, ids, then)` once its
    ids are in (None: they could not be had): `then(reused)` runs in ticket order."""

    def __init__(self, block_size: int = DEFAULT_BLOCK_SIZE, max_keys: int = MAX_KEYS) -> None:
        self.block_size = max(1, block_size)
        self._seen = SeenPrefixes(max_keys)
        self._issued = 0
        self._next = 0  # the ticket whose turn it is
        self._ready: dict[int, tuple[Sequence[int] | None, Reused]] = {}

    def ticket(self) -> int:
        self._issued += 1
        return self._issued - 1

    def observe(self, ticket: int, ids: Sequence[int] | None, then: Reused) -> None:
        """The prompt of `ticket`, registered in its turn; `then` gets its reused tokens."""
        self._ready[ticket] = (ids, then)
        while self._next in self._ready:
            ready_ids, ready_then = self._ready.pop(self._next)
            self._next += 1
            ready_then(self.reused(ready_ids) if ready_ids is not None else None)

    def flush(self) -> None:
        """At close: the calls still waiting for an earlier one (whose tokenizing was cut off) go on."""
        for ticket in sorted(self._ready):
            ids, then = self._ready.pop(ticket)
            then(self.reused(ids) if ids is not None else None)
        self._next = self._issued

    def skip(self, ticket: int) -> None:
        """A ticket whose prompt never comes (the tokenizer's queue was full): the later ones go on."""
        self.observe(ticket, None, lambda _: None)

    def reused(self, ids: Sequence[int]) -> int:
        """The tokens of prompt `ids` that an earlier prompt sent, block-aligned; then `ids` is one of them."""
        self._seen.turn()
        size = self.block_size
        tokens = array("I", ids) if not isinstance(ids, array) else ids
        keys: list[int] = []
        h = 0
        for start in range(0, len(tokens) - size + 1, size):
            h = hash((h, tokens[start : start + size].tobytes()))
            keys.append(h)
        shared = self._seen.leading_seen(keys)  # the leading run of blocks already sent
        self._seen.add(keys)
        return cacheable_tokens(shared * size, len(tokens), size)
