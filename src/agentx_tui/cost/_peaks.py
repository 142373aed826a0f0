"""The ceilings of the roofline (docs/metrics.md, "Roofline"): the GPU peaks table (`hardware/peaks.yaml`:
dense TFLOP/s per dtype and HBM bandwidth per GPU model, each row citing its datasheet; the simulator's
profiles read it too) with the user's override, the dtype a served model computes in, and which peak a
run measures against.

Beside the cost presets because it is read the same way: a built-in file, a user's file overlaid key by
key, and rows found by the GPU's NVML or DCGM name, whole word (`_presets.best_match`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agentx_tui.cost._presets import best_match, read_mapping, user_path, validated
from agentx_tui.errors import UsageError
from agentx_tui.hardware import peak_rows, peaks_path
from agentx_tui.snapshot import GpuPeak

Dtype = Literal["bf16", "fp8", "fp4"]
USER_FILE = Path("agentx-tui") / "gpu-peaks.yaml"
_WHAT = "GPU peaks"
HINT = "pass --gpu-peak TFLOPS,TBPS"
# vLLM's --quantization methods whose weights are FP8 or FP4 (vllm/v1/metrics/perf.py reads them so);
# the rest (compressed-tensors, AWQ, GPTQ, …) do not say what the tensor cores compute in.
_FP8_METHODS = frozenset({"fp8", "fbgemm_fp8", "ptpc_fp8", "fp_quant", "modelopt", "modelopt_mxfp8"})
_FP4_METHODS = frozenset({"mxfp4", "modelopt_fp4", "petit_nvfp4", "nvfp4"})
_FP8_NAME = re.compile(r"(?<![a-z0-9])fp8(?![a-z0-9])", re.IGNORECASE)
_FP4_NAME = re.compile(r"(?<![a-z0-9])(nv|mx)?fp4(?![a-z0-9])", re.IGNORECASE)


class PeakRow(BaseModel):
    """One GPU model's datasheet figures, per GPU: dense (no sparsity) tensor TFLOP/s and HBM TB/s."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    match: tuple[str, ...] = Field(min_length=1)  # words in the GPU's name, e.g. "H100 PCIe"
    bf16_tflops: float = Field(gt=0)
    fp8_tflops: float | None = Field(default=None, gt=0)
    fp4_tflops: float | None = Field(default=None, gt=0)
    hbm_tb_s: float = Field(gt=0)
    source: str
    date: str

    def tflops(self, dtype: Dtype) -> float | None:
        return {"bf16": self.bf16_tflops, "fp8": self.fp8_tflops, "fp4": self.fp4_tflops}[dtype]


class PeakTable(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    gpus: dict[str, PeakRow] = Field(min_length=1)
    files: tuple[str, ...] = ()  # the files these rows came from, built-in first

    def for_gpu_name(self, gpu_name: str) -> str | None:
        """The row whose match words name `gpu_name` (the longest word wins), or whose key it is."""
        return best_match({key: row.match for key, row in self.gpus.items()}, gpu_name)


def load_peaks(path: Path | None = None) -> PeakTable:
    """The built-in rows, overlaid with ``path`` (default: the user's file, when it exists) key by key. A
    bad file raises `UsageError` naming the file and the field."""
    files = [peaks_path()]
    override = path if path is not None else user_path(USER_FILE)
    rows: dict[str, object] = dict(peak_rows())
    where: Path | str = peaks_path()
    if path is not None or override.is_file():
        data = read_mapping(override, _WHAT, "gpus: one row per GPU model")
        user_rows = data.pop("gpus", {})
        if data or not isinstance(user_rows, dict):
            raise UsageError(f"The {_WHAT} file {override} must hold only `gpus`: a mapping of rows.")
        rows.update({str(k).lower(): v for k, v in user_rows.items()})
        files.append(str(override))
        where = override
    return validated(PeakTable, {"gpus": rows, "files": files}, where, _WHAT)


def compute_dtype(model: str | None, vllm_args: Sequence[str] = ()) -> tuple[Dtype, str]:
    """The dtype the model's matmuls run in, as far as the server says, and how it is known: vLLM's
    `--quantization` where a launch gave it, else FP8/FP4 in the served model's name, else BF16, assumed."""
    method = _flag_value(vllm_args, "--quantization", "-q")
    if method is not None:
        if method.lower() in _FP8_METHODS:
            return "fp8", f"--quantization {method}"
        if method.lower() in _FP4_METHODS:
            return "fp4", f"--quantization {method}"
    name = model or ""
    if _FP4_NAME.search(name):
        return "fp4", "FP4 in the model's name"
    if _FP8_NAME.search(name):
        return "fp8", "FP8 in the model's name"
    return "bf16", "BF16 assumed: the server does not say FP8 or FP4"


def _flag_value(args: Sequence[str], *flags: str) -> str | None:
    for i, arg in enumerate(args):
        for flag in flags:
            if arg == flag and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
    return None


def resolve_peak(
    *,
    override: tuple[float, float] | None,
    sim_peak: tuple[float, float] | None,
    gpu_names: Sequence[str],
    sim_gpu: str | None = None,
    dtype: tuple[Dtype, str],
    table: PeakTable | None = None,
) -> GpuPeak:
    """The peak one GPU of the target is measured against, in this order: `--gpu-peak` (`override`: TFLOP/s,
    TB/s), the simulated engine's profile (`sim_peak`, BF16: the simulator computes in it), the row of the
    peaks table for the GPUs' name (the most common one), else none and `source` says why and what to pass."""
    kind, how = dtype
    if override is not None:
        tflops, tb_s = override
        return GpuPeak(tflops=tflops, hbm_gb_per_s=tb_s * 1000, dtype=kind, source=f"--gpu-peak ({how})")
    if sim_peak is not None:
        tflops, tb_s = sim_peak
        label = f"the simulator's {sim_gpu} profile" if sim_gpu else "the simulator's profile"
        return GpuPeak(tflops=tflops, hbm_gb_per_s=tb_s * 1000, dtype="bf16", source=f"{label}, BF16")
    names = [n for n in gpu_names if n]
    if not names:
        return GpuPeak(dtype=kind, source=f"no peak: no GPU seen ({HINT})")
    name = Counter(names).most_common(1)[0][0]
    table = table or load_peaks()
    key = table.for_gpu_name(name)
    if key is None:
        return GpuPeak(dtype=kind, source=f"no peak for {name!r} in the peaks table ({HINT})")
    row = table.gpus[key]
    dense = row.tflops(kind)
    cited = f"{row.source}, {row.date}"
    if dense is None:
        return GpuPeak(
            hbm_gb_per_s=row.hbm_tb_s * 1000,
            dtype=kind,
            source=f"{key} has no dense {kind.upper()} peak ({how}; {HINT}); HBM: {cited}",
        )
    return GpuPeak(tflops=dense, hbm_gb_per_s=row.hbm_tb_s * 1000, dtype=kind, source=f"{key}: {cited}; {how}")
