from __future__ import annotations

import json

from agentx_tui.load.workload.conversation import CeilingTracker, Conversation, Segment, SingleMessage
from agentx_tui.load.workload.text import TokenModel

TABLE = {"system": 3, "user": 3, "assistant": 3}
TM = TokenModel((" a",), (1,), TABLE, dict(TABLE), {"user": 2}, {"user": 2}, 2, True)


def _seg(key: int, n: int) -> Segment:
    return Segment(key, " a" * n, n)


def test_body_is_the_json_of_the_messages_and_grows_incrementally() -> None:
    conv = Conversation(TM)
    conv.add("system", [_seg(1, 10)])
    conv.add("user", [_seg(2, 5), _seg(3, 5)])
    conv.add("assistant", [Segment(4, 'quote " and é', 3)])
    body = json.loads(conv.body(b'{"model":"m","messages":[', b"]}"))
    assert body["messages"] == [
        {"role": "system", "content": " a" * 10},
        {"role": "user", "content": " a" * 10},
        {"role": "assistant", "content": 'quote " and é'},
    ]
    assert conv.tokens == 13 + 13 + 6
    assert conv.prompt_tokens == conv.tokens + 2


def test_ceiling_counts_block_aligned_prefix_seen_before_per_endpoint() -> None:
    tracker = CeilingTracker(block_size=4)
    first = Conversation(TM)
    first.add("system", [_seg(1, 30)])  # 33 tokens
    first.add("user", [_seg(2, 10)])
    assert tracker.observe("e1", first) == 0
    second = Conversation(TM)
    second.add("system", [_seg(1, 30)])
    second.add("user", [_seg(3, 10)])
    assert tracker.observe("e1", second) == 32  # 33 shared tokens, whole 4-token blocks
    assert tracker.observe("e2", second) == 0  # another server's cache is cold
    # The next step of the first session shares all of its previous prompt (+ generation prompt).
    first.add("assistant", [_seg(4, 5)])
    first.add("user", [_seg(5, 5)])
    assert tracker.observe("e1", first) == (33 + 13 + 2) // 4 * 4


def test_ceiling_counts_the_next_role_header_shared_after_a_common_message() -> None:
    # Seen on the real engine: a block boundary inside the user header after the shared system
    # prompt was served from the cache, while the ceiling stopped at the end of the system message.
    tracker = CeilingTracker(block_size=5)
    first = Conversation(TM)
    first.add("system", [_seg(1, 30)])  # 33 tokens, then the user header's 2 tokens are shared too
    first.add("user", [_seg(2, 10)])
    tracker.observe("e", first)
    second = Conversation(TM)
    second.add("system", [_seg(1, 30)])
    second.add("user", [_seg(3, 10)])
    assert tracker.observe("e", second) == 35
    # A different role after the same message shares only the message itself.
    third = Conversation(TM)
    third.add("system", [_seg(1, 30)])
    third.add("assistant", [_seg(4, 10)])
    assert tracker.observe("e", third) == 30


def test_ceiling_never_counts_the_last_prompt_token() -> None:
    tracker = CeilingTracker(block_size=1)
    conv = Conversation(TM)
    conv.add("user", [_seg(1, 10)])
    tracker.observe("e", conv)
    assert tracker.observe("e", conv) == conv.prompt_tokens - 1


def test_ceiling_memory_is_bounded_and_keeps_the_prefixes_in_use() -> None:
    tracker = CeilingTracker(block_size=1, max_points=40)
    shared = Conversation(TM)
    shared.add("system", [_seg(1, 30)])
    shared.add("user", [_seg(2, 5)])
    tracker.observe("e", shared)
    for key in range(100, 400):  # many one-off prompts, each sharing the system prompt
        conv = Conversation(TM)
        conv.add("system", [_seg(1, 30)])
        conv.add("user", [_seg(key, 5)])
        # The shared prefix stays known however many other points came and went.
        assert tracker.observe("e", conv) >= 33
    assert len(tracker._seen["e"]) <= 40 + 4  # two generations of half the bound (plus one prompt's points)
    again = Conversation(TM)
    again.add("system", [_seg(1, 30)])
    again.add("user", [_seg(100, 5)])  # the first one-off prompt, seen long ago: forgotten but for its prefix
    assert 33 <= tracker.observe("e", again) < again.prompt_tokens - 1


def test_a_forked_prompt_hands_the_ceiling_only_its_new_points_and_counts_the_same() -> None:
    """A prompt forked from one already sent shares its leading points: only its new ones go to the
    tracker, and what it counts is what handing over every point counts (a prompt that goes back to
    an earlier point too)."""

    def ceilings(every_point: bool) -> list[int]:
        tracker = CeilingTracker(block_size=16)
        message = SingleMessage(TM)
        message.extend([_seg(k, 20) for k in range(1, 9)])
        counted = [tracker.observe("e", message.finish())]
        for n, new_keys in ((8, (20, 21)), (5, (30,)), (6, (40, 41, 42))):
            message = message.fork(n)
            message.extend([_seg(k, 20) for k in new_keys])
            conv = message.finish()
            assert conv.registered == n + 1  # the opening point and its first n segments' went over with it
            if every_point:
                conv.registered = 0
            counted.append(tracker.observe("e", conv))
        return counted

    assert ceilings(every_point=False) == ceilings(every_point=True) == [0, 160, 96, 112]
