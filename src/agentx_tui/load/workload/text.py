"""Token-exact prompt text (workloads/README.md): text of any length, fast, for a calibrated model.

A `TokenModel` says what one model's tokenizer charges for each word of a fixed English word pool
(written with a leading space, the form it has inside running text) and for its chat template; it is
measured once per model against the server (load/sending/calibrate.py). Text is then drawn from one
deterministic word stream per seed: `text(key, n)` is a slice of that stream chosen by `key`, topped
up with one-token words to land exactly on `n`. Equal keys give byte-identical text (so the prefix
cache hits); different keys start at different places (so unique text differs).
"""

from __future__ import annotations

import bisect
import random
from array import array
from dataclasses import dataclass, field

# Common English words plus the words agents' text is full of; the cheap ones are kept.
_WORDS = """
    the agent reads repository plans change calls tool result can long file listings test output
    search results diffs prefix caching lets server reuse key value blocks shared system prompt
    every step loop sends whole conversation again context grows throughput counts cached generated
    tokens latency seconds first token def main return sum range numbers user assistant function
    arguments error warning info debug and of to in is it that for on with as was at by be this from
    or have an are not but they his her one all we there been if more when will would who so no out
    up into time has two like other its then some could them these than only new way may about first
    well also after work use our any most over such make even made many back years where much own
    through just good those people how state very still while last same world great might old here
    thing each year know under never day part place being case point group number fact week line
    home water room mother area money story month lot right study book eye job word business issue
    side kind head house service friend father power hour game end member law car city community
    name president team minute idea body information school face others level office door health
    person art war history party
"""
WORD_POOL: tuple[str, ...] = tuple(_WORDS.split())
_STREAM_TOKENS = 1 << 16
_M64 = (1 << 64) - 1
_GOLDEN = 0x9E37_79B9_7F4A_7C15  # splitmix64's increment


def _mix(x: int) -> int:
    """splitmix64's finaliser: a bijection of 64-bit integers in which every output bit depends on every
    input bit. A text's start and fillers come from it: seeding a `random.Random` per text cost ~16 µs
    (twice per text: most of a replayed session's prompt building, whose blocks are short texts)."""
    x &= _M64
    x = ((x ^ (x >> 30)) * 0xBF58_476D_1CE4_E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D0_49BB_1331_11EB) & _M64
    return x ^ (x >> 31)


@dataclass(frozen=True)
class TokenModel:
    """What one model's tokenizer charges for the pool words and for the chat template."""

    words: tuple[str, ...]  # each with its leading space
    costs: tuple[int, ...]
    first_overhead: dict[str, int]  # whole overhead of a role's message when it opens the prompt
    overhead: dict[str, int]  # whole overhead of a role's message later in the prompt
    first_header: dict[str, int]  # tokens before the content of a role's message opening the prompt
    header: dict[str, int]  # tokens before the content of a later message
    generation_prompt: int
    exact: bool
    note: str | None = None

    def message_tokens(self, role: str, content_tokens: int, *, first: bool) -> int:
        table = self.first_overhead if first else self.overhead
        return table.get(role, table["user"]) + content_tokens

    def header_tokens(self, role: str, *, first: bool) -> int:
        table = self.first_header if first else self.header
        return table.get(role, table["user"])


@dataclass
class TextMaker:
    """Deterministic text of an exact token count for one calibrated model and seed."""

    model: TokenModel
    seed: int = 0
    _stream: list[str] = field(init=False, repr=False)
    _cum: list[int] = field(init=False, repr=False)
    _fillers: list[str] = field(init=False, repr=False)
    # The stream joined once, and where each of its words starts in it: a text is one slice of it (a
    # replayed session's prompt is a hundred short texts a call: a join of each cost as much again).
    _joined: str = field(init=False, repr=False)
    _starts: list[int] = field(init=False, repr=False)
    _last_by: array[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        rng = random.Random(self.seed)
        pool = list(zip(self.model.words, self.model.costs, strict=True))
        self._fillers = [w for w, c in pool if c == 1] or [min(pool, key=lambda p: p[1])[0]]
        self._stream, self._cum, total = [], [0], 0
        while total < _STREAM_TOKENS:
            word, cost = pool[rng.randrange(len(pool))]
            self._stream.append(word)
            total += cost
            self._cum.append(total)
        self._filler_cost = dict(pool)[self._fillers[0]]
        self._joined = "".join(self._stream)
        self._starts = [0]
        for word in self._stream:
            self._starts.append(self._starts[-1] + len(word))
        self._salt = self.seed << 32
        # For each token count c of the stream, the last word that ends by it (what `bisect_right(cum,
        # c) - 1` finds): a text's run ends at a look-up, not a search (a hundred texts a prompt).
        self._last_by = array("i")
        for i in range(len(self._stream)):
            self._last_by.extend([i] * (self._cum[i + 1] - self._cum[i]))
        self._last_by.append(len(self._stream))
        # Whether every text it makes (of the model's words) goes into a JSON string as it is (ASCII,
        # nothing to escape): the word pool's words do, so a prompt's bytes need no escaping pass.
        self.json_plain = all(
            w.isascii() and w.isprintable() and '"' not in w and "\\" not in w for w in self.model.words
        )

    def text(self, key: int, tokens: int) -> tuple[str, int]:
        """Text of `tokens` tokens (the second value is what it really costs) for `key`: a run of the
        stream from a place `key` picks, wrapping round at its end, then one-token fillers."""
        if tokens <= 0:
            return "", 0
        cum, last_by = self._cum, self._last_by
        start = _mix(key ^ self._salt) % len(self._stream)
        reach = cum[start] + tokens
        if reach < len(last_by):  # the common case, one slice (what `_wrapped` does, without its joins)
            end = last_by[reach]
            text, have = self._joined[self._starts[start] : self._starts[end]], cum[end] - cum[start]
        else:
            text, have = self._wrapped(start, tokens)
        if tokens - have < self._filler_cost:
            return text, have
        parts = [text]
        pick = key
        while tokens - have >= self._filler_cost:
            pick = _mix(pick + _GOLDEN)
            parts.append(self._fillers[pick % len(self._fillers)])
            have += self._filler_cost
        return "".join(parts), have

    def _wrapped(self, start: int, tokens: int) -> tuple[str, int]:
        """The stream's words from `start` on, wrapping round at its end, up to `tokens` tokens."""
        parts: list[str] = []
        have = 0
        while tokens - have > 0:
            base = self._cum[start]
            end = bisect.bisect_right(self._cum, base + tokens - have) - 1
            if end <= start:
                break
            parts.append(self._joined[self._starts[start] : self._starts[end]])
            have += self._cum[end] - base
            if end < len(self._stream):
                break
            start = 0
        return "".join(parts), have
