"""The compact number formats shown on every pane."""

from __future__ import annotations

import pytest

from agentx_tui.redaction import MASK
from agentx_tui.redaction import redact as scrub
from agentx_tui.ui._format import bar, compact, count, duration, money, percent, seconds, split_compact


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "n/a"),
        (0, "0"),
        (0.5, "0.500"),
        (12.34, "12.3"),
        (830, "830"),
        (1234, "1.23 K"),
        (830_000, "830 K"),
        (1.3e9, "1.30 B"),
        (2.5e12, "2.50 T"),
        (-4200, "-4.20 K"),
    ],
)
def test_compact(value: float | None, text: str) -> None:
    assert compact(value) == text


def test_other_formats() -> None:
    assert percent(None) == "n/a" and percent(0.781) == "78.1%"
    assert seconds(None) == "n/a" and seconds(0.17) == "170 ms" and seconds(0.008) == "8.0 ms"
    assert seconds(1.5) == "1.50 s"
    assert duration(3725) == "1:02:05" and duration(None) == "n/a"
    assert money(None) == "n/a" and money(0.0123) == "$0.0123" and money(12.5) == "$12.50"
    assert split_compact(1.3e9) == ("1.30", "B") and split_compact(None) == ("n/a", "")


def test_bar() -> None:
    assert bar(None, 5) == "     "
    assert bar(0.5, 10) == "█████     "
    assert bar(1.7, 4) == "████"
    assert len(bar(0.33, 10)) == 10


def test_scrub_masks_raw_and_escaped_secrets() -> None:
    secret = "sk-a&b<c>"
    text = f"key={secret} svg=sk-a&amp;b&lt;c&gt; short=ab"
    cleaned = scrub(text, [secret, "ab"])
    assert secret not in cleaned and "sk-a&amp;b" not in cleaned
    assert cleaned.count(MASK) == 2
    assert "short=ab" in cleaned  # too short to be a key: left alone


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "n/a"), (0, "0"), (12.0, "12"), (48, "48"), (999, "999"), (1234, "1.23 K"), (6144, "6.14 K")],
)
def test_count_shows_whole_things_without_decimals(value: float | None, text: str) -> None:
    assert count(value) == text
