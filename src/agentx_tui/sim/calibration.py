"""Replaying benchmark workloads through the engine model in simulated time (no real time, no HTTP),
to check the time model against published vLLM figures (the ``calibration`` cases of profiles.yaml)
and to print what each profile predicts. docs/sim.md shows the resulting table.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from agentx_tui.sim.kvcache import KVCacheManager
from agentx_tui.sim.profiles import SimProfile, calibration_cases, list_profiles, load_profile
from agentx_tui.sim.scheduler import Scheduler, SimRequest
from agentx_tui.sim.timing import TimeModel

# vLLM's offline (LLM class) scheduler defaults on H100/H200-class GPUs, which `vllm bench latency`
# and `vllm bench throughput` run with.
OFFLINE_MAX_BATCHED_TOKENS = 16384


@dataclass(frozen=True)
class BatchRun:
    duration_s: float
    output_tokens: int
    steps: int
    preemptions: int


def run_batch(profile: SimProfile, lengths: list[tuple[int, int]], *, budget: int | None = None) -> BatchRun:
    """All requests arrive at t = 0 with distinct prompts; returns when the last one finishes."""
    kv = KVCacheManager(profile.num_gpu_blocks, profile.block_size)
    sched = Scheduler(
        kv,
        max_num_seqs=profile.max_num_seqs,
        max_num_batched_tokens=budget or profile.max_num_batched_tokens,
        max_model_len=profile.max_model_len,
    )
    tm = TimeModel(profile)
    for i, (n_in, n_out) in enumerate(lengths):
        base = 1 + i * n_in
        prompt = [(base + k) % 100_000 + 1 for k in range(n_in)]
        sched.add(SimRequest(f"c{i}", prompt, max_tokens=n_out, min_tokens=n_out, ignore_eos=True))
    t = 0.0
    steps = preemptions = 0
    while sched.has_work():
        result = sched.schedule(t)
        preemptions += len(result.preempted)
        if result.work:
            t += tm.step((w.num_new, w.context) for w in result.work).duration_s
            steps += 1
        sched.complete(result, lambda r: 1)
    return BatchRun(t, sum(n for _, n in lengths), steps, preemptions)


def single_user_itl(profile: SimProfile, context: int = 1024) -> float:
    """Decode step time of one sequence with ``context`` tokens of KV."""
    return TimeModel(profile).step([(1, context)]).duration_s


def peak_output_throughput(profile: SimProfile, input_len: int = 1024, output_len: int = 1024) -> float:
    """Output tok/s of a saturating closed batch (as many sequences as the scheduler runs at once)."""
    per_seq_blocks = math.ceil((input_len + output_len) / profile.block_size)
    fit = max(1, (profile.num_gpu_blocks - 1) // per_seq_blocks)
    n = min(profile.max_num_seqs, fit)
    run = run_batch(profile, [(input_len, output_len)] * n)
    return run.output_tokens / run.duration_s


def sharegpt_like(n: int, mean_in: float, mean_out: float, sigma: float, seed: int = 0) -> list[tuple[int, int]]:
    """Lognormal lengths with the given means, within vLLM's ShareGPT filter (≥ 4 tokens, prompt ≤ 1024,
    prompt + output ≤ 2048)."""
    rng = random.Random(seed)
    out: list[tuple[int, int]] = []
    mu_in, mu_out = math.log(mean_in) - sigma**2 / 2, math.log(mean_out) - sigma**2 / 2
    while len(out) < n:
        i, o = int(rng.lognormvariate(mu_in, sigma)), int(rng.lognormvariate(mu_out, sigma))
        if i >= 4 and o >= 4 and i <= 1024 and i + o <= 2048:
            out.append((i, o))
    return out


@dataclass(frozen=True)
class CalibrationRow:
    id: str
    profile: str
    figure: str
    published: float
    simulated: float
    source: str

    @property
    def error(self) -> float:
        return self.simulated / self.published - 1.0


def calibration_rows() -> list[CalibrationRow]:
    rows = []
    for case in calibration_cases():
        profile = load_profile(case.profile)
        if case.kind == "latency":
            lengths = [(case.input_len, case.output_len)] * case.batch
            value = run_batch(profile, lengths, budget=OFFLINE_MAX_BATCHED_TOKENS).duration_s
        elif case.kind == "throughput":
            lengths = sharegpt_like(case.batch, case.input_len, case.output_len, sigma=case.length_sigma or 1.0)
            value = case.batch / run_batch(profile, lengths, budget=OFFLINE_MAX_BATCHED_TOKENS).duration_s
        else:
            raise ValueError(f"unknown calibration kind {case.kind!r}")
        rows.append(CalibrationRow(case.id, case.profile, case.figure, case.published, value, case.source))
    return rows


def profile_figures() -> list[tuple[str, float, float]]:
    """(profile, single-user ITL s at 1 K context, peak output tok/s at 1 K in / 1 K out) per profile."""
    return [
        (name, single_user_itl(load_profile(name)), peak_output_throughput(load_profile(name)))
        for name in list_profiles()
    ]
