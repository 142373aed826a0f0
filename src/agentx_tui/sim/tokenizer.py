"""The simulator's deterministic tokenizer and chat template.

Real engines run a BPE tokenizer; the simulator only needs token *counts* and token *identities* that
are stable, so that the same text always yields the same ids (which is what makes prefix caching hit)
and that counts grow like a real tokenizer's (about one token per short word).

Pre-tokenizer, one token per match, in order of precedence:
- a special token ``<|name|>`` (the chat template's markers), or a whitespace run just before one;
- an optional leading space or newline plus up to 10 letters (longer words split into 10-letter pieces);
- an optional leading space plus up to 3 digits;
- an optional leading space plus one punctuation character;
- a run of whitespace not followed by a word (as GPT-style pre-tokenizers do).

Token id = CRC-32 of the piece modulo the model's vocabulary size (special tokens take the top ids),
so ids are the same in every process. Completions prompts get a BOS token, as Llama's tokenizer adds.

Chat template, Llama 3.1 style: ``<|begin_of_text|>`` then, per message,
``<|start_header_id|>ROLE<|end_header_id|>\\n\\nCONTENT<|eot_id|>``, then the generation prompt
``<|start_header_id|>assistant<|end_header_id|>\\n\\n``. Each message therefore costs its content plus
5 tokens (4 markers/newlines and the role), the conversation 1 token for BOS and 4 for the prompt.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

SPECIAL_TOKENS = ("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>")
BOS = SPECIAL_TOKENS[0]

# Words come first although special tokens take precedence: no word can start where a special token
# or the whitespace before one does, so the matches are the same, and most pieces are words (the
# tokenizer is most of a chat request's cost once the history is cached; this order is 18% faster).
_PIECE = re.compile(
    r"[ \n]?[A-Za-z]{1,10}"
    r"|<\|[a-z_]+\|>"
    r"|\s+(?=<\|[a-z_]+\|>)"
    r"|[ \n]?[0-9]{1,3}"
    r"|[ \n]?[^\sA-Za-z0-9]"
    r"|\s+(?!\S)"
    r"|\s+"
)

# Words the simulated model "generates": each is one token with its leading space.
_OUTPUT_WORDS = (
    "the",
    "agent",
    "reads",
    "file",
    "then",
    "calls",
    "tool",
    "with",
    "result",
    "and",
    "plans",
    "next",
    "step",
    "code",
    "test",
    "patch",
    "check",
    "output",
    "error",
    "fix",
    "build",
    "run",
    "update",
    "list",
    "search",
    "open",
    "write",
    "diff",
    "merge",
    "review",
    "logs",
    "value",
    "state",
    "query",
    "cache",
    "token",
    "batch",
    "model",
    "server",
    "step",
    "loop",
    "input",
    "graph",
    "table",
    "score",
    "index",
    "parse",
    "return",
)


class SimTokenizer:
    def __init__(self, vocab_size: int) -> None:
        self.vocab_size = vocab_size
        self._special = {tok: vocab_size - 1 - i for i, tok in enumerate(SPECIAL_TOKENS)}
        self._plain = vocab_size - len(SPECIAL_TOKENS)
        self._cache: dict[str, int] = {}
        self.output_pieces = [" " + w for w in _OUTPUT_WORDS]
        self.output_ids = [self._piece_id(p) for p in self.output_pieces]

    def _piece_id(self, piece: str) -> int:
        tok = self._cache.get(piece)
        if tok is None:
            tok = self._special.get(piece)
            if tok is None:
                tok = zlib.crc32(piece.encode("utf-8")) % self._plain
            if len(self._cache) < 200_000:
                self._cache[piece] = tok
        return tok

    def encode(self, text: str, *, add_bos: bool = False) -> list[int]:
        pieces = _PIECE.findall(text)
        # One C-level pass over the piece cache; only pieces not seen before go through `_piece_id`.
        cached = list(map(self._cache.get, pieces))
        if None not in cached:
            ids = cast(list[int], cached)
        else:
            ids = [self._piece_id(p) if i is None else i for p, i in zip(pieces, cached, strict=True)]
        return [self._special[BOS], *ids] if add_bos else ids

    def encode_message(self, role: str, text: str) -> list[int]:
        """One message of the chat template (its header, content and end marker)."""
        return self.encode(f"<|start_header_id|>{role}<|end_header_id|>\n\n{text}<|eot_id|>")

    def pieces(self, text: str) -> list[str]:
        return _PIECE.findall(text)

    def render_chat(self, messages: Sequence[Mapping[str, Any]], *, add_generation_prompt: bool = True) -> str:
        parts = [BOS]
        for message in messages:
            role = str(message.get("role", "user"))
            parts.append(f"<|start_header_id|>{role}<|end_header_id|>\n\n{message_text(message)}<|eot_id|>")
        if add_generation_prompt:
            parts.append("<|start_header_id|>assistant<|end_header_id|>\n\n")
        return "".join(parts)

    def encode_chat(self, messages: Sequence[Mapping[str, Any]], *, add_generation_prompt: bool = True) -> list[int]:
        # Every message segment starts and ends with a special token, and no pre-tokenizer match crosses
        # one, so encoding segment by segment equals encoding the rendered conversation (which is what
        # lets `prompts.ChatPrompts` carry a conversation's tokens over from one turn to the next).
        ids = [self._special[BOS]]
        for message in messages:
            ids.extend(self.encode_message(str(message.get("role", "user")), message_text(message)))
        if add_generation_prompt:
            ids.extend(self.encode("<|start_header_id|>assistant<|end_header_id|>\n\n"))
        return ids

    def output_token(self, seed: int, index: int) -> tuple[int, str]:
        """The ``index``-th generated token of a request seeded with ``seed``: (id, text)."""
        k = (seed + index * 7919) % len(self.output_ids)
        return self.output_ids[k], self.output_pieces[k]

    def output_text(self, seed: int, start: int, stop: int) -> str:
        """The text of generated tokens ``start`` to ``stop`` (exclusive) of a request seeded with ``seed``."""
        pieces, n = self.output_pieces, len(self.output_pieces)
        return "".join([pieces[(seed + i * 7919) % n] for i in range(start, stop)])


def message_text(message: Mapping[str, Any]) -> str:
    """A chat message's text; OpenAI content parts (``[{"type": "text", "text": ...}]``) are joined."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Iterable):
        return "".join(
            str(part.get("text", "")) for part in content if isinstance(part, Mapping) and part.get("type") == "text"
        )
    return str(content)
