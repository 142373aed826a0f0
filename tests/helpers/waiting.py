"""Waiting in async tests for something the code under test does on its own time: on a condition,
never on a fixed sleep (a busy machine makes things late, not wrong)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


async def until(
    cond: Callable[[], bool],
    timeout: float = 5.0,
    *,
    what: str = "condition",
    each: Callable[[], Awaitable[object]] | None = None,
    every_s: float = 0.02,
) -> None:
    """Poll `cond` every `every_s` seconds (first running `each`, e.g. a tick's sample); fail the test
    when it is still false after `timeout` seconds, saying `what` was awaited."""
    deadline = time.monotonic() + timeout
    while True:
        if each is not None:
            await each()
        if cond():
            return
        if time.monotonic() >= deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        await asyncio.sleep(every_s)
