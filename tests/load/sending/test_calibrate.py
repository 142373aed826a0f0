from __future__ import annotations

from typing import Any

from agentx_tui.load.sending.calibrate import calibrate
from agentx_tui.load.workload.text import TextMaker, TokenModel
from tests.load.fake_openai import GEN, HEADER, TRAILER, FakeServer, chat_ids, word_ids


def _poster(server: FakeServer) -> Any:
    import aiohttp

    async def post(path: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        async with aiohttp.ClientSession() as http, http.post(server.url + path, json=payload) as resp:
            return (await resp.json()) if resp.status == 200 else None

    return post


async def test_calibration_measures_words_and_template(fake: FakeServer) -> None:
    tm = await calibrate(_poster(fake), "fake")
    assert tm.exact and tm.note is None
    assert tm.generation_prompt == GEN
    assert tm.header["user"] == HEADER and tm.first_header["system"] == HEADER
    assert tm.overhead["assistant"] == HEADER + TRAILER
    assert set(tm.costs) == {1, 2}
    for word, cost in zip(tm.words, tm.costs, strict=True):
        assert len(word_ids(word)) == cost


async def test_without_tokenize_lengths_are_approximate_and_say_so(fake: FakeServer) -> None:
    fake.tokenize = False
    tm = await calibrate(_poster(fake), "fake")
    assert not tm.exact
    assert tm.note is not None and "/tokenize" in tm.note


def _model() -> TokenModel:
    words = (" alpha", " be", " considerable", " do", " extraordinary")
    costs = tuple(len(word_ids(w)) for w in words)
    table = {"user": 3, "system": 3, "assistant": 3}
    return TokenModel(words, costs, table, dict(table), {"user": 2}, {"user": 2}, 2, True)


def test_text_hits_the_token_count_exactly_and_is_deterministic() -> None:
    maker = TextMaker(_model(), seed=5)
    for n in (1, 2, 7, 100, 5000, 70000):
        text, real = maker.text(42, n)
        assert real == n == len(word_ids(text))
    assert maker.text(42, 300) == TextMaker(_model(), seed=5).text(42, 300)
    assert maker.text(42, 300)[0] != maker.text(43, 300)[0]
    assert maker.text(42, 300)[0] != TextMaker(_model(), seed=6).text(42, 300)[0]


def test_message_tokens_match_the_fake_template() -> None:
    tm = _model()
    maker = TextMaker(tm, seed=1)
    text, n = maker.text(1, 50)
    assert tm.message_tokens("user", n, first=True) == len(chat_ids([{"role": "user", "content": text}], False))
