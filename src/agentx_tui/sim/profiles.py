"""GPU × model profiles of the simulated engine, read from ``profiles.yaml`` in this package.

A profile fixes everything the engine model needs: the roofline figures of the GPU (its dense BF16
peak and HBM bandwidth from the tool's one table of GPU peaks, `hardware`), the architecture of the
model, and the derived KV-cache geometry (how many 16-token blocks fit in the memory left after the
weights, exactly as vLLM sizes its cache at start-up).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from agentx_tui.errors import UsageError
from agentx_tui.hardware import peak_rows, peaks_path
from agentx_tui.sim.spec import SpecDecoding

_GIB = 1024**3
_MIB = 1024**2


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Efficiency(_Spec):
    mbu: float
    mfu: float
    step_overhead_s: float
    per_seq_overhead_s: float


class SchedulerDefaults(_Spec):
    max_num_batched_tokens: int
    max_num_seqs: int
    gpu_memory_utilization: float


class GpuSpec(_Spec):
    name: str
    short_name: str
    peaks: str  # its row of the GPU peaks table (hardware/peaks.yaml), which gives the next two
    bf16_tflops: float
    hbm_tb_s: float
    memory_mib: int
    tdp_w: float
    idle_w: float
    sm_clock_max_mhz: int
    sm_clock_idle_mhz: int
    temp_idle_c: float
    temp_full_c: float
    host_link_gb_s: float  # CPU memory ↔ GPU, per direction (GB/s, 1e9 bytes): the CPU KV tier's link
    efficiency: Efficiency
    scheduler: SchedulerDefaults


class ModelSpec(_Spec):
    aliases: list[str] = []
    model_id: str
    params: float
    active_params: float
    expert_params: float = 0.0
    num_experts: int = 0
    experts_per_token: int = 0
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    vocab_size: int
    max_position_embeddings: int
    bytes_per_param: float

    @property
    def weight_bytes(self) -> float:
        return self.params * self.bytes_per_param

    @property
    def kv_bytes_per_token(self) -> int:
        # K and V, every layer, bf16.
        return int(2 * self.layers * self.kv_heads * self.head_dim * 2)


class CalibrationCase(_Spec):
    id: str
    profile: str
    figure: str
    kind: str
    batch: int
    input_len: int
    output_len: int
    length_sigma: float | None = None
    published: float
    source: str


class _ProfileFile(_Spec):
    gpus: dict[str, GpuSpec]
    models: dict[str, ModelSpec]
    activation_reserve_gib: float
    block_size: int
    calibration: list[CalibrationCase]


class SimProfile(_Spec):
    """One GPU × model combination, with the engine configuration vLLM would derive from it."""

    name: str
    gpu_name: str
    gpus: int
    model_id: str
    max_model_len: int
    gpu: GpuSpec
    model: ModelSpec
    block_size: int
    num_gpu_blocks: int
    max_num_seqs: int
    max_num_batched_tokens: int
    kv_cache_memory_bytes: int
    # The CPU KV tier (docs/sim.md): CPU memory for KV blocks evicted from the GPU (0: none, the
    # default, as vLLM without `--kv-offloading-size`), and its link to each GPU, per direction.
    cpu_kv_bytes: int = 0
    cpu_kv_gb_per_s: float = 50.0
    # Speculative decoding (docs/sim.md): K drafts per decode step at an acceptance length; None: off.
    spec: SpecDecoding | None = None

    @property
    def block_bytes(self) -> int:
        """One KV block of the whole model (every layer, K and V), as it moves to and from CPU memory."""
        return self.block_size * self.model.kv_bytes_per_token

    @property
    def num_cpu_blocks(self) -> int:
        return self.cpu_kv_bytes // self.block_bytes

    def with_overrides(
        self,
        *,
        num_gpu_blocks: int | None = None,
        max_num_seqs: int | None = None,
        max_num_batched_tokens: int | None = None,
        max_model_len: int | None = None,
        cpu_kv_gb: float | None = None,
        cpu_kv_gbps: float | None = None,
        spec: SpecDecoding | None = None,
    ) -> SimProfile:
        """The same profile with vLLM's ``--num-gpu-blocks-override`` etc. applied, the CPU KV tier's
        size (GB, 1e9 bytes) and link bandwidth (GB/s per direction and GPU), and speculative decoding,
        when given."""
        update: dict[str, Any] = {}
        if spec is not None:
            update["spec"] = spec
        tier: dict[str, Any] = {}
        if cpu_kv_gb is not None:
            if not cpu_kv_gb >= 0:
                raise UsageError(f"The CPU KV tier's size must be 0 GB or more, not {cpu_kv_gb}.")
            tier["cpu_kv_bytes"] = int(cpu_kv_gb * 1e9)
        if cpu_kv_gbps is not None:
            if not cpu_kv_gbps > 0:
                raise UsageError(f"The CPU KV tier's bandwidth must be above 0 GB/s, not {cpu_kv_gbps}.")
            tier["cpu_kv_gb_per_s"] = float(cpu_kv_gbps)
        if num_gpu_blocks is not None:
            update["num_gpu_blocks"] = num_gpu_blocks
            update["max_model_len"] = min(self.max_model_len, (num_gpu_blocks - 1) * self.block_size)
            update["kv_cache_memory_bytes"] = num_gpu_blocks * self.block_size * self.model.kv_bytes_per_token
        if max_num_seqs is not None:
            update["max_num_seqs"] = max_num_seqs
        if max_num_batched_tokens is not None:
            update["max_num_batched_tokens"] = max_num_batched_tokens
        if max_model_len is not None:
            blocks = update.get("num_gpu_blocks", self.num_gpu_blocks)
            update["max_model_len"] = min(max_model_len, (blocks - 1) * self.block_size)
        if num_gpu_blocks is not None and num_gpu_blocks < 2:
            raise UsageError(f"num_gpu_blocks must be at least 2, not {num_gpu_blocks}.")
        for key, value in update.items():
            if isinstance(value, int) and not isinstance(value, bool) and value < 1:
                raise UsageError(f"{key} must be at least 1, not {value}.")
        return self.model_copy(update={**update, **tier})


@cache
def _profile_file() -> _ProfileFile:
    text = resources.files("agentx_tui.sim").joinpath("profiles.yaml").read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
        peaks = peak_rows()
        for key, gpu in data["gpus"].items():
            row = peaks.get(gpu.get("peaks"))
            if row is None:
                raise RuntimeError(f"GPU {key!r} of agentx_tui/sim/profiles.yaml names no row of {peaks_path()}")
            gpu.update(bf16_tflops=row["bf16_tflops"], hbm_tb_s=row["hbm_tb_s"])
        return _ProfileFile.model_validate(data)
    except (yaml.YAMLError, ValidationError, KeyError, TypeError) as exc:  # a broken package file, not a user error
        raise RuntimeError(f"agentx_tui/sim/profiles.yaml is invalid: {exc}") from exc


def list_profiles() -> list[str]:
    """All profile names, ``"<gpu>/<model>"``."""
    data = _profile_file()
    return [f"{gpu}/{model}" for gpu in data.gpus for model in data.models]


def calibration_cases() -> list[CalibrationCase]:
    return list(_profile_file().calibration)


def load_profile(name: str) -> SimProfile:
    """The profile called ``name`` (case-insensitive; ``"h200"`` alone means its first model, model
    aliases such as ``llama-8b`` are accepted); `UsageError` listing the known ones otherwise."""
    data = _profile_file()
    gpu_key, _, model_key = name.strip().lower().partition("/")
    model_key = model_key or next(iter(data.models))
    for key, spec in data.models.items():
        if model_key in spec.aliases:
            model_key = key
    if gpu_key not in data.gpus or model_key not in data.models:
        known = ", ".join(list_profiles())
        raise UsageError(f"Unknown simulator profile {name!r}.", f"Known profiles: {known}.")
    gpu, model = data.gpus[gpu_key], data.models[model_key]
    usable = gpu.memory_mib * _MIB * gpu.scheduler.gpu_memory_utilization
    kv_bytes = usable - model.weight_bytes - data.activation_reserve_gib * _GIB
    block_bytes = data.block_size * model.kv_bytes_per_token
    num_blocks = int(kv_bytes // block_bytes)
    if num_blocks < 1:
        raise UsageError(f"The model of profile {name!r} does not fit on one {gpu.short_name}.")
    # Like vLLM, shorten the context when the whole cache cannot hold one full-length sequence.
    max_len = min(model.max_position_embeddings, (num_blocks - 1) * data.block_size)
    return SimProfile(
        name=f"{gpu_key}/{model_key}",
        gpu_name=gpu.short_name,
        gpus=1,
        model_id=model.model_id,
        max_model_len=max_len,
        gpu=gpu,
        model=model,
        block_size=data.block_size,
        num_gpu_blocks=num_blocks,
        max_num_seqs=gpu.scheduler.max_num_seqs,
        max_num_batched_tokens=gpu.scheduler.max_num_batched_tokens,
        kv_cache_memory_bytes=int(num_blocks * block_bytes),
        cpu_kv_gb_per_s=gpu.host_link_gb_s,
    )
