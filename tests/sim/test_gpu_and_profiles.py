"""Profiles, the roofline time model, simulated GPU telemetry and the calibration table."""

from __future__ import annotations

import re
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from agentx_tui.errors import UsageError
from agentx_tui.hardware import peak_rows
from agentx_tui.sim import list_profiles, load_profile
from agentx_tui.sim.calibration import calibration_rows
from agentx_tui.sim.gpu import GpuTelemetry
from agentx_tui.sim.metrics import ITL_BUCKETS, FastHistogram
from agentx_tui.sim.timing import TimeModel
from agentx_tui.sim.tokenizer import _PIECE, SimTokenizer


def test_every_profile_loads_and_fits() -> None:
    names = list_profiles()
    assert len(names) >= 9
    for name in names:
        p = load_profile(name)
        assert p.gpus == 1 and p.block_size == 16
        assert p.max_model_len <= (p.num_gpu_blocks - 1) * p.block_size
        assert p.gpu_name in {"H100", "H200", "B200"}


def test_the_simulated_gpus_peaks_are_the_tools_one_table() -> None:
    # Each GPU's dense BF16 peak and HBM bandwidth come from hardware/peaks.yaml, the table MFU and MBU are
    # measured against: written once, so the two cannot drift apart.
    rows = peak_rows()
    for gpu in ("h100", "h200", "b200"):
        spec = load_profile(gpu).gpu
        assert spec.peaks == gpu
        assert (spec.bf16_tflops, spec.hbm_tb_s) == (rows[gpu]["bf16_tflops"], rows[gpu]["hbm_tb_s"])
    written = (resources.files("agentx_tui.sim") / "profiles.yaml").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(bf16_tflops|hbm_tb_s):", written, re.MULTILINE)


def test_unknown_profile_lists_the_known_ones() -> None:
    with pytest.raises(UsageError) as info:
        load_profile("a100/llama-3.1-8b")
    assert "h200/llama-3.1-8b" in str(info.value)


def test_prefill_is_compute_bound_and_decode_bandwidth_bound() -> None:
    tm = TimeModel(load_profile("h100/llama-3.1-8b"))
    prefill = tm.step([(4096, 0)])
    decode = tm.step([(1, 1000)] * 8)
    assert prefill.compute_s > prefill.memory_s
    assert decode.memory_s > decode.compute_s
    # Decode reads the weights once per step: 8 sequences cost far less than 8 single steps.
    assert decode.duration_s < 2 * tm.step([(1, 1000)]).duration_s


def test_moe_reads_more_experts_as_the_batch_grows() -> None:
    tm = TimeModel(load_profile("h200/qwen3-30b-a3b"))
    assert tm.weight_bytes(1) < tm.weight_bytes(16) < tm.weight_bytes(512)
    assert tm.weight_bytes(512) == pytest.approx(30.53e9 * 2, rel=0.01)


def test_gpu_telemetry_follows_steps() -> None:
    profile = load_profile("h200/llama-3.1-8b")
    gpu = GpuTelemetry(profile, start=0.0)
    idle = gpu.sample(0.5)
    assert idle["util_pct"] == 0 and idle["power_w"] == profile.gpu.idle_w
    t = 1.0
    while t < 2.0:
        t += 0.01
        gpu.record(t, 0.008, 1.0, 0.1)  # 80% busy, memory-bound
    busy = gpu.sample(t)
    assert busy["util_pct"] == 80
    assert profile.gpu.idle_w < busy["power_w"] < profile.gpu.tdp_w
    assert busy["sm_clock_mhz"] == profile.gpu.sm_clock_max_mhz
    while t < 60.0:  # a minute of load heats the GPU (20 s time constant)
        t += 0.01
        gpu.record(t, 0.008, 1.0, 0.1)
        if round(t * 100) % 100 == 0:
            gpu.sample(t)
    assert gpu.sample(t)["temp_c"] > idle["temp_c"] + 10


def test_tokenizer_is_deterministic_and_chat_adds_fixed_overhead() -> None:
    a, b = SimTokenizer(128256), SimTokenizer(128256)
    text = "Read the file, then call tool_42 with the result."
    assert a.encode(text) == b.encode(text)
    one = a.encode_chat([{"role": "user", "content": "hello world"}])
    two = a.encode_chat([{"role": "user", "content": "hello world"}, {"role": "user", "content": "hello world"}])
    assert len(two) - len(one) == len(one) - 5  # per message: content + 5; per conversation: 1 + 4


def test_calibration_within_25_percent_of_published_vllm_figures() -> None:
    rows = calibration_rows()
    assert {r.profile for r in rows} >= {"h100/llama-3.1-8b", "h200/llama-3.1-8b"}
    for row in rows:
        assert abs(row.error) <= 0.25, (row.id, row.published, row.simulated)


def test_cached_chat_encoding_equals_encoding_the_rendered_text() -> None:
    tok = SimTokenizer(128256)
    messages = [
        {"role": "system", "content": "You are a coding agent.\n\n  Tools: read, write  "},
        {"role": "user", "content": [{"type": "text", "text": "Fix bug #12 in parser.py!"}]},
        {"role": "assistant", "content": ""},
        {"role": "tool", "content": "   \n"},
    ]
    for _ in range(2):
        assert tok.encode_chat(messages) == tok.encode(tok.render_chat(messages))
        assert tok.encode_chat(messages, add_generation_prompt=False) == tok.encode(
            tok.render_chat(messages, add_generation_prompt=False)
        )


def test_special_tokens_survive_trailing_whitespace() -> None:
    tok = SimTokenizer(128256)
    pieces = tok.pieces(tok.render_chat([{"role": "user", "content": "write  "}]))
    assert pieces.count("<|eot_id|>") == 1 and "  " in pieces


def test_profile_aliases_resolve_to_the_canonical_name() -> None:
    assert load_profile("H200/llama-8b").name == "h200/llama-3.1-8b"
    assert load_profile("b200").name == "b200/llama-3.1-8b"
    assert load_profile("h100/qwen3-moe").model_id == "Qwen/Qwen3-30B-A3B"


# The pre-tokenizer in the order docs/sim.md states its precedence; `tokenizer._PIECE` tries words first.
_SPEC_ORDER = re.compile(
    r"<\|[a-z_]+\|>"
    r"|\s+(?=<\|[a-z_]+\|>)"
    r"|[ \n]?[A-Za-z]{1,10}"
    r"|[ \n]?[0-9]{1,3}"
    r"|[ \n]?[^\sA-Za-z0-9]"
    r"|\s+(?!\S)"
    r"|\s+"
)
_PARTS = st.sampled_from(
    [*"abcXYZ019 \n\t,.<|>_{\"\\é漢", "  ", "\r\n", "<|eot_id|>", "<|start_header_id|>", "<|a|>", " <|eot_id|>",
     "\n\n<|end_header_id|>", "word", "abcdefghijklm", "12345"]
)  # fmt: skip


@given(st.lists(_PARTS, max_size=80).map("".join))
@settings(max_examples=400, deadline=None)
def test_pre_tokenizer_matches_its_documented_precedence(text: str) -> None:
    assert _PIECE.findall(text) == _SPEC_ORDER.findall(text)


def test_fast_histogram_is_exposed_exactly_like_prometheus_clients() -> None:
    values = [0.004, 0.01, 0.011, 0.3, 2.0, 99.0, 0.0250001]
    real_registry, fast_registry = CollectorRegistry(), CollectorRegistry()
    real = Histogram("x:itl", "Doc.", ["model_name", "engine"], buckets=ITL_BUCKETS, registry=real_registry)
    fast = FastHistogram("x:itl", "Doc.", {"model_name": "m", "engine": "0"}, ITL_BUCKETS)
    fast_registry.register(fast)
    for v in values:
        real.labels("m", "0").observe(v)
    for v in values[:3]:
        fast.observe(v)
    fast.observe_n(0.3, 1)
    fast.observe_n(2.0, 1)
    fast.observe_n(99.0, 1)
    fast.observe(0.0250001)

    def lines(registry: CollectorRegistry) -> list[str]:
        return [ln for ln in generate_latest(registry).decode().splitlines() if "_created" not in ln]

    assert lines(fast_registry) == lines(real_registry)
    created = [ln for ln in generate_latest(fast_registry).decode().splitlines() if ln.startswith("x:itl_created")]
    assert len(created) == 1
