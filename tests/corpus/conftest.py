"""Every corpus test runs against the fixture hub (hub.py) or no hub at all, with the hub's cache in the
test's own folder: none reaches the internet or the user's cache, and none sees the user's token."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import huggingface_hub.constants
import pytest

from tests.corpus.hub import FixtureHub, closed_endpoint


@pytest.fixture(autouse=True)
def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The hub's settings for one test: the cache under tmp_path, online, no token, no real endpoint."""
    home = tmp_path / "hf-home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_ENDPOINT", closed_endpoint())  # a test that wants a hub starts one
    for name in ("HF_HUB_CACHE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    # The library read these when it was imported (a CI machine may have set HF_HUB_OFFLINE globally).
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    # Its user-agent telemetry asks {the endpoint at import}/api/agent-harnesses once and caches the answer in
    # the user's HF_HOME: neither may happen in a test.
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_TELEMETRY", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    return home


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FixtureHub]:
    server = FixtureHub()
    monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
    try:
        yield server
    finally:
        server.stop()
