"""The simulated engine running in real time on the asyncio loop.

One task runs the step loop. Each wake-up it plans engine steps ahead from the engine's time cursor
until the steps cover one stream interval (default 10 ms) of wall time, then sleeps until the last
step's simulated end and hands every stream the tokens of all those steps at once: one chunk per
request per wake-up, like vLLM's stream interval, which is what lets one core stream tens of thousands
of tokens per second. A step that produced a request's *first* token ends the window early, so TTFT is
not rounded up to the interval. Requests that arrive while the loop sleeps join at the next step
boundary, as they would in vLLM.

Tokens are handed over by `RequestHandle.publish`: a consumer may set a sink that is called right
there (no task wake-up), or wait on the handle, as the HTTP app's streaming responses and
non-streaming requests do (api.py).

When the process is busy (handlers wake late), the interval stretches up to 50 ms and shrinks back
once the loop keeps up again, so the simulated GPU keeps real time and chunks get fatter instead, as
vLLM's output processor merges deltas when its consumer falls behind. How far the engine still runs
behind wall time is on /metrics (`agentx_sim:engine_lag_seconds`, see `LagMeter`), so that a client can
tell when the simulator, not the simulated GPU, is the bottleneck.

``time_scale`` > 1 runs the simulated GPU that many times faster than real time (for benchmarks of the
serving path itself); the figures on /metrics are then in scaled time.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
import uuid
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from agentx_tui.sim.gpu import GpuTelemetry
from agentx_tui.sim.kvcache import KVCacheManager, PromptBlocks
from agentx_tui.sim.metrics import DcgmCollector, OffloadCollector, SimCollector, VllmMetrics
from agentx_tui.sim.offload import CpuTier
from agentx_tui.sim.profiles import SimProfile
from agentx_tui.sim.prompts import ChatPrompts
from agentx_tui.sim.scheduler import Scheduler, SimRequest, Status
from agentx_tui.sim.timing import TimeModel
from agentx_tui.sim.tokenizer import SimTokenizer

_log = logging.getLogger(__name__)

DEFAULT_STREAM_INTERVAL_S = 0.01
# Under load the interval stretches up to this, so that each chunk carries more tokens instead of the
# loop falling behind real time (which would slow the simulated GPU down).
MAX_STREAM_INTERVAL_S = 0.05
# When the host is busy the step loop runs behind wall time and catches up (the simulated GPU does not
# slow down, only delivery is late) — but by at most this much, beyond which time is let go.
MAX_LAG_S = 0.5
# The lag gauge reports the worst lag of the last one to two seconds (two one-second buckets), so a
# scrape every second or two never misses a late window and an idle engine reads 0 within 2 s.
_LAG_BUCKET_S = 1.0


class LagMeter:
    """How far the engine's simulated clock runs behind wall time when the step loop resumes: the worst
    recent lag (`value`), and the time given up for good (`lost_s`: the simulated GPU slowed down) when
    the lag passed `MAX_LAG_S`."""

    def __init__(self, now: float) -> None:
        self._start = now
        self._cur = 0.0
        self._prev = 0.0
        self.lost_s = 0.0

    def _roll(self, now: float) -> None:
        if now - self._start >= _LAG_BUCKET_S:
            self._prev = self._cur if now - self._start < 2 * _LAG_BUCKET_S else 0.0
            self._cur = 0.0
            self._start = now

    def note(self, now: float, lag: float) -> None:
        self._roll(now)
        if lag > self._cur:
            self._cur = lag
        if lag > MAX_LAG_S:
            self.lost_s += lag - MAX_LAG_S

    def value(self, now: float) -> float:
        self._roll(now)
        return max(self._cur, self._prev)


@dataclass(eq=False, slots=True)
class RequestHandle:
    """What an API handler holds for one request.

    The engine publishes the tokens whose simulated time has passed by raising `visible` (and setting
    `done` with the last ones), then calls `publish`: that runs the `sink` if one is set (synchronously,
    inside the engine's step loop) and otherwise wakes whoever waits in `wait`."""

    request: SimRequest
    visible: int = 0  # tokens the engine has published
    done: bool = False
    taken: int = 0  # tokens the consumer has taken
    sink: Callable[[RequestHandle], None] | None = None
    _ready: asyncio.Event | None = None

    def publish(self) -> None:
        if self.sink is not None:
            self.sink(self)
        elif self._ready is not None:
            self._ready.set()

    async def wait(self) -> None:
        """Until there are tokens not yet taken, or the request has finished."""
        while self.taken >= self.visible and not self.done:
            if self._ready is None:
                self._ready = asyncio.Event()
            await self._ready.wait()
            self._ready.clear()

    def take(self) -> tuple[int, int, bool]:
        """Take the new tokens: (first index, end index, whether the request is finished with them)."""
        start, self.taken = self.taken, self.visible
        return start, self.taken, self.done


class SimEngine:
    def __init__(
        self,
        profile: SimProfile,
        *,
        time_scale: float = 1.0,
        stream_interval_s: float = DEFAULT_STREAM_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        gpu_uuids: Sequence[str] | None = None,
    ) -> None:
        if time_scale <= 0:
            raise ValueError("time_scale must be positive")
        self.profile = profile
        self.time_scale = time_scale
        self.stream_interval_s = stream_interval_s
        self._interval = stream_interval_s
        self.clock = clock
        self.tokenizer = SimTokenizer(profile.model.vocab_size)
        self.prompts = ChatPrompts(self.tokenizer, profile.block_size)
        self.offload = cpu_tier(profile)
        self.kv = KVCacheManager(profile.num_gpu_blocks, profile.block_size, offload=self.offload)
        self.scheduler = Scheduler(
            self.kv,
            max_num_seqs=profile.max_num_seqs,
            max_num_batched_tokens=profile.max_num_batched_tokens,
            max_model_len=profile.max_model_len,
            spec=profile.spec,
        )
        self.time_model = TimeModel(profile)
        # Each instance is its own GPU(s): DCGM UUIDs drawn at start, stable for the instance's life, so
        # that simulators side by side count as distinct GPUs (a fleet counts GPUs by UUID).
        self.gpu_uuids = list(gpu_uuids) if gpu_uuids is not None else new_gpu_uuids(profile.gpus)
        if len(self.gpu_uuids) != profile.gpus:
            raise ValueError(f"{profile.gpus} GPU UUID(s) needed, {len(self.gpu_uuids)} given")
        self.registry = CollectorRegistry()
        self.metrics = VllmMetrics(profile, self.registry)
        if self.offload is not None:
            self.registry.register(OffloadCollector(profile, self.offload))
        self.gpu = GpuTelemetry(profile, clock())
        self.registry.register(DcgmCollector(profile, self.gpu_uuids, lambda: self.gpu.sample(self.clock())))
        self._t = clock()
        self.lag = LagMeter(self._t)
        self.registry.register(SimCollector(profile, lambda: self.lag.value(self.clock()), lambda: self.lag.lost_s))
        self._handles: dict[SimRequest, RequestHandle] = {}
        self._ids = itertools.count()
        self._wake = asyncio.Event()
        self.steps = 0
        out_ids = self.tokenizer.output_ids
        n_out = len(out_ids)
        # The sampler, inlined (a step samples one token per running sequence).
        self._sample: Callable[[SimRequest], int] = lambda r: out_ids[(r.seed + r.num_output * 7919) % n_out]

    def submit(
        self,
        prompt: list[int] | PromptBlocks,
        *,
        max_tokens: int,
        min_tokens: int = 0,
        ignore_eos: bool = False,
        seed: int | None = None,
    ) -> RequestHandle:
        """Queue a request whose prompt is token ids or (for chat) `PromptBlocks`."""
        if seed is None:
            if isinstance(prompt, PromptBlocks):
                base = hash((prompt.hashes[-1] if prompt.hashes else 0, *prompt.tail)) & 0xFFFFFFFF
            else:
                base = zlib.crc32(repr(prompt[-64:]).encode())
            seed = base ^ next(self._ids)
        blocks = prompt if isinstance(prompt, PromptBlocks) else None
        req = SimRequest(
            request_id=f"{next(self._ids):x}",
            prompt_ids=[] if isinstance(prompt, PromptBlocks) else prompt,
            max_tokens=max_tokens,
            min_tokens=min_tokens,
            ignore_eos=ignore_eos,
            natural_len=32 + seed % 481,
            seed=seed,
            arrival=self.clock(),
            prompt_blocks=blocks,
        )
        handle = RequestHandle(req)
        self._handles[req] = handle
        self.scheduler.add(req)
        self.metrics.waiting.set(len(self.scheduler.waiting))
        self._wake.set()
        return handle

    def abort(self, handle: RequestHandle) -> None:
        """End a request its consumer no longer wants (a no-op once it has finished)."""
        req = handle.request
        if req.status is Status.FINISHED:
            return
        self.scheduler.abort(req)
        req.finished_at = self.clock()
        self.metrics.request_finished(req)
        self._handles.pop(req, None)
        handle.done = True
        handle.sink = None  # the consumer is gone or leaving: only a waiter may still need waking
        handle.publish()

    def output_text(self, handle: RequestHandle, start: int, stop: int) -> str:
        return self.tokenizer.output_text(handle.request.seed, start, stop)

    def _publish_gauges(self, now: float) -> None:
        # A request waiting for its KV from the CPU tier is waiting, deferred (as in vLLM), not running.
        loading = self.scheduler.loading(now) if self.offload is not None else 0
        m = self.metrics
        m.running.set(len(self.scheduler.running) - loading)
        m.waiting.set(len(self.scheduler.waiting) + loading)
        m.waiting_capacity.set(len(self.scheduler.waiting))
        m.waiting_deferred.set(loading)
        m.kv_usage.set(self.kv.usage)

    def run_window(self, now: float) -> tuple[float, set[SimRequest]]:
        """Plan steps from the time cursor until they cover a stream interval; returns the end time of
        the last step and the requests that got tokens (or finished) in them."""
        behind = now - self._t
        if behind > 0:
            self.lag.note(now, behind)
        t = max(self._t, now - MAX_LAG_S)
        horizon = now + self._interval
        touched: set[SimRequest] = set()
        m, sched = self.metrics, self.scheduler
        while sched.has_work() and t < horizon:
            result = sched.schedule(t)
            self._count_lookups()
            if not result.work:
                if sched.waiting and sched.waiting[0].arrival > t and not sched.running:
                    t = sched.waiting[0].arrival  # the GPU idles until the next request arrives
                    continue
                ready = sched.next_ready(t)
                if ready is not None:
                    # Only KV loads from the CPU tier under way: the GPU idles until the first is done,
                    # or until a request arrives that may have work.
                    arriving = sched.waiting[0].arrival if sched.waiting else ready
                    t = min(ready, arriving) if arriving > t else ready
                    continue
                if not result.preempted and not sched.running and sched.waiting:
                    # Cannot happen for requests the API admitted (max_model_len fits the cache); a
                    # request that can never be scheduled is failed rather than spinning on it.
                    req = sched.waiting[0]
                    req.finish_reason = "error"
                    sched.abort(req)
                    req.finished_at = t
                    m.request_finished(req)
                    touched.add(req)
                continue
            cost = self.time_model.step([(w.num_new, w.context) for w in result.work])
            prev, t = t, t + cost.duration_s / self.time_scale
            self.steps += 1
            self.gpu.record(t, cost.kernel_s / self.time_scale, cost.memory_s, cost.compute_s)
            gpus = self.profile.gpus  # each GPU of the engine does its share of the step
            m.step_work(cost.flops / gpus, (cost.bytes - cost.write_bytes) / gpus, cost.write_bytes / gpus)
            sampled, finished, generated = sched.complete(result, self._sample)
            m.generation_tokens.inc(generated)
            stats = sched.stats
            if stats.drafts:  # the step's verified drafts (speculative decoding), onto /metrics
                m.count_drafts(stats.drafts, stats.draft_tokens, stats.accepted, stats.accepted_per_pos)
                stats.drafts = stats.draft_tokens = stats.accepted = 0
                stats.accepted_per_pos[:] = [0] * len(stats.accepted_per_pos)
            first_token = False
            prefilled = 0  # the computed prompt tokens of the prefills that ended in this step
            # Every sequence that decoded in the previous step has the same inter-token latency (this
            # step's duration, however many tokens it emitted): one histogram update for all of them.
            steady = 0
            for req in sampled:
                last = req.last_token
                if last is None:
                    first_token = True
                    req.first_token = t
                    m.ttft.observe(t - req.arrival)
                    prefilled += m.prompt_counted(req)
                elif last == prev:
                    steady += 1
                else:
                    m.itl.observe(t - last)
                req.last_token = t
            if steady:
                m.itl.observe_n(t - prev, steady)
            if sampled:
                # As vLLM counts a step's tokens (one observation per step with output): the tokens it
                # generated, and a prompt's computed tokens once, in the step of its first token.
                m.iteration_tokens.observe(prefilled + generated)
            touched.update(sampled)
            for req in finished:
                req.finished_at = t
                m.request_finished(req)
            if first_token:
                break
        self._t = t
        self._publish_gauges(t)
        return t, touched

    def _count_lookups(self) -> None:
        """The step's prefix-cache lookups, preemptions and evicted blocks' residency, onto /metrics."""
        m, stats = self.metrics, self.scheduler.stats
        if stats.prefix_queries:
            m.prefix_queries.inc(stats.prefix_queries)
            m.prefix_hits.inc(stats.prefix_hits)
        if stats.external_queries:
            m.external_queries.inc(stats.external_queries)
            m.external_hits.inc(stats.external_hits)
        if stats.preemptions:
            m.preemptions.inc(stats.preemptions)
        stats.prefix_queries = stats.prefix_hits = stats.preemptions = 0
        stats.external_queries = stats.external_hits = 0
        residency = self.kv.residency
        if residency is not None and residency.evictions:
            m.observe_evictions(residency.drain())

    def _deliver(self, touched: set[SimRequest]) -> None:
        handles = self._handles
        for req in touched:
            handle = handles.get(req)
            if handle is None:
                continue
            handle.visible = req.num_output
            if req.status is Status.FINISHED:
                handle.done = True
                del handles[req]
            try:
                handle.publish()
            except Exception:  # a broken consumer must not stop the step loop (and every other stream)
                _log.exception("delivering tokens of request %s failed", req.request_id)
                self.abort(handle)

    async def run(self) -> None:
        """The step loop; runs until cancelled."""
        self._t = max(self._t, self.clock())  # (requests may have been queued before the loop started)
        while True:
            if not self.scheduler.has_work():
                self._publish_gauges(self._t)
                self._wake.clear()
                await self._wake.wait()
                self._t = max(self._t, self.clock())
            end, touched = self.run_window(self.clock())
            delay = end - self.clock()
            # Always yield, so HTTP handlers run even when the loop is behind real time.
            await asyncio.sleep(delay if delay > 0 else 0)
            late = self.clock() - end
            if late > 0.25 * self._interval:
                self._interval = min(MAX_STREAM_INTERVAL_S, self._interval * 1.5)
            else:
                self._interval = max(self.stream_interval_s, self._interval * 0.9)
            self._deliver(touched)


def cpu_tier(profile: SimProfile) -> CpuTier | None:
    """The profile's CPU KV tier, or None without one. Each GPU of a tensor-parallel engine moves its
    share of a block over its own link, so the engine's bandwidth is the link's times the GPUs."""
    if profile.num_cpu_blocks < 1:
        return None
    return CpuTier(profile.num_cpu_blocks, profile.block_bytes, profile.cpu_kv_gb_per_s * 1e9 * profile.gpus)


def new_gpu_uuids(count: int) -> list[str]:
    """DCGM-style GPU UUIDs (``GPU-`` + a random UUID), one per simulated GPU."""
    return [f"GPU-{uuid.uuid4()}" for _ in range(count)]
