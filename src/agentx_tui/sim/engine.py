"""The simulated engine running in real time on the asyncio loop.

One task runs the step loop. Each wake-up it plans engine steps ahead from the engine's time cursor
until the steps cover one stream interval (default 10 ms) of wall time, then sleeps until the last
step's simulated end and hands every stream the tokens of all those steps at once: one chunk per
request per wake-up, like vLLM's stream interval, which is what lets one core stream tens of thousands
of tokens per second. A step that produced a request's *first* token ends the window early, so TTFT is
not rounded up to the interval. Requests that arrive while the loop sleeps join at the next step
boundary, as they would in vLLM.

When the process is busy (handlers wake late), the interval stretches up to 50 ms and shrinks back
once the loop keeps up again, so the simulated GPU keeps real time and chunks get fatter instead.

``time_scale`` > 1 runs the simulated GPU that many times faster than real time (for benchmarks of the
serving path itself); the figures on /metrics are then in scaled time.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry

from agentx_tui.sim.gpu import GpuTelemetry
from agentx_tui.sim.kvcache import KVCacheManager
from agentx_tui.sim.metrics import DcgmCollector, VllmMetrics
from agentx_tui.sim.profiles import SimProfile
from agentx_tui.sim.scheduler import Scheduler, SimRequest, Status
from agentx_tui.sim.timing import TimeModel
from agentx_tui.sim.tokenizer import SimTokenizer

DEFAULT_STREAM_INTERVAL_S = 0.01
# Under load the interval stretches up to this, so that each chunk carries more tokens instead of the
# loop falling behind real time (which would slow the simulated GPU down).
MAX_STREAM_INTERVAL_S = 0.05
# When the host is busy the step loop runs behind wall time and catches up (the simulated GPU does not
# slow down, only delivery is late) — but by at most this much, beyond which time is let go.
MAX_LAG_S = 0.5


@dataclass(eq=False)
class RequestHandle:
    """What an API handler holds for one request: wait for chunks, take their text."""

    request: SimRequest
    tokenizer: SimTokenizer
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    visible: int = 0  # tokens the engine has published (their simulated time has passed)
    done: bool = False
    taken: int = 0

    async def next_chunk(self) -> tuple[str, int, bool]:
        """Wait for new tokens; returns (their text, how many, whether the request is finished)."""
        while self.taken >= self.visible and not self.done:
            await self.ready.wait()
            self.ready.clear()
        start, self.taken = self.taken, self.visible
        seed = self.request.seed
        text = "".join(self.tokenizer.output_token(seed, i)[1] for i in range(start, self.taken))
        return text, self.taken - start, self.done and self.taken >= self.visible


class SimEngine:
    def __init__(
        self,
        profile: SimProfile,
        *,
        time_scale: float = 1.0,
        stream_interval_s: float = DEFAULT_STREAM_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if time_scale <= 0:
            raise ValueError("time_scale must be positive")
        self.profile = profile
        self.time_scale = time_scale
        self.stream_interval_s = stream_interval_s
        self._interval = stream_interval_s
        self.clock = clock
        self.tokenizer = SimTokenizer(profile.model.vocab_size)
        self.kv = KVCacheManager(profile.num_gpu_blocks, profile.block_size)
        self.scheduler = Scheduler(
            self.kv,
            max_num_seqs=profile.max_num_seqs,
            max_num_batched_tokens=profile.max_num_batched_tokens,
            max_model_len=profile.max_model_len,
        )
        self.time_model = TimeModel(profile)
        self.registry = CollectorRegistry()
        self.metrics = VllmMetrics(profile, self.registry)
        self.gpu = GpuTelemetry(profile, clock())
        self.registry.register(DcgmCollector(profile, lambda: self.gpu.sample(self.clock())))
        self._handles: dict[SimRequest, RequestHandle] = {}
        self._ids = itertools.count()
        self._wake = asyncio.Event()
        self._t = clock()
        self.steps = 0

    def submit(
        self,
        prompt_ids: list[int],
        *,
        max_tokens: int,
        min_tokens: int = 0,
        ignore_eos: bool = False,
        seed: int | None = None,
    ) -> RequestHandle:
        if seed is None:
            seed = zlib.crc32(repr(prompt_ids[-64:]).encode()) ^ next(self._ids)
        req = SimRequest(
            request_id=f"{next(self._ids):x}",
            prompt_ids=prompt_ids,
            max_tokens=max_tokens,
            min_tokens=min_tokens,
            ignore_eos=ignore_eos,
            natural_len=32 + seed % 481,
            seed=seed,
            arrival=self.clock(),
        )
        handle = RequestHandle(req, self.tokenizer)
        self._handles[req] = handle
        self.scheduler.add(req)
        self.metrics.waiting.set(len(self.scheduler.waiting))
        self._wake.set()
        return handle

    def abort(self, handle: RequestHandle) -> None:
        req = handle.request
        if req.status is Status.FINISHED:
            return
        self.scheduler.abort(req)
        req.finished_at = self.clock()
        self.metrics.request_finished(req)
        self._handles.pop(req, None)
        handle.done = True
        handle.ready.set()

    def _sample(self, req: SimRequest) -> int:
        return self.tokenizer.output_token(req.seed, req.num_output)[0]

    def _publish_gauges(self) -> None:
        self.metrics.running.set(len(self.scheduler.running))
        self.metrics.waiting.set(len(self.scheduler.waiting))
        self.metrics.kv_usage.set(self.kv.usage)

    def run_window(self, now: float) -> tuple[float, set[SimRequest]]:
        """Plan steps from the time cursor until they cover a stream interval; returns the end time of
        the last step and the requests that got tokens (or finished) in them."""
        t = max(self._t, now - MAX_LAG_S)
        horizon = now + self._interval
        touched: set[SimRequest] = set()
        m, sched = self.metrics, self.scheduler
        while sched.has_work() and t < horizon:
            result = sched.schedule(t)
            if not result.work:
                if sched.waiting and sched.waiting[0].arrival > t and not sched.running:
                    t = sched.waiting[0].arrival  # the GPU idles until the next request arrives
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
            cost = self.time_model.step((w.num_new, w.context) for w in result.work)
            t += cost.duration_s / self.time_scale
            self.steps += 1
            self.gpu.record(t, cost.kernel_s / self.time_scale, cost.memory_s, cost.compute_s)
            sampled, finished = sched.complete(result, self._sample)
            stats = sched.stats
            if stats.prefix_queries:
                m.prefix_queries.inc(stats.prefix_queries)
                m.prefix_hits.inc(stats.prefix_hits)
            if stats.preemptions:
                m.preemptions.inc(stats.preemptions)
            stats.prefix_queries = stats.prefix_hits = stats.preemptions = 0
            m.iteration_tokens.observe(cost.tokens)
            m.generation_tokens.inc(len(sampled))
            first_token = False
            for req in sampled:
                if req.first_token is None:
                    first_token = True
                    req.first_token = t
                    cached = req.num_cached_prompt or 0
                    m.ttft.observe(t - req.arrival)
                    m.prompt_tokens.inc(req.num_prompt)
                    m.prompt_cached.inc(cached)
                    m.prompt_cache_hit.inc(cached)
                    m.prompt_computed.inc(req.num_prompt - cached)
                else:
                    m.itl.observe(t - (req.last_token or t))
                req.last_token = t
            touched.update(sampled)
            for req in finished:
                req.finished_at = t
                m.request_finished(req)
            if first_token:
                break
        self._t = t
        self._publish_gauges()
        return t, touched

    def _deliver(self, touched: set[SimRequest]) -> None:
        for req in touched:
            handle = self._handles.get(req)
            if handle is None:
                continue
            handle.visible = req.num_output
            if req.status is Status.FINISHED:
                handle.done = True
                del self._handles[req]
            handle.ready.set()

    async def run(self) -> None:
        """The step loop; runs until cancelled."""
        while True:
            if not self.scheduler.has_work():
                self._publish_gauges()
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
