"""What the proxied agents sent before (proxy/_reuse.py): a call's reused tokens by the ceiling's rule, taken
in the order the calls were handed in whatever order their tokens come back, in bounded memory."""

from __future__ import annotations

from agentx_tui.proxy._reuse import SentBlocks


def test_reused_tokens_are_the_leading_whole_blocks_sent_before_short_of_the_last_token() -> None:
    sent = SentBlocks(block_size=4)
    first = list(range(10))
    assert sent.reused(first) == 0  # cold: nothing sent before
    assert sent.reused([*first, 50, 51]) == 8  # its two whole blocks of the first prompt
    assert sent.reused(first[:8]) == 4  # the whole prompt was sent, but its last token is computed
    assert sent.reused([99, *first]) == 0  # different from the first token on: a different prefix
    assert sent.reused([0, 1, 2, 3, 7, 7, 7, 7, 8]) == 4  # shares only the first block


def test_another_agents_same_prefix_is_reused_too() -> None:
    sent = SentBlocks(block_size=4)
    system = [5] * 8
    assert sent.reused([*system, 1, 2, 3]) == 0
    assert sent.reused([*system, 9, 9, 9]) == 8  # the same system prompt, sent by another agent


def test_calls_are_taken_in_the_order_they_were_handed_in() -> None:
    sent = SentBlocks(block_size=4)
    seen: list[tuple[str, int | None]] = []
    a, b, c = sent.ticket(), sent.ticket(), sent.ticket()
    sent.observe(b, list(range(12)), lambda reused: seen.append(("b", reused)))  # b's tokens come first
    assert seen == []  # ... but a was handed in before it
    sent.observe(a, list(range(8)), lambda reused: seen.append(("a", reused)))
    assert seen == [("a", 0), ("b", 8)]  # b extends a: it reuses a's two blocks
    sent.skip(c)  # its prompt never came (the tokenizer's queue was full)
    d = sent.ticket()
    sent.observe(d, list(range(12)), lambda reused: seen.append(("d", reused)))
    assert seen[-1] == ("d", 8)  # the whole 12 was sent by b: all but the last block's last token


def test_at_close_the_calls_behind_a_lost_one_are_counted_still() -> None:
    sent = SentBlocks(block_size=4)
    seen: list[int | None] = []
    sent.ticket()  # cut off: its tokens never come
    late = sent.ticket()
    sent.observe(late, list(range(8)), seen.append)
    assert seen == []
    sent.flush()
    assert seen == [0]
    after = sent.ticket()
    sent.observe(after, list(range(8)), seen.append)
    assert seen == [0, 4]


def test_memory_is_two_generations_of_at_most_half_the_limit_each() -> None:
    sent = SentBlocks(block_size=1, max_keys=20)
    sent.reused(list(range(100, 108)))  # eight keys
    sent.reused(list(range(200, 208)))  # sixteen: the newer generation is full
    sent.reused(list(range(300, 304)))  # the first two move to the older one
    assert sent.reused(list(range(100, 108))) == 7  # still known: found in the older, moved back
    sent.reused(list(range(400, 412)))  # the newer is full again: the older (200…) is forgotten
    sent.reused(list(range(500, 502)))
    assert sent.reused(list(range(200, 208))) == 0
    assert len(sent._seen) <= 20 + 12  # the limit, and at most one prompt past it
