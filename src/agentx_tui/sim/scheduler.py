"""Continuous-batching scheduler after vLLM V1's ``Scheduler`` (FCFS policy, chunked prefill on).

Each step has a token budget (``max_num_batched_tokens``). Running requests are served first, in
order (the order they were admitted in, so decodes come before the prefill admitted after them): a
decoding request needs 1 token (1 + K with K draft tokens to verify: speculative decoding, sim/spec.py),
a request still prefilling takes what is left of its prompt up to the budget, so a long prompt is
computed in chunks over several steps, each step carrying the decodes with it (and each decode waiting
for it). When the KV cache cannot supply a running request's next block, the *last* running request is
preempted by recompute: its blocks are freed, its progress reset, and it goes back to the head of the
waiting queue (its blocks stay in the prefix cache until evicted, so a resumed request
often hits its own old blocks). Waiting requests are admitted only in a step with no preemption, while
fewer than ``max_num_seqs`` run and budget and blocks remain; on admission the prefix cache is
consulted and only the uncached remainder is computed.

With a CPU KV tier the lookup goes on there where the GPU's cached blocks end: the blocks found are
loaded into the request's new blocks over the CPU→GPU link (sim/offload.py), and the request is
scheduled no work until its load is done (`ready_at`), as vLLM's requests wait for an asynchronous KV
load; the others run meanwhile. vLLM counts such tokens as "external" (a KV connector's), the GPU
cache's as "local".
"""

from __future__ import annotations

import enum
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from agentx_tui.sim.kvcache import KVCacheManager, KVSeq, PromptBlocks
from agentx_tui.sim.spec import SpecDecoding


class Status(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(slots=True, eq=False)
class SimRequest:
    request_id: str
    prompt_ids: list[int]  # empty when the prompt is given as ``prompt_blocks``
    max_tokens: int
    min_tokens: int = 0
    ignore_eos: bool = False
    # Output length at which the simulated model emits EOS (ignored with ``ignore_eos``).
    natural_len: int = 256
    seed: int = 0
    arrival: float = 0.0
    # A chat prompt arrives as its block hashes (`prompts.ChatPrompts`), not as a 100 K-token list.
    prompt_blocks: PromptBlocks | None = None
    kv: KVSeq = field(init=False)
    num_prompt: int = field(init=False)
    num_output: int = 0
    num_computed: int = 0
    status: Status = Status.WAITING
    num_preemptions: int = 0
    num_cached_prompt: int | None = None  # prefix-cache hit on first admission (GPU and CPU tier)
    num_offloaded_prompt: int = 0  # of those, the tokens loaded from the CPU tier
    ready_at: float = 0.0  # its KV load from the CPU tier is done then; no work before
    finish_reason: str | None = None
    first_scheduled: float | None = None
    first_token: float | None = None
    last_token: float | None = None
    finished_at: float | None = None
    drafts_rng: random.Random | None = None  # its acceptance draws (speculative decoding), seeded by `seed`

    def __post_init__(self) -> None:
        if self.prompt_blocks is not None:
            self.kv = KVSeq.from_prompt(self.prompt_blocks)
            self.num_prompt = self.prompt_blocks.num_tokens
            self.prompt_blocks = None  # the request's KVSeq has its own copy
        else:
            self.kv = KVSeq(tokens=list(self.prompt_ids))
            self.num_prompt = len(self.prompt_ids)

    @property
    def num_tokens(self) -> int:
        return self.kv.offset + len(self.kv.tokens)


@dataclass(slots=True)
class ScheduledWork:
    """One request's share of a step: ``num_new`` tokens computed on top of ``context`` tokens; of them,
    ``drafts`` are draft tokens to verify (speculative decoding), after the one token it decodes."""

    request: SimRequest
    num_new: int
    context: int
    drafts: int = 0


@dataclass(slots=True)
class StepResult:
    work: list[ScheduledWork]
    preempted: list[SimRequest]
    admitted: list[SimRequest]


@dataclass(slots=True)
class StepStats:
    prefix_queries: int = 0
    prefix_hits: int = 0
    external_queries: int = 0  # tokens asked of the CPU tier: those the GPU cache did not have
    external_hits: int = 0
    preemptions: int = 0
    # Speculative decoding, as vLLM counts it: a draft is one request's verify step with ≥ 1 draft token.
    drafts: int = 0
    draft_tokens: int = 0
    accepted: int = 0
    accepted_per_pos: list[int] = field(default_factory=list)


class Scheduler:
    def __init__(
        self,
        kv: KVCacheManager,
        *,
        max_num_seqs: int,
        max_num_batched_tokens: int,
        max_model_len: int,
        spec: SpecDecoding | None = None,
    ) -> None:
        self.kv = kv
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.max_model_len = max_model_len
        self.spec = spec
        self.running: list[SimRequest] = []
        self.waiting: deque[SimRequest] = deque()
        self.stats = StepStats(accepted_per_pos=[0] * (spec.num_speculative_tokens if spec else 0))

    def add(self, request: SimRequest) -> None:
        self.waiting.append(request)

    def has_work(self) -> bool:
        return bool(self.running or self.waiting)

    def loading(self, now: float) -> int:
        """Running requests still waiting for their KV from the CPU tier at `now`."""
        return sum(1 for r in self.running if r.ready_at > now)

    def next_ready(self, now: float) -> float | None:
        """When the first KV load still under way at `now` is done; None when none is."""
        return min((r.ready_at for r in self.running if r.ready_at > now), default=None)

    def abort(self, request: SimRequest) -> None:
        if request.status is Status.RUNNING:
            self.running.remove(request)
            self.kv.free(request.kv)
        elif request.status is Status.WAITING:
            self.waiting.remove(request)
            self.kv.free(request.kv)
        request.status = Status.FINISHED
        request.finish_reason = request.finish_reason or "abort"

    def _preempt(self) -> SimRequest:
        victim = self.running.pop()
        self.kv.free(victim.kv)
        victim.num_computed = 0
        victim.ready_at = 0.0
        victim.status = Status.WAITING
        victim.num_preemptions += 1
        self.waiting.appendleft(victim)
        self.stats.preemptions += 1
        return victim

    def schedule(self, now: float) -> StepResult:
        budget = self.max_num_batched_tokens
        work: list[ScheduledWork] = []
        preempted: list[SimRequest] = []
        admitted: list[SimRequest] = []
        bs = self.kv.block_size
        self.kv.now = now
        spec_k = self.spec.num_speculative_tokens if self.spec is not None else 0
        i = 0
        while i < len(self.running) and budget > 0:
            req = self.running[i]
            if req.ready_at > now:  # its KV is still on the way from the CPU tier
                i += 1
                continue
            seq = req.kv
            n = min(seq.offset + len(seq.tokens) - req.num_computed, budget)
            drafts = 0
            if spec_k and n == 1 and req.num_output:
                # A decode verifies K drafts too, as far as the budget and the context allow (vLLM
                # trims the drafts to both); their KV slots are taken now, the rejected ones reused.
                n = max(1, min(1 + spec_k, budget, self.max_model_len - 1 - req.num_computed))
                drafts = n - 1
            # Fast path: most decode steps fit in the request's last, partly filled block.
            fits = req.num_computed + n <= len(seq.blocks) * bs
            while not fits and not self.kv.allocate(seq, req.num_computed, n):
                victim = self._preempt()
                preempted.append(victim)
                if victim is req:
                    break
            else:
                work.append(ScheduledWork(req, n, req.num_computed, drafts))
                budget -= n
                i += 1
        if not preempted:
            while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
                req = self.waiting[0]
                if req.arrival > now:
                    break  # the step loop runs behind wall time: this request has not arrived yet
                # Even with every block it may hit, the first chunk needs this many new blocks: when the
                # pool has fewer, skip the lookup (thousands of blocks for a long context, every step
                # while the cache is full) — `allocate` would refuse anyway.
                total = req.num_tokens
                best = (total - 1) // bs * bs
                if -(-min(total - best, budget) // bs) > self.kv.num_free_blocks:
                    break
                hits = self.kv.find_cached_prefix(req.kv)
                offloaded = self.kv.find_offloaded(req.kv, len(hits))
                local = len(hits) * bs
                computed = local + offloaded * bs
                n = min(req.num_tokens - computed, budget)
                if not self.kv.allocate(req.kv, computed, n, hits):
                    break
                self.waiting.popleft()
                if req.num_preemptions == 0:
                    # vLLM counts prefix-cache queries/hits for first admissions only.
                    self.stats.prefix_queries += req.num_tokens
                    self.stats.prefix_hits += local
                    if self.kv.offload is not None:
                        self.stats.external_queries += req.num_tokens - local
                        self.stats.external_hits += offloaded * bs
                    req.num_cached_prompt = computed
                    req.num_offloaded_prompt = offloaded * bs
                    req.first_scheduled = now
                req.num_computed = computed
                req.status = Status.RUNNING
                self.running.append(req)
                admitted.append(req)
                if offloaded and self.kv.offload is not None:
                    req.ready_at = self.kv.offload.load(offloaded, now)
                    continue  # its first work once its KV is on the GPU
                work.append(ScheduledWork(req, n, computed))
                budget -= n
        if self.kv.offload is not None:
            self.kv.offload.flush_stores()
        return StepResult(work, preempted, admitted)

    def complete(
        self, result: StepResult, sample: Callable[[SimRequest], int]
    ) -> tuple[list[SimRequest], list[SimRequest], int]:
        """Apply a finished step: advance progress, sample a token for every request whose context is
        now fully computed (with speculative decoding, its accepted drafts and one more), finish
        requests that hit a stop condition.
        Returns (requests that got tokens, requests that finished, tokens generated)."""
        sampled: list[SimRequest] = []
        finished: list[SimRequest] = []
        more = 0  # tokens beyond one per sampled request: speculative steps' accepted drafts
        kv, bs = self.kv, self.kv.block_size
        for item in result.work:
            req = item.request
            seq = req.kv
            if item.drafts:
                accepted = self._verify(req, item.drafts)
                computed = req.num_computed + 1 + accepted  # the decoded token's KV and the accepted drafts'
            else:
                accepted = 0
                computed = req.num_computed + item.num_new
                if computed < seq.offset + len(seq.tokens):
                    req.num_computed = computed
                    if computed // bs > seq.num_cached_blocks:  # (most steps fill no block: skip the call)
                        kv.cache_full_blocks(seq, computed)
                    continue
            seq.tokens.append(sample(req))
            req.num_output += 1
            reason = self._stop_reason(req)
            if accepted:
                before = req.num_output
                reason = self._emit(req, accepted, sample, reason)
                more += req.num_output - before
                # A request that stopped early holds fewer tokens than were verified: none past its end count.
                computed = min(computed, seq.offset + len(seq.tokens))
            req.num_computed = computed
            sampled.append(req)
            if computed // bs > seq.num_cached_blocks:
                kv.cache_full_blocks(seq, computed)
            if reason is not None:
                req.finish_reason = reason
                req.status = Status.FINISHED
                kv.free(seq)
                finished.append(req)
        if finished:
            self.running = [r for r in self.running if r.status is Status.RUNNING]
        return sampled, finished, len(sampled) + more

    def _emit(self, req: SimRequest, count: int, sample: Callable[[SimRequest], int], reason: str | None) -> str | None:
        """A speculative step's `count` accepted drafts after its first token (whose stop reason is
        `reason`), up to a stop condition: the tokens past it are dropped, as vLLM drops them. Returns
        the request's stop reason then."""
        for _ in range(count):
            if reason is not None:
                break
            req.kv.tokens.append(sample(req))
            req.num_output += 1
            reason = self._stop_reason(req)
        return reason

    def _verify(self, req: SimRequest, drafts: int) -> int:
        """How many of the request's `drafts` draft tokens this step accepts (one seeded draw: sim/spec.py),
        counted as vLLM counts them."""
        spec = self.spec
        assert spec is not None
        rng = req.drafts_rng
        if rng is None:
            rng = req.drafts_rng = random.Random(req.seed)
        accepted = spec.accepted(rng.random(), drafts)
        stats = self.stats
        stats.drafts += 1
        stats.draft_tokens += drafts
        stats.accepted += accepted
        per_pos = stats.accepted_per_pos
        for pos in range(accepted):
            per_pos[pos] += 1
        return accepted

    def _stop_reason(self, req: SimRequest) -> str | None:
        if req.num_output >= req.max_tokens or req.num_tokens >= self.max_model_len:
            return "length"
        if not req.ignore_eos and req.num_output >= max(req.natural_len, req.min_tokens):
            return "stop"
        return None
