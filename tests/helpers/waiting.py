"""Waiting in async tests for something the code under test does on its own time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


async def until(cond: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll `cond` every 20 ms; fail the test when it is still false after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached")
