"""Fixtures of the end-to-end tests: a terminal of their own (tmux)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator

import pytest

from tests.helpers.tmux import Tmux


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    """A tmux server of the test's own, killed (with whatever still runs in it) when the test ends."""
    server = Tmux(f"agentx-test-{os.getpid()}")
    yield server
    with contextlib.suppress(subprocess.SubprocessError, OSError):
        server("kill-server")
