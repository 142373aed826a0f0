"""Roofline time model of one engine step on the profile's GPU.

A step computes ``n`` new tokens for each scheduled sequence on top of ``c`` tokens already in its
KV cache. Per step:

- FLOPs = 2 · active_params · Σn  (the matmuls)  +  4 · layers · heads · head_dim · Σ n·(c + n/2)
  (attention scores and values, causal within the chunk);
- bytes = weights read once (for a MoE: the shared weights plus each expert at least one token was
  routed to, 1 − (1 − k/E)^T of them for T tokens)  +  Σ (c + n) · kv_bytes_per_token (context read,
  new K/V written);
- kernel time = max(FLOPs / (peak · mfu), bytes / (bandwidth · mbu)), so prefill comes out
  compute-bound and decode bandwidth-bound;
- step time = kernel time + step overhead + per-sequence overhead · sequences.

The FLOPs and bytes of each step are also what the engine exports as vLLM's estimated-work counters
(`--enable-mfu-metrics`: FLOPs, bytes read, bytes written: the new K/V), per GPU: a client's MFU is then
the simulated work over the peak and the simulated time, so the efficiency constants and the overheads
show through it rather than being copied into it (docs/sim.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agentx_tui.sim.profiles import SimProfile


@dataclass(frozen=True, slots=True)
class StepCost:
    duration_s: float
    kernel_s: float
    compute_s: float
    memory_s: float
    flops: float
    bytes: float  # read + written
    tokens: int
    seqs: int
    write_bytes: float = 0.0  # of `bytes`: the new tokens' K/V written to the cache


class TimeModel:
    def __init__(self, profile: SimProfile) -> None:
        gpu, model = profile.gpu, profile.model
        eff = gpu.efficiency
        self._flops_per_s = gpu.bf16_tflops * 1e12 * eff.mfu * profile.gpus
        self._bytes_per_s = gpu.hbm_tb_s * 1e12 * eff.mbu * profile.gpus
        self._overhead = eff.step_overhead_s
        self._per_seq = eff.per_seq_overhead_s
        self._matmul_flops_per_token = 2.0 * model.active_params
        self._attn_flops = 4.0 * model.layers * model.attention_heads * model.head_dim
        self._kv_bytes = float(model.kv_bytes_per_token)
        self._dense_bytes = (model.params - model.expert_params) * model.bytes_per_param
        self._expert_bytes = model.expert_params * model.bytes_per_param
        self._route_miss = 1.0 - model.experts_per_token / model.num_experts if model.num_experts else 0.0

    def weight_bytes(self, tokens: int) -> float:
        if not self._expert_bytes:
            return self._dense_bytes
        touched = 1.0 - self._route_miss**tokens
        return self._dense_bytes + self._expert_bytes * touched

    def step(self, work: Iterable[tuple[int, int]]) -> StepCost:
        """Cost of a step given (new tokens, context tokens) per scheduled sequence."""
        tokens = seqs = 0
        attn = 0.0
        kv_tokens = 0
        for n, c in work:
            tokens += n
            seqs += 1
            attn += n * (c + n / 2)
            kv_tokens += c + n
        flops = self._matmul_flops_per_token * tokens + self._attn_flops * attn
        nbytes = self.weight_bytes(tokens) + self._kv_bytes * kv_tokens
        compute_s = flops / self._flops_per_s
        memory_s = nbytes / self._bytes_per_s
        kernel_s = max(compute_s, memory_s)
        duration = kernel_s + self._overhead + self._per_seq * seqs
        return StepCost(duration, kernel_s, compute_s, memory_s, flops, nbytes, tokens, seqs, self._kv_bytes * tokens)
