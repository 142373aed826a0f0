"""The launcher against the real vLLM engine (CPU build, tiny model)."""

from __future__ import annotations

import json

import httpx
import pytest

from agentx_tui.engine import TINY_SERVED_NAME, probe_server

pytestmark = pytest.mark.vllm


def _stream(url: str, messages: list[dict[str, str]], n: int) -> tuple[int, dict[str, object]]:
    body = {
        "model": TINY_SERVED_NAME,
        "messages": messages,
        "max_tokens": n,
        "min_tokens": n,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    chunks = 0
    usage: dict[str, object] = {}
    with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=60) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            if event.get("usage"):
                usage = event["usage"]
            for choice in event.get("choices", []):
                if choice.get("delta", {}).get("content"):
                    chunks += 1
    return chunks, usage


def test_models_lists_the_tiny_model(vllm_url: str) -> None:
    payload = httpx.get(vllm_url + "/v1/models").json()
    assert payload["data"][0]["id"] == TINY_SERVED_NAME
    assert payload["data"][0]["max_model_len"] == 4096


async def test_probe_recognises_vllm(vllm_url: str) -> None:
    info = await probe_server(vllm_url)
    assert info.flavor == "vllm"
    assert info.model == TINY_SERVED_NAME
    assert info.max_model_len == 4096
    assert info.engine_version and info.engine_version.startswith("0.")
    assert info.has_metrics


def test_streaming_gives_exact_length_and_cached_prefix(vllm_url: str) -> None:
    shared = "The agent reads the repository and plans a change. " * 60
    first = [{"role": "system", "content": shared}, {"role": "user", "content": "first question"}]
    chunks, usage = _stream(vllm_url, first, 24)
    assert usage["completion_tokens"] == 24
    assert chunks > 0
    second = [{"role": "system", "content": shared}, {"role": "user", "content": "another question"}]
    _, usage2 = _stream(vllm_url, second, 8)
    assert usage2["completion_tokens"] == 8
    details = usage2["prompt_tokens_details"]
    assert isinstance(details, dict) and details["cached_tokens"] > 0
