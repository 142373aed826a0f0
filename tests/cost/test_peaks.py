"""The GPU peaks file and which peak a run measures against (docs/metrics.md, "Roofline")."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentx_tui.cost import compute_dtype, load_peaks, resolve_peak
from agentx_tui.errors import UsageError


@pytest.fixture(autouse=True)
def _no_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def test_every_row_cites_its_datasheet_and_is_dense() -> None:
    table = load_peaks()
    assert {
        "h100",
        "h100-pcie",
        "h200",
        "b200",
        "b300",
        "gb200",
        "gb300",
        "mi300x",
        "mi325x",
        "mi355x",
        "a100",
        "l40s",
    } <= set(table.gpus)
    for key, row in table.gpus.items():
        assert "datasheet" in row.source and row.date, key
        # Dense FP8 is twice dense BF16 on every tensor core listed (a sparse figure would be 2× again).
        if row.fp8_tflops is not None:
            assert row.fp8_tflops == pytest.approx(2 * row.bf16_tflops, rel=0.03), key
    h100 = table.gpus["h100"]
    assert (h100.bf16_tflops, h100.fp8_tflops, h100.hbm_tb_s) == (989.4, 1978.9, 3.35)


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("NVIDIA H100 80GB HBM3", "h100"),
        ("NVIDIA H100 PCIe", "h100-pcie"),  # the longest matching word wins
        ("NVIDIA H100 NVL", "h100-nvl"),
        ("NVIDIA H200", "h200"),
        ("NVIDIA H200 NVL", "h200-nvl"),
        ("NVIDIA B200", "b200"),
        ("NVIDIA GB200", "gb200"),  # not b200
        ("NVIDIA A100-SXM4-80GB", "a100"),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
        ("NVIDIA A100 80GB PCIe", "a100-pcie"),
        ("NVIDIA L40S", "l40s"),
        ("AMD Instinct MI355X", "mi355x"),
        ("NVIDIA GH200 480GB", None),
        ("cpu", None),
    ],
)
def test_gpu_names_find_their_row(name: str, key: str | None) -> None:
    assert load_peaks().for_gpu_name(name) == key


def test_the_order_override_profile_datasheet() -> None:
    bf16 = ("bf16", "BF16 assumed")
    mine = resolve_peak(override=(500.0, 2.0), sim_peak=(989.4, 4.8), gpu_names=["NVIDIA H100 80GB HBM3"], dtype=bf16)
    assert (mine.tflops, mine.hbm_gb_per_s, mine.source) == (500.0, 2000.0, "--gpu-peak (BF16 assumed)")
    sim = resolve_peak(override=None, sim_peak=(989.4, 4.8), gpu_names=["x"], dtype=bf16, sim_gpu="H200")
    assert (sim.tflops, sim.hbm_gb_per_s, sim.source) == (989.4, 4800.0, "the simulator's H200 profile, BF16")
    table = resolve_peak(override=None, sim_peak=None, gpu_names=["NVIDIA H100 PCIe"] * 2, dtype=("fp8", "fp8"))
    assert (table.tflops, table.hbm_gb_per_s, table.dtype) == (1513.0, 2000.0, "fp8")
    assert table.source.startswith("h100-pcie: NVIDIA H100 Tensor Core GPU datasheet")


def test_no_peak_says_why_and_what_to_pass() -> None:
    bf16 = ("bf16", "BF16 assumed")
    none = resolve_peak(override=None, sim_peak=None, gpu_names=[], dtype=bf16)
    assert none.tflops is None and none.hbm_gb_per_s is None
    assert none.source == "no peak: no GPU seen (pass --gpu-peak TFLOPS,TBPS)"
    odd = resolve_peak(override=None, sim_peak=None, gpu_names=["Tesla T4"], dtype=bf16)
    assert odd.tflops is None and "'Tesla T4'" in odd.source and "--gpu-peak" in odd.source
    # An A100 has no FP8 tensor cores: no compute peak for an FP8 model, its bandwidth still known.
    a100 = resolve_peak(override=None, sim_peak=None, gpu_names=["NVIDIA A100-SXM4-80GB"], dtype=("fp8", "x"))
    assert a100.tflops is None and a100.hbm_gb_per_s == pytest.approx(2039.0) and "no dense FP8 peak" in a100.source


@pytest.mark.parametrize(
    ("model", "args", "dtype"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", (), "bf16"),
        ("RedHatAI/Llama-3.1-8B-Instruct-FP8", (), "fp8"),
        ("nvidia/Llama-3.1-8B-Instruct-FP8-dynamic", (), "fp8"),
        ("nvidia/DeepSeek-R1-NVFP4", (), "fp4"),
        ("openai/gpt-oss-120b", ("--quantization", "mxfp4"), "fp4"),
        ("m", ("--quantization=fp8",), "fp8"),
        ("m", ("-q", "awq"), "bf16"),  # weights in 4 bits, matmuls not: the name says nothing either
        ("fp8lover/model", (), "bf16"),  # FP8 must be a word of its own
    ],
)
def test_compute_dtype(model: str, args: tuple[str, ...], dtype: str) -> None:
    assert compute_dtype(model, args)[0] == dtype


def test_user_file_overrides_and_adds(tmp_path: Path) -> None:
    user = tmp_path / "config" / "agentx-tui" / "gpu-peaks.yaml"
    user.parent.mkdir(parents=True)
    user.write_text(
        "gpus:\n"
        "  t4: {match: [T4], bf16_tflops: 65, hbm_tb_s: 0.32, source: my datasheet, date: '2019'}\n"
        "  h100: {match: [H100], bf16_tflops: 900, hbm_tb_s: 3.0, source: my lab, date: '2026'}\n"
    )
    table = load_peaks()
    assert table.gpus["t4"].hbm_tb_s == 0.32 and table.gpus["h100"].bf16_tflops == 900
    assert table.gpus["h200"].bf16_tflops == 989.4 and len(table.files) == 2
    assert resolve_peak(override=None, sim_peak=None, gpu_names=["Tesla T4"], dtype=("bf16", "")).tflops == 65


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "gpus: {x: {match: [X], bf16_tflops: -1, hbm_tb_s: 1, source: s, date: d}}\n",
            "bad field `gpus.x.bf16_tflops`",
        ),
        ("gpus: [1, 2]\n", "must hold only `gpus`"),
        ("other: 1\n", "must hold only `gpus`"),
        ("- a\n", "must be a mapping"),
    ],
)
def test_a_bad_user_file_is_one_sentence(tmp_path: Path, text: str, message: str) -> None:
    user = tmp_path / "peaks.yaml"
    user.write_text(text)
    with pytest.raises(UsageError) as err:
        load_peaks(user)
    assert message in str(err.value) and str(user) in str(err.value)
