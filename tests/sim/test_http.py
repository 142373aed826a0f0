"""The simulator as an HTTP server (a real subprocess on a free loopback port)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from agentx_tui import __version__
from tests.helpers.sim import sim_server

SIM_MODEL = "meta-llama/Llama-3.1-8B-Instruct"  # the served name of the default profile

WORDS = [
    "plan",
    "the",
    "next",
    "step",
    "then",
    "call",
    "the",
    "search",
    "tool",
    "and",
    "read",
    "the",
    "result",
    "carefully",
]


def text_of(n_words: int, offset: int = 0) -> str:
    return " ".join(WORDS[(i + offset) % len(WORDS)] for i in range(n_words))


async def stream_chat(client: httpx.AsyncClient, messages: list[dict[str, str]], n: int) -> dict[str, Any]:
    body = {
        "model": SIM_MODEL,
        "messages": messages,
        "max_tokens": n,
        "min_tokens": n,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.7,
    }
    chunks: list[dict[str, Any]] = []
    async with client.stream("POST", "/v1/chat/completions", json=body) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        done = False
        async for line in resp.aiter_lines():
            if not line.startswith("data: "):
                continue
            if line == "data: [DONE]":
                done = True
                continue
            chunks.append(json.loads(line[6:]))
        assert done
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    finish = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    return {"content": content, "finish": finish, "usage": chunks[-1]["usage"], "chunks": chunks}


def metrics(client: httpx.Client) -> dict[str, float]:
    text = client.get("/metrics").text
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            key = s.name + ("" if not s.labels.get("finished_reason") else f"{{{s.labels['finished_reason']}}}")
            out[key] = out.get(key, 0.0) + s.value
    return out


def test_version_identifies_the_simulator(sim_url: str) -> None:
    body = httpx.get(f"{sim_url}/version").json()
    assert body == {
        "version": f"{__version__}-sim",
        "agentx_sim": {
            "profile": "h200/llama-3.1-8b",
            "gpu": "H200",
            "gpus": 1,
            "model": SIM_MODEL,
            "bf16_tflops": 989.4,
            "hbm_tb_s": 4.8,
            "kv_cache_metrics_sample": 1.0,
            "cpu_kv_bytes": 0,  # no CPU KV tier unless asked for
            "cpu_kv_gb_per_s": None,
        },
    }


async def test_streamed_chat_has_exact_length_and_usage(sim_url: str) -> None:
    async with httpx.AsyncClient(base_url=sim_url, timeout=30) as client:
        out = await stream_chat(client, [{"role": "user", "content": text_of(40)}], 37)
        tokenized = (
            await client.post(
                "/tokenize", json={"model": SIM_MODEL, "messages": [{"role": "user", "content": text_of(40)}]}
            )
        ).json()
    assert out["usage"]["completion_tokens"] == 37
    assert out["usage"]["prompt_tokens"] == tokenized["count"]
    assert out["finish"][-1] == "length"
    assert out["chunks"][0]["choices"][0]["delta"]["role"] == "assistant"
    # The text the sim streams re-tokenises to exactly the tokens it reports.
    count = httpx.post(f"{sim_url}/tokenize", json={"prompt": out["content"], "add_special_tokens": False})
    assert count.json()["count"] == 37


def test_completions_non_streaming_exact_length(sim_url: str) -> None:
    body = {"model": SIM_MODEL, "prompt": text_of(30), "max_tokens": 21, "min_tokens": 21, "ignore_eos": True}
    resp = httpx.post(f"{sim_url}/v1/completions", json=body, timeout=30).json()
    assert resp["object"] == "text_completion"
    assert resp["usage"]["completion_tokens"] == 21
    assert resp["choices"][0]["finish_reason"] == "length"
    assert resp["usage"]["prompt_tokens"] == 31  # 30 words + BOS


async def test_shared_prefix_reports_cached_tokens_and_server_hits(sim_url: str) -> None:
    system = {"role": "system", "content": text_of(300, offset=3)}
    with httpx.Client(base_url=sim_url) as sync:
        before = metrics(sync)
    async with httpx.AsyncClient(base_url=sim_url, timeout=30) as client:
        first = await stream_chat(client, [system, {"role": "user", "content": "alpha one"}], 4)
        second = await stream_chat(client, [system, {"role": "user", "content": "beta two"}], 4)
    assert first["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    cached = second["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached > 250 and cached % 16 == 0
    with httpx.Client(base_url=sim_url) as sync:
        after = metrics(sync)
    assert after["vllm:prefix_cache_hits_total"] - before["vllm:prefix_cache_hits_total"] == cached
    assert after["vllm:prompt_tokens_cached_total"] - before["vllm:prompt_tokens_cached_total"] == cached
    queries = after["vllm:prefix_cache_queries_total"] - before["vllm:prefix_cache_queries_total"]
    assert queries == first["usage"]["prompt_tokens"] + second["usage"]["prompt_tokens"]


def test_errors_look_like_vllm(sim_url: str) -> None:
    wrong = httpx.post(f"{sim_url}/v1/completions", json={"model": "nope", "prompt": "hi", "max_tokens": 2})
    assert wrong.status_code == 404
    assert wrong.json()["error"]["type"] == "NotFoundError"
    too_long = httpx.post(f"{sim_url}/v1/completions", json={"prompt": "hi", "max_tokens": 10**7})
    assert too_long.status_code == 400
    assert too_long.json()["error"]["code"] == 400


async def test_kv_pressure_preempts_and_queues(sim_pressure_url: str) -> None:
    waiting_seen: list[float] = []

    async def watch(client: httpx.AsyncClient) -> None:
        while True:
            text = (await client.get("/metrics")).text
            for family in text_string_to_metric_families(text):
                if family.name == "vllm:num_requests_waiting":
                    waiting_seen.append(family.samples[0].value)
            await asyncio.sleep(0.02)

    async with httpx.AsyncClient(base_url=sim_pressure_url, timeout=60) as client:
        watcher = asyncio.create_task(watch(client))
        convs = [[{"role": "user", "content": text_of(120, offset=i)}] for i in range(24)]
        results = await asyncio.gather(*(stream_chat(client, c, 100) for c in convs))
        watcher.cancel()
    assert max(waiting_seen) >= 8  # 24 requests, at most 16 running
    assert all(r["usage"]["completion_tokens"] == 100 for r in results)
    with httpx.Client(base_url=sim_pressure_url) as sync:
        m = metrics(sync)
        info = sync.get("/metrics").text
    assert m["vllm:num_preemptions_total"] > 0
    assert m["vllm:request_success_total{length}"] == 24
    assert 'num_gpu_blocks="48"' in info
    assert m["vllm:request_queue_time_seconds_count"] == 24


def test_dcgm_gauges_have_dcgm_names_types_and_labels(sim_url: str) -> None:
    fams = {f.name: f for f in text_string_to_metric_families(httpx.get(f"{sim_url}/metrics").text)}
    for name in (
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_FB_FREE",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_SM_CLOCK",
    ):
        family = fams[name]
        assert family.type == "gauge"
        sample = family.samples[0]
        assert {"gpu", "UUID", "modelName", "Hostname"} <= set(sample.labels)
        assert sample.labels["modelName"] == "NVIDIA H200"
    util = fams["DCGM_FI_DEV_GPU_UTIL"].samples[0].value
    assert 0 <= util <= 100
    used, free = fams["DCGM_FI_DEV_FB_USED"].samples[0].value, fams["DCGM_FI_DEV_FB_FREE"].samples[0].value
    assert used + free == 143771


def test_dcgm_energy_is_a_counter_of_the_power_model(sim_url: str) -> None:
    """As dcgm-exporter writes it: mJ since start, samples without `_total`; an idle H200 profile draws its
    idle 76 W, so two scrapes 0.5 s apart differ by about 38 J (the steps of other tests aside: more)."""

    def energy_mj() -> tuple[float, float]:
        text = httpx.get(f"{sim_url}/metrics").text
        line = next(x for x in text.splitlines() if x.startswith("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{"))
        return time.monotonic(), float(line.rsplit(" ", 1)[1])

    (t0, e0), _ = energy_mj(), time.sleep(0.5)
    t1, e1 = energy_mj()
    assert e0 > 0
    assert (e1 - e0) / 1000 >= 76 * (t1 - t0) * 0.8  # idle power at least (clocks of two processes)


def _gpu_labels(url: str) -> list[dict[str, str]]:
    fams = {f.name: f for f in text_string_to_metric_families(httpx.get(f"{url}/metrics").text)}
    return [s.labels for s in fams["DCGM_FI_DEV_GPU_UTIL"].samples]


def test_each_simulator_is_its_own_gpu(sim_url: str) -> None:
    first = _gpu_labels(sim_url)
    with sim_server() as other_url:
        second = _gpu_labels(other_url)
        assert _gpu_labels(other_url) == second  # stable for the life of the instance
    assert _gpu_labels(sim_url) == first
    assert len(first) == len(second) == 1
    assert first[0]["UUID"] != second[0]["UUID"]
    for labels in (first[0], second[0]):
        assert labels["UUID"].startswith("GPU-") and len(labels["UUID"]) == 40
        assert labels["Hostname"] == socket.gethostname()


def test_the_simulator_reports_its_own_lag(sim_url: str) -> None:
    fams = {f.name: f for f in text_string_to_metric_families(httpx.get(f"{sim_url}/metrics").text)}
    lag, lost, cpu = (
        fams["agentx_sim:engine_lag_seconds"],
        fams["agentx_sim:engine_lost_seconds"],
        fams["agentx_sim:cpu_seconds"],
    )
    assert (lag.type, lost.type, cpu.type) == ("gauge", "counter", "counter")
    assert lag.samples[0].labels == {"model_name": SIM_MODEL, "engine": "0"}
    assert 0.0 <= lag.samples[0].value < 0.5  # an idle simulator keeps up
    assert [s.name for s in lost.samples] == ["agentx_sim:engine_lost_seconds_total"]
    assert cpu.samples[0].value > 0


def test_list_profiles_cli() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agentx_tui.sim", "--list-profiles"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert {"h100/llama-3.1-8b", "h200/qwen3-32b", "b200/qwen3-30b-a3b"} <= set(out)
    bad = subprocess.run([sys.executable, "-m", "agentx_tui.sim", "--profile", "x/y"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "h200/llama-3.1-8b" in bad.stderr


async def test_client_disconnect_aborts_and_frees_the_request(sim_url: str) -> None:
    with httpx.Client(base_url=sim_url) as sync:
        before = metrics(sync)
    body = {
        "model": SIM_MODEL,
        "messages": [{"role": "user", "content": text_of(50)}],
        "max_tokens": 5000,
        "min_tokens": 5000,
        "ignore_eos": True,
        "stream": True,
    }
    async with httpx.AsyncClient(base_url=sim_url, timeout=30) as client:
        async with client.stream("POST", "/v1/chat/completions", json=body) as resp:
            seen = 0
            async for line in resp.aiter_lines():
                seen += line.startswith("data: ")
                if seen >= 3:
                    break
        for _ in range(100):
            m = metrics(httpx.Client(base_url=sim_url))
            if m["vllm:num_requests_running"] == 0:
                break
            await asyncio.sleep(0.05)
    assert m["vllm:num_requests_running"] == 0
    assert m["vllm:kv_cache_usage_perc"] == 0.0
    assert m["vllm:request_success_total{abort}"] == before["vllm:request_success_total{abort}"] + 1


def test_sigterm_stops_the_server_promptly() -> None:
    import os
    import select
    import signal
    import time

    read_fd, write_fd = os.pipe()
    cmd = [sys.executable, "-m", "agentx_tui.sim", "--port", "0", "--ready-fd", str(write_fd)]
    proc = subprocess.Popen(cmd, pass_fds=(write_fd,))
    os.close(write_fd)
    try:
        assert select.select([read_fd], [], [], 20)[0]
        port = int(os.read(read_fd, 32))
        assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - start < 5
    finally:
        os.close(read_fd)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
