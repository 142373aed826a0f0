"""A server whose every answer has a known shape, for tests of what the client and the server's own
metrics say about it: the fake OpenAI server (tests/load/fake_openai.py: its toy tokenizer, prefix
cache and scripted failures) answering every streamed chat completion by an `AnswerShape`, with a
vLLM 0.32 `/metrics` page that tells of the answers it served.

The shape: the first content event `first_token_s` after the request arrived, then one event after
each of `gaps_s`, each holding the tokens `tokens_per_event` says (speculative decoding sends several
tokens in one event). Every event is written at its deadline from the request's arrival, not after
a sleep from the event before, so a busy machine's late timers do not add up along an answer. A gap
of 0 puts an event in the same write as the one before: the client reads them in one network read,
as it does when a proxy or a congested network holds them back.

The page (vLLM 0.32's names, types, labels `model_name` and `engine`, and buckets, as on the recorded
pages in tests/telemetry/data and in vLLM's `v1/metrics/loggers.py` and `v1/spec_decode/metrics.py`)
observes, per answer served, when it ends: its queue and prefill times as the shape gives them
(`queue_s`, `prefill_s`: the rest of the first token's wait is outside the server), its decode time
(its decode span, Σ `gaps_s`), its inference time (prefill + decode), its engine steps' tokens (the
first step: the prompt tokens computed plus its first event's tokens; then each event's, one step
each, as if it ran alone), its computed prompt tokens and its preemptions (none); the token,
prefix-cache and request counters; and with `SpecRates`, the speculative-decoding counters at those
rates.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from itertools import accumulate, cycle, islice
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from agentx_tui.sim.metrics import ITERATION_TOKENS_BUCKETS, REQUEST_LATENCY_BUCKETS, request_tokens_buckets
from tests.load.fake_openai import FakeServer, chat_ids

# vLLM's `request_num_preemptions` bounds (the recorded pages).
PREEMPTION_BUCKETS = (1, 2, 3, 4, 5, 10, 20)
ENGINE = "0"


@dataclass(frozen=True)
class AnswerShape:
    """One answer, every time from the request's arrival at the server."""

    first_token_s: float = 0.4
    gaps_s: tuple[float, ...] = (0.02,) * 19  # between one content event and the next
    tokens_per_event: tuple[int, ...] = (1,)  # the first event's tokens, the next's, …, cycled
    queue_s: float = 0.1  # what the server's histograms say of the first token's wait
    prefill_s: float = 0.3

    @staticmethod
    def stalled(*, at: int = 9, long_s: float = 0.2, gap_s: float = 0.02, gaps: int = 19) -> AnswerShape:
        """`gaps` gaps of `gap_s` but the one after event `at`, of `long_s`."""
        return AnswerShape(gaps_s=tuple(long_s if i == at else gap_s for i in range(gaps)))

    @property
    def events(self) -> int:
        return 1 + len(self.gaps_s)

    def event_tokens(self) -> list[int]:
        return list(islice(cycle(self.tokens_per_event), self.events))

    @property
    def output_tokens(self) -> int:
        return sum(self.event_tokens())

    @property
    def decode_s(self) -> float:
        """First → last content event: the decode span."""
        return sum(self.gaps_s)

    def deadlines(self) -> list[float]:
        """When each event is due, from the request's arrival."""
        return list(accumulate(self.gaps_s, initial=self.first_token_s))


@dataclass(frozen=True)
class SpecRates:
    """Speculative decoding as the counters tell it: per answer, `drafts` verify steps of
    len(`by_position`) draft tokens each, of which the share `by_position[i]` was accepted at position i.
    The acceptance length is 1 + Σ by_position; the acceptance rate Σ by_position ÷ positions."""

    by_position: tuple[float, ...] = (0.8, 0.5, 0.2)
    drafts: int = 10  # per answer (rates × drafts should be whole: the counters are counts)


@dataclass
class ShapedServer(FakeServer):
    """The fake server answering every streamed chat completion by `shape` (a test may change it between
    requests), whatever its `max_tokens`; the fake's own streaming knobs (`chunk_tokens`,
    `token_delay_s`, `prefill_delay_s`, `drop_after`, …) are not used. Its prefix cache, tokenizer and
    scripted failures are the fake's."""

    shape: AnswerShape = field(default_factory=AnswerShape)
    spec: SpecRates | None = None
    model_name: str = "fake"
    answers: int = 0  # answers served to their end
    _metrics: _VllmPage | None = None

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        self._metrics = _VllmPage(self.model_name, self.max_model_len, self.spec)
        app.router.add_get("/metrics", self._page)

    async def _page(self, request: web.Request) -> web.Response:
        assert self._metrics is not None
        return web.Response(body=generate_latest(self._metrics.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        arrived, arrived_at = time.monotonic(), loop.time()
        body = await request.json()
        refused = self._refusal(request, body)
        if refused is not None:
            return refused
        assert self._metrics is not None
        self._metrics.running.inc()
        try:
            return await self._answer(request, body, arrived, arrived_at)
        finally:
            self._metrics.running.dec()

    async def _answer(
        self, request: web.Request, body: dict[str, Any], arrived: float, arrived_at: float
    ) -> web.StreamResponse:
        """Stream the shape's answer to `body`, which arrived at `arrived` (`arrived_at` on the loop's clock)."""
        loop = asyncio.get_running_loop()
        shape = self.shape
        ids = chat_ids(body["messages"], True)
        cached = self._cached(ids, arrived)
        self.prompt_tokens_total += len(ids)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        head = {"id": "x", "object": "chat.completion.chunk", "model": body["model"]}
        role = {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
        await resp.write(f"data: {json.dumps(role)}\n\n".encode())
        tokens = shape.event_tokens()
        deadlines = shape.deadlines()
        i = 0
        while i < shape.events:
            # The events due at this deadline (a gap of 0 joins the one before), in one write.
            due = deadlines[i]
            batch = b""
            while i < shape.events and deadlines[i] == due:
                chunk = {**head, "choices": [{"index": 0, "delta": {"content": " tok" * tokens[i]}}]}
                batch += f"data: {json.dumps(chunk)}\n\n".encode()
                i += 1
            await asyncio.sleep(max(0.0, arrived_at + due - loop.time()))
            await resp.write(batch)
        out = shape.output_tokens
        self.generation_tokens_total += out
        usage: dict[str, Any] = {"prompt_tokens": len(ids), "completion_tokens": out, "total_tokens": len(ids) + out}
        if self.cached_details:
            usage["prompt_tokens_details"] = {"cached_tokens": cached}
        await resp.write(f"data: {json.dumps({**head, 'choices': [], 'usage': usage})}\n\n".encode())
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        self._used(self._keys(ids), time.monotonic())
        self.timeline.append((arrived, time.monotonic(), out))
        assert self._metrics is not None
        self._metrics.served(shape, prompt=len(ids), cached=cached, tokens=tokens)
        self.answers += 1
        return resp


class _VllmPage:
    """The metrics of the answers served, in a registry of their own (several servers per process)."""

    def __init__(self, model: str, max_model_len: int, spec: SpecRates | None) -> None:
        self.registry = registry = CollectorRegistry()
        labels, values = ["model_name", "engine"], (model, ENGINE)
        self.spec = spec

        def counter(name: str, doc: str) -> Counter:
            return Counter(name, doc, labels, registry=registry).labels(*values)

        def histogram(name: str, doc: str, buckets: tuple[float, ...] | list[float]) -> Histogram:
            return Histogram(name, doc, labels, buckets=buckets, registry=registry).labels(*values)

        self.running = Gauge(
            "vllm:num_requests_running", "Number of requests in model execution batches.", labels, registry=registry
        ).labels(*values)
        Gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", labels, registry=registry)
        Gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", labels, registry=registry)
        self.prefix_queries = counter(
            "vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens."
        )
        self.prefix_hits = counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.")
        counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.")
        self.prompt_tokens = counter("vllm:prompt_tokens", "Number of prefill tokens processed.")
        self.generation_tokens = counter("vllm:generation_tokens", "Number of generation tokens processed.")
        self.success = Counter(
            "vllm:request_success",
            "Count of successfully processed requests.",
            [*labels, "finished_reason"],
            registry=registry,
        ).labels(*values, "length")
        self.iteration_tokens = histogram(
            "vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", ITERATION_TOKENS_BUCKETS
        )
        self.queue = histogram(
            "vllm:request_queue_time_seconds",
            "Histogram of time spent in WAITING phase for request.",
            REQUEST_LATENCY_BUCKETS,
        )
        self.inference = histogram(
            "vllm:request_inference_time_seconds",
            "Histogram of time spent in RUNNING phase for request.",
            REQUEST_LATENCY_BUCKETS,
        )
        self.prefill = histogram(
            "vllm:request_prefill_time_seconds",
            "Histogram of time spent in PREFILL phase for request.",
            REQUEST_LATENCY_BUCKETS,
        )
        self.decode = histogram(
            "vllm:request_decode_time_seconds",
            "Histogram of time spent in DECODE phase for request.",
            REQUEST_LATENCY_BUCKETS,
        )
        self.preemptions = histogram(
            "vllm:request_num_preemptions",
            "Histogram of the number of times a request was preempted.",
            PREEMPTION_BUCKETS,
        )
        self.computed = histogram(
            "vllm:request_prefill_kv_computed_tokens",
            "Histogram of new KV tokens computed during prefill (excluding cached tokens).",
            request_tokens_buckets(max_model_len),
        )
        if spec is not None:
            self.drafts = counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.")
            self.draft_tokens = counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.")
            self.accepted = counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.")
            per_pos = Counter(
                "vllm:spec_decode_num_accepted_tokens_per_pos",
                "Accepted tokens per draft position.",
                [*labels, "position"],
                registry=registry,
            )
            self.accepted_at = [per_pos.labels(*values, str(i)) for i in range(len(spec.by_position))]

    def served(self, shape: AnswerShape, *, prompt: int, cached: int, tokens: list[int]) -> None:
        """One answer served to its end."""
        computed = prompt - cached
        self.prefix_queries.inc(prompt)
        self.prefix_hits.inc(cached)
        self.prompt_tokens.inc(prompt)
        self.generation_tokens.inc(sum(tokens))
        self.success.inc()
        self.queue.observe(shape.queue_s)
        self.prefill.observe(shape.prefill_s)
        self.decode.observe(shape.decode_s)
        self.inference.observe(shape.prefill_s + shape.decode_s)
        self.preemptions.observe(0)
        self.computed.observe(computed)
        self.iteration_tokens.observe(computed + tokens[0])
        for n in tokens[1:]:
            self.iteration_tokens.observe(n)
        spec = self.spec
        if spec is not None:
            self.drafts.inc(spec.drafts)
            self.draft_tokens.inc(spec.drafts * len(spec.by_position))
            accepted = [rate * spec.drafts for rate in spec.by_position]
            self.accepted.inc(sum(accepted))
            for counter, n in zip(self.accepted_at, accepted, strict=True):
                counter.inc(n)
