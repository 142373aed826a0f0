"""The forgetful cache's tests (tests/load/fake_openai.py, `forget_after_s`): a server that forgets a
session's prefix once it has been idle longer than `FORGET_S` and reports `cached_tokens` honestly, think
times well inside and well past it, and the checks every such test makes of the client's prompt split."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from agentx_tui.measure import ClientStats, Completed, Failed, PromptSplit, split_prompt
from agentx_tui.snapshot import Figures, RetentionRow

FORGET_S = 1.0  # the server forgets a block unused for longer than this
SHORT_S, LONG_S = 0.15, 2.2  # think times well inside and well past it
SERVER_BLOCK = 16


class Recorded:
    """A load sink: the run's statistics, keeping every completed call as counted (the test's own view)."""

    def __init__(self) -> None:
        self.stats = ClientStats(60.0, 0.0)
        self.done: list[Completed] = []

    def add(self, done: Completed) -> None:
        self.done.append(done)
        self.stats.add(done)

    def error(self, failed: Failed) -> None:
        self.stats.error(failed)

    def session_ended(self, how: str, tree: int = -1) -> None:
        self.stats.session_ended(how, tree)

    def run(self) -> Figures:
        """The whole run's figures, a second after its last call ended."""
        return self.stats.figures(max(d.ended_at for d in self.done) + 1).run


def split_of(d: Completed) -> PromptSplit:
    """The call's split into cold, hit and evicted tokens, which must add up to its prompt."""
    split = split_prompt(d.prompt_tokens, d.ceiling_tokens, d.cached_tokens)
    assert split is not None and split.hit is not None and split.evicted is not None
    assert split.cold + split.hit + split.evicted == d.prompt_tokens
    return split


def assert_the_cliff(done: Sequence[Completed], run: Figures) -> dict[float, RetentionRow]:
    """After a short idle all of what a call sent again was still cached, after a long one none of it:
    the evicted share is exactly the share of reused tokens sent after an idle gap longer than
    `FORGET_S`, and the curve is 1 in the 0–1 s bucket and 0 in the 2–5 s one (the think times, plus
    the client's own few ms). The curve's rows, by their lower edge."""
    for d in done:
        split = split_of(d)
        if d.idle_s is not None and d.idle_s < FORGET_S:
            assert split.reused > 0 and split.hit == split.reused
        elif d.idle_s is not None:  # gone: the whole session's prefix was forgotten
            assert split.reused > 0 and split.hit == 0
    reused = sum(d.ceiling_tokens or 0 for d in done)
    after_long_idle = sum(d.ceiling_tokens or 0 for d in done if d.idle_s is not None and d.idle_s > FORGET_S)
    assert 0 < after_long_idle < reused
    assert run.prefix_evicted_share == pytest.approx(after_long_idle / reused, abs=1e-12)
    curve = {row.idle_s_low: row for row in run.retention_curve or () if isinstance(row, RetentionRow)}
    assert set(curve) == {0.0, 2.0}
    assert curve[0.0].hit_share == 1.0 and curve[2.0].hit_share == 0.0
    return curve
