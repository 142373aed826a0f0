"""Contract tests: the same small suite against the simulator and the real vLLM engine (tiny model),
plus the list of what the simulator deliberately does not copy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

PROMPT_WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "the",
    "lazy",
    "dog",
    "while",
    "agents",
    "call",
    "tools",
]


@dataclass(frozen=True)
class Target:
    url: str
    model: str


def _target(url: str) -> Target:
    model = httpx.get(f"{url}/v1/models", timeout=10).json()["data"][0]["id"]
    return Target(url, model)


@pytest.fixture(params=["sim", pytest.param("vllm", marks=pytest.mark.vllm)])
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    name = "sim_url" if request.param == "sim" else "vllm_url"
    yield _target(request.getfixturevalue(name))


def words(n: int, offset: int = 0) -> str:
    return " ".join(PROMPT_WORDS[(i + offset) % len(PROMPT_WORDS)] for i in range(n))


def families(url: str) -> dict[str, Any]:
    return {f.name: f for f in text_string_to_metric_families(httpx.get(f"{url}/metrics", timeout=10).text)}


def label_names(family: Any) -> frozenset[str]:
    return frozenset(k for s in family.samples for k in s.labels if k != "le")


def stream(t: Target, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    chunks = []
    with httpx.stream("POST", f"{t.url}{path}", json={"model": t.model, **body}, timeout=60) as resp:
        assert resp.status_code == 200
        lines = [line for line in resp.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in lines[:-1]]
    return chunks


EXACT = {"min_tokens": 9, "max_tokens": 9, "ignore_eos": True, "temperature": 0.8}
USAGE = {"stream": True, "stream_options": {"include_usage": True}}


# --- the shared suite: every test runs against both engines ---------------------------------------


def test_health_and_version(target: Target) -> None:
    health = httpx.get(f"{target.url}/health")
    assert health.status_code == 200 and health.content == b""
    assert isinstance(httpx.get(f"{target.url}/version").json()["version"], str)


def test_models_shape(target: Target) -> None:
    body = httpx.get(f"{target.url}/v1/models").json()
    assert body["object"] == "list"
    card = body["data"][0]
    assert {"id", "object", "created", "owned_by", "root", "parent", "max_model_len", "permission"} <= set(card)
    assert card["object"] == "model" and card["owned_by"] == "vllm"
    assert isinstance(card["max_model_len"], int) and card["max_model_len"] > 0


def test_tokenize_shape(target: Target) -> None:
    by_prompt = httpx.post(f"{target.url}/tokenize", json={"model": target.model, "prompt": words(20)}).json()
    by_chat = httpx.post(
        f"{target.url}/tokenize",
        json={"model": target.model, "messages": [{"role": "user", "content": words(20)}]},
    ).json()
    for body in (by_prompt, by_chat):
        assert set(body) == {"count", "max_model_len", "tokens", "token_strs"}
        assert body["count"] == len(body["tokens"]) > 0
    assert by_chat["count"] > by_prompt["count"]  # the chat template adds tokens


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/completions"])
def test_streamed_exact_output_length_and_usage(target: Target, path: str) -> None:
    body: dict[str, Any] = {**EXACT, **USAGE}
    if path.endswith("chat/completions"):
        body["messages"] = [{"role": "user", "content": words(30)}]
    else:
        body["prompt"] = words(30)
    chunks = stream(target, path, body)
    usage = chunks[-1]["usage"]
    assert chunks[-1]["choices"] == []
    assert usage["completion_tokens"] == 9
    assert usage["total_tokens"] == usage["prompt_tokens"] + 9
    assert "cached_tokens" in usage["prompt_tokens_details"]
    finish = [c["choices"][0]["finish_reason"] for c in chunks[:-1]]
    assert finish[-1] == "length" and all(f is None for f in finish[:-1])
    kind = "chat.completion.chunk" if "chat" in path else "text_completion"
    assert all(c["object"] == kind and c["model"] == target.model for c in chunks)


def test_non_streamed_chat_shape(target: Target) -> None:
    body = {"model": target.model, "messages": [{"role": "user", "content": words(12)}], **EXACT}
    resp = httpx.post(f"{target.url}/v1/chat/completions", json=body, timeout=60).json()
    assert {"id", "object", "created", "model", "choices", "usage"} <= set(resp)
    assert resp["object"] == "chat.completion"
    choice = resp["choices"][0]
    assert choice["message"]["role"] == "assistant" and choice["finish_reason"] == "length"
    assert resp["usage"]["completion_tokens"] == 9


def test_cached_tokens_on_a_shared_prefix(target: Target) -> None:
    block = int(families(target.url)["vllm:cache_config_info"].samples[0].labels["block_size"])
    system = {"role": "system", "content": words(600, offset=5)}
    results = []
    for question in ("first question here", "second question there"):
        body = {"messages": [system, {"role": "user", "content": question}], **EXACT, **USAGE}
        results.append(stream(target, "/v1/chat/completions", body)[-1]["usage"])
    assert results[0]["prompt_tokens"] > 2 * block
    cached = results[1]["prompt_tokens_details"]["cached_tokens"]
    assert cached >= block and cached % block == 0


def test_error_shape(target: Target) -> None:
    resp = httpx.post(f"{target.url}/v1/completions", json={"model": "no-such-model", "prompt": "x", "max_tokens": 1})
    assert resp.status_code == 404
    assert set(resp.json()["error"]) == {"message", "type", "param", "code"}


def test_core_metric_names_types_labels(target: Target) -> None:
    fams = families(target.url)
    expected = {
        "vllm:num_requests_running": "gauge",
        "vllm:num_requests_waiting": "gauge",
        "vllm:kv_cache_usage_perc": "gauge",
        "vllm:prefix_cache_queries": "counter",
        "vllm:prefix_cache_hits": "counter",
        "vllm:prompt_tokens": "counter",
        "vllm:generation_tokens": "counter",
        "vllm:prompt_tokens_cached": "counter",
        "vllm:num_preemptions": "counter",
        "vllm:request_success": "counter",
        "vllm:time_to_first_token_seconds": "histogram",
        "vllm:inter_token_latency_seconds": "histogram",
        "vllm:e2e_request_latency_seconds": "histogram",
        "vllm:request_queue_time_seconds": "histogram",
        "vllm:cache_config_info": "gauge",
    }
    for name, kind in expected.items():
        assert fams[name].type == kind, name
    assert label_names(fams["vllm:num_requests_running"]) == {"model_name", "engine"}
    assert label_names(fams["vllm:request_success"]) == {"model_name", "engine", "finished_reason"}
    assert {"block_size", "num_gpu_blocks", "enable_prefix_caching"} <= label_names(fams["vllm:cache_config_info"])


# --- sim against real: same names, types, labels, buckets; the documented differences ---------------

# vLLM metric families the simulator does not produce, and why.
NOT_SIMULATED = {
    "vllm:engine_sleep_state": "the sim has no sleep mode",
    "vllm:mm_cache_queries": "text only: no multimodal cache",
    "vllm:mm_cache_hits": "text only: no multimodal cache",
    "vllm:admission_rejections": "the sim admits every valid request",
    "vllm:request_params_n": "the sim serves n=1 only",
}

# Other known differences (checked where they can be).
DIFFERENCES = [
    "tokenizer: a deterministic word-piece pre-tokenizer, not the model's BPE (docs/sim.md)",
    "chat template: Llama 3.1 style markers only, no system date header",
    "generated text: words from a fixed pool; without ignore_eos the length is a per-request pseudo-random"
    " 32-512 tokens",
    "usage.prompt_tokens_details is always present (vLLM needs --enable-prompt-tokens-details)",
    "the estimated-work (MFU) counters are always exported (vLLM needs --enable-mfu-metrics)",
    "n > 1, logprobs, stop strings, tools, guided decoding and multimodal inputs are not simulated",
    "no HTTP-server metrics (http_*), process_* or python_* families: the registry is private",
    "block size 16 (GPU vLLM), while the CPU build of the contract tests uses 128",
    "`_created` series of counters/histograms appear as samples, not as separate gauge families",
]


def _vllm_families(url: str) -> dict[str, Any]:
    # vLLM's text shows each counter's `_created` series as a family of its own; the sim's as samples.
    return {n: f for n, f in families(url).items() if n.startswith("vllm:") and not n.endswith("_created")}


@pytest.mark.vllm
def test_sim_metrics_are_a_subset_of_real_vllm(sim_url: str, vllm_url: str) -> None:
    sim, real = _vllm_families(sim_url), _vllm_families(vllm_url)
    assert set(sim) <= set(real), set(sim) - set(real)
    for name, fam in sim.items():
        assert fam.type == real[name].type, name
        assert label_names(fam) <= label_names(real[name]), name
    for name in (
        "vllm:time_to_first_token_seconds",
        "vllm:inter_token_latency_seconds",
        "vllm:e2e_request_latency_seconds",
        "vllm:request_queue_time_seconds",
        "vllm:request_prefill_time_seconds",
        "vllm:request_decode_time_seconds",
        "vllm:request_inference_time_seconds",
        "vllm:request_num_preemptions",
        "vllm:iteration_tokens_total",
        "vllm:kv_block_idle_before_evict_seconds",  # the session's vLLM runs with --kv-cache-metrics
        "vllm:kv_block_reuse_gap_seconds",
        "vllm:kv_block_lifetime_seconds",
    ):
        sim_le = sorted({s.labels["le"] for s in sim[name].samples if "le" in s.labels})
        real_le = sorted({s.labels["le"] for s in real[name].samples if "le" in s.labels})
        assert sim_le == real_le, name


@pytest.mark.vllm
def test_metric_differences_are_exactly_the_documented_ones(sim_url: str, vllm_url: str) -> None:
    sim, real = _vllm_families(sim_url), _vllm_families(vllm_url)
    assert set(real) - set(sim) == set(NOT_SIMULATED)


def test_documented_differences_match_this_list() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "sim.md").read_text()
    for name in NOT_SIMULATED:
        assert f"`{name}`" in doc, name
    assert len(DIFFERENCES) >= 5


def test_usage_details_always_present_on_the_sim(sim_url: str) -> None:
    # One of the DIFFERENCES: vLLM needs --enable-prompt-tokens-details for this, the sim always sends it.
    t = _target(sim_url)
    body = {"model": t.model, "prompt": "hello", **EXACT}
    usage = httpx.post(f"{sim_url}/v1/completions", json=body, timeout=30).json()["usage"]
    assert usage["prompt_tokens_details"] == {"cached_tokens": 0}


@pytest.mark.vllm
def test_response_keys_are_a_subset_of_real_vllm(sim_url: str, vllm_url: str) -> None:
    def keys(url: str) -> dict[str, set[str]]:
        t = _target(url)
        chat = httpx.post(
            f"{url}/v1/chat/completions",
            timeout=60,
            json={"model": t.model, "messages": [{"role": "user", "content": "hi"}], **EXACT},
        ).json()
        chunks = stream(t, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], **EXACT, **USAGE})
        return {
            "chat": set(chat),
            "choice": set(chat["choices"][0]),
            "message": set(chat["choices"][0]["message"]),
            "usage": set(chat["usage"]),
            "chunk": set(chunks[1]),
            "chunk_choice": set(chunks[1]["choices"][0]),
            "usage_chunk": set(chunks[-1]) - {"system_fingerprint"},
            "model": set(httpx.get(f"{url}/v1/models").json()["data"][0]),
        }

    sim, real = keys(sim_url), keys(vllm_url)
    for part in sim:
        assert sim[part] <= real[part] | {"tool_calls"}, (part, sim[part] - real[part])
