"""Calibrating a model's `TokenModel` against its server (workloads/README.md), once per model.

Calibration asks the server's `/tokenize` endpoint what each word of the pool costs, checks that the
costs add up on a long text, and measures the chat template: the header tokens before each role's
content, the total overhead of each message, and the generation prompt; one prediction of a whole
conversation is then checked against the server. When the server has no `/tokenize`, a chat
completion's reported `prompt_tokens` gives an average per-word cost and the template overhead;
lengths are then approximate and `TokenModel.exact` is False.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agentx_tui.load.workload.text import WORD_POOL, TextMaker, TokenModel

PostJson = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]

_SPACE = " "
_PROBE_WORDS = 256  # words in the additivity check and the template probes
_CONCURRENCY = 16


async def _count(post: PostJson, payload: dict[str, Any]) -> int | None:
    reply = await post("/tokenize", payload)
    if reply is None or not isinstance(reply.get("count"), int):
        return None
    return int(reply["count"])


async def _ids(post: PostJson, payload: dict[str, Any]) -> list[int] | None:
    reply = await post("/tokenize", payload)
    tokens = None if reply is None else reply.get("tokens")
    return [int(t) for t in tokens] if isinstance(tokens, list) else None


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


async def calibrate(post: PostJson, model: str, roles: Sequence[str] = ("system", "user", "assistant")) -> TokenModel:
    """Measure word costs and the chat template of `model` through `post` (the server's JSON API)."""
    sem = asyncio.Semaphore(_CONCURRENCY)

    async def word_cost(word: str) -> int | None:
        async with sem:
            return await _count(post, {"model": model, "prompt": word, "add_special_tokens": False})

    words = [_SPACE + w for w in WORD_POOL]
    costs = await asyncio.gather(*(word_cost(w) for w in words))
    if any(c is None for c in costs):
        return await _calibrate_by_completion(post, model, roles)
    pool = [(w, int(c)) for w, c in zip(words, costs, strict=True) if c is not None and 0 < c <= 4]
    kept_words = tuple(w for w, _ in pool)
    kept_costs = tuple(c for _, c in pool)
    probe = TextMaker(TokenModel(kept_words, kept_costs, {}, {"user": 0}, {}, {"user": 0}, 0, True), seed=7)
    notes: list[str] = []
    t1, c1 = probe.text(1, _PROBE_WORDS)
    t2, _ = probe.text(2, _PROBE_WORDS // 2)
    measured = await _count(post, {"model": model, "prompt": t1, "add_special_tokens": False})
    exact = measured == c1
    if not exact:
        notes.append(f"word costs do not add up on this tokenizer ({measured} tokens, expected {c1})")

    def chat(msgs: list[tuple[str, str]], gen: bool) -> dict[str, Any]:
        return {
            "model": model,
            "messages": [{"role": r, "content": t} for r, t in msgs],
            "add_generation_prompt": gen,
        }

    first_overhead: dict[str, int] = {}
    first_header: dict[str, int] = {}
    overhead: dict[str, int] = {}
    header: dict[str, int] = {}
    for role in ("system", "user"):
        n = await _count(post, chat([(role, t1)], False))
        ids_a = await _ids(post, chat([(role, t1)], False))
        ids_b = await _ids(post, chat([(role, t2)], False))
        if n is None or ids_a is None or ids_b is None:
            return await _calibrate_by_completion(post, model, roles)
        first_overhead[role] = n - c1
        first_header[role] = _common_prefix(ids_a, ids_b)
    base = [("system", t1), ("user", t1)]
    base_n = await _count(post, chat(base, False))
    gen_n = await _count(post, chat(base, True))
    if base_n is None or gen_n is None:
        return await _calibrate_by_completion(post, model, roles)
    for role in ("user", "assistant", *[r for r in roles if r not in ("system", "user", "assistant")]):
        convo = [*base, ("assistant", t1)] if role == "user" else base
        n_prev = await _count(post, chat(convo, False))
        n_with = await _count(post, chat([*convo, (role, t1)], False))
        ids_a = await _ids(post, chat([*convo, (role, t1)], False))
        ids_b = await _ids(post, chat([*convo, (role, t2)], False))
        ids_prev = await _ids(post, chat(convo, False))
        if n_prev is None or n_with is None or ids_a is None or ids_b is None or ids_prev is None:
            return await _calibrate_by_completion(post, model, roles)
        overhead[role] = n_with - n_prev - c1
        header[role] = _common_prefix(ids_a, ids_b) - len(ids_prev)
    overhead.setdefault("system", overhead["user"])
    header.setdefault("system", header["user"])
    tm = TokenModel(kept_words, kept_costs, first_overhead, overhead, first_header, header, gen_n - base_n, exact)
    # One prediction of a whole conversation, checked against the server, keeps the model honest.
    maker = TextMaker(tm, seed=11)
    texts = [maker.text(k, 40 + 13 * k) for k in range(4)]
    roles4 = ("system", "user", "assistant", "user")
    convo = [(r, t) for r, (t, _) in zip(roles4, texts, strict=True)]
    predicted = tm.generation_prompt + sum(
        tm.message_tokens(r, c, first=i == 0) for i, (r, (_, c)) in enumerate(zip(roles4, texts, strict=True))
    )
    got = await _count(post, chat(convo, True))
    if got != predicted:
        notes.append(f"the chat template does not add up ({got} tokens, predicted {predicted})")
        exact = False
    return dataclasses.replace(tm, exact=exact, note="; ".join(notes) or None)


async def _calibrate_by_completion(post: PostJson, model: str, roles: Sequence[str]) -> TokenModel:
    """No `/tokenize`: two one-token chat completions give a per-word average and the overhead."""
    words = tuple(_SPACE + w for w in WORD_POOL)

    async def prompt_tokens(n_words: int) -> int | None:
        text = "".join(words[i % len(words)] for i in range(n_words))
        reply = await post(
            "/v1/chat/completions",
            {"model": model, "messages": [{"role": "user", "content": text}], "max_tokens": 1},
        )
        usage = None if reply is None else reply.get("usage")
        return int(usage["prompt_tokens"]) if isinstance(usage, dict) else None

    short, long_ = await prompt_tokens(_PROBE_WORDS // 4), await prompt_tokens(_PROBE_WORDS)
    if short is None or long_ is None:
        per_word, over = 1.0, 4
        note = "the server reports no token counts: lengths assume one token per word"
    else:
        per_word = max((long_ - short) / (_PROBE_WORDS - _PROBE_WORDS // 4), 0.1)
        over = max(short - round(per_word * (_PROBE_WORDS // 4)), 0)
        note = "the server has no /tokenize endpoint: prompt lengths are approximate"
    cost = max(1, round(per_word))
    table = {r: over for r in ("system", "user", "assistant", *roles)}
    return TokenModel(words, (cost,) * len(words), table, dict(table), dict(table), dict(table), 0, False, note)
