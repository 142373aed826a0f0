from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.load.fake_openai import FakeServer


@pytest.fixture
async def fake() -> AsyncIterator[FakeServer]:
    server = await FakeServer().start()
    yield server
    await server.close()
