"""Chat prompts as the KV cache sees them (length, block hashes, tail), built incrementally.

An agent resends its whole history every turn: at 100 K tokens, tokenising it costs ~50 ms and hashing
its 6 K blocks ~10 ms, per request, all on the event loop that streams every other request (measured
with bench/sim_saturation.py). Yet each turn only appends a few messages to the previous one. So the
state reached after a request's last message (token count, hashes of the full blocks, the tokens after
them) is kept under a key chained over the messages' roles and texts; the next turn starts from the
longest kept prefix of its messages and tokenises and hashes only what is new. The state after the
first message (the system prompt every session shares) is kept too, so a new session starts from it.

The result is exactly what tokenising the rendered conversation and hashing its blocks would give
(tests/sim/test_engine_model.py checks it): every message segment starts and ends with a special token,
and no pre-tokenizer match crosses one (see `tokenizer`).
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentx_tui.sim.kvcache import PromptBlocks, chain_hashes
from agentx_tui.sim.tokenizer import BOS, SimTokenizer, message_text

# Kept states hold this many block hashes in all (8 bytes each): 4 M blocks = 64 M tokens of history,
# e.g. 512 sessions at 100 K tokens with room to spare, in 32 MiB.
MAX_KEPT_BLOCKS = 4_000_000
_ROOT_KEY = 0x5EED


@dataclass(frozen=True, slots=True)
class _State:
    num_tokens: int
    hashes: array[int]  # compact: no int objects per kept hash
    tail: tuple[int, ...]


class ChatPrompts:
    def __init__(self, tokenizer: SimTokenizer, block_size: int, *, max_kept_blocks: int = MAX_KEPT_BLOCKS) -> None:
        self.tokenizer = tokenizer
        self.block_size = block_size
        self.max_kept_blocks = max_kept_blocks
        self._states: OrderedDict[int, _State] = OrderedDict()
        self._kept_blocks = 0
        self._root = _State(1, array("q"), (tokenizer.encode(BOS)[0],))
        self._generation_prompt = tokenizer.encode("<|start_header_id|>assistant<|end_header_id|>\n\n")
        self.hits = self.misses = 0  # messages taken from a kept state / tokenised

    def encode(self, messages: Sequence[Mapping[str, Any]], *, add_generation_prompt: bool = True) -> PromptBlocks:
        """The prompt of ``messages`` rendered with the chat template (see `SimTokenizer.encode_chat`)."""
        roles = [str(m.get("role", "user")) for m in messages]
        texts = [message_text(m) for m in messages]
        keys: list[int] = []
        key = _ROOT_KEY
        for role, text in zip(roles, texts, strict=True):
            key = hash((key, role, text))
            keys.append(key)
        state, start = self._root, 0
        for j in range(len(keys) - 1, -1, -1):
            kept = self._states.get(keys[j])
            if kept is not None:
                self._states.move_to_end(keys[j])
                state, start = kept, j + 1
                break
        self.hits += start
        self.misses += len(keys) - start
        bs = self.block_size
        hashes = state.hashes.tolist()
        tail = list(state.tail)
        num_tokens = state.num_tokens
        last = len(keys) - 1
        for j in range(start, len(keys)):
            ids = self.tokenizer.encode_message(roles[j], texts[j])
            num_tokens += len(ids)
            tail = self._extend(hashes, tail, ids, bs)
            if j == last or j == 0:
                self._keep(keys[j], _State(num_tokens, array("q", hashes), tuple(tail)))
        if add_generation_prompt:
            num_tokens += len(self._generation_prompt)
            tail = self._extend(hashes, tail, self._generation_prompt, bs)
        return PromptBlocks(num_tokens, hashes, tail)

    @staticmethod
    def _extend(hashes: list[int], tail: list[int], ids: list[int], bs: int) -> list[int]:
        """Append ``ids`` after ``tail``; hash the blocks that fill up, return the new tail."""
        tail.extend(ids)
        full = len(tail) // bs * bs
        if not full:
            return tail
        chain_hashes(hashes[-1] if hashes else 0, tail[:full] if full < len(tail) else tail, bs, hashes)
        return tail[full:]

    def _keep(self, key: int, state: _State) -> None:
        old = self._states.pop(key, None)
        if old is not None:
            self._kept_blocks -= len(old.hashes)
        self._states[key] = state
        self._kept_blocks += len(state.hashes)
        while self._kept_blocks > self.max_kept_blocks and len(self._states) > 1:
            _, dropped = self._states.popitem(last=False)
            self._kept_blocks -= len(dropped.hashes)
