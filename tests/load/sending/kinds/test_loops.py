"""The loops' registry: every kind that sends has one loop, in the module named after the kind."""

from __future__ import annotations

import pytest

from agentx_tui.load.sending.kinds import LOOPS
from agentx_tui.load.workload.kinds import KINDS


def test_every_kind_that_sends_has_a_loop() -> None:
    assert set(LOOPS) == set(KINDS) - {"none"}


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_a_loop_is_named_after_its_kind(name: str) -> None:
    loop = LOOPS[name]
    assert isinstance(loop, type)
    assert loop.__module__ == f"agentx_tui.load.sending.kinds.{name}"
    assert loop.__name__ == f"{name.capitalize()}Loop"
