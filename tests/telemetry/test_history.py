from __future__ import annotations

import sys

from agentx_tui.telemetry import History


def test_history_is_bounded_and_keeps_unknowns() -> None:
    h = History(maxlen=3)
    for value in [1.0, None, 3.0, 4.0]:
        h.push("tps", value)
    assert h.series("tps") == [None, 3.0, 4.0]
    assert h.series("never") == []
    h.clear()
    assert h.series("tps") == []


def test_memory_stays_flat_over_a_day_of_ticks() -> None:
    h = History(maxlen=600)
    for tick in range(600):
        h.push("a", float(tick))
    size = sys.getsizeof(h._series["a"])
    for tick in range(86_400):  # 24 h at 1 Hz
        h.push("a", float(tick))
    assert len(h.series("a")) == 600 and sys.getsizeof(h._series["a"]) == size
    assert h.series("a")[-1] == 86_399.0
