"""What the terminal allows: colour only on a terminal, and never when NO_COLOR is set (no-color.org:
present and not empty). The one place that reads NO_COLOR; a page served to a browser ignores it."""

from __future__ import annotations

import os
from typing import TextIO

NO_COLOR_ENV = "NO_COLOR"


def no_color() -> bool:
    return bool(os.environ.get(NO_COLOR_ENV))


def wants_color(stream: TextIO) -> bool:
    """Escape sequences for `stream`: a terminal, and NO_COLOR not set."""
    if no_color():
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):  # a closed stream (the terminal went away)
        return False
