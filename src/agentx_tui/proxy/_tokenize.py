"""The server's own token ids of a call's prompt, fetched off the request's path.

A capture hashes the prompt as the server tokenized it: vLLM's `/tokenize` with the call's messages
(and tools, chat template options) renders the chat template and the generation prompt exactly as its
chat endpoint does, so its count equals the call's `usage.prompt_tokens` (tests/proxy check it on the
real engine). Calls wait in a bounded queue and are tokenized after they ended, by a couple of
workers: a call is never delayed by it. A full queue drops the job (counted), it never blocks.

The job keeps the call's credentials (in memory only) so that a server which guards `/tokenize` with
the same API key as its completions answers too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import aiohttp

from agentx_tui.proxy._request import CallKind, tokenize_request

log = logging.getLogger(__name__)
TokensDone = Callable[[Sequence[int] | None], Awaitable[None]]

MAX_PENDING_BYTES = 128 * 1024 * 1024  # request bodies waiting to be tokenized
TOKENIZE_TIMEOUT_S = 30.0
WORKERS = 2


@dataclass(slots=True)
class _Job:
    kind: CallKind
    body: bytes
    auth: tuple[tuple[str, str], ...]
    done: TokensDone


@dataclass(frozen=True, slots=True)
class TokenizerCounts:
    pending: int
    tokenized: int
    failed: int  # the server did not tokenize (an error, a timeout, no /tokenize)
    dropped: int  # the queue was full
    last_error: str | None


class Tokenizer:
    """`submit` a finished call; its `done` gets the prompt's token ids (None when they cannot be had)."""

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        max_pending_bytes: int = MAX_PENDING_BYTES,
        timeout_s: float = TOKENIZE_TIMEOUT_S,
        workers: int = WORKERS,
    ) -> None:
        self.url = url.rstrip("/") + "/tokenize"
        self.headers = dict(headers or {})
        self.max_pending_bytes = max_pending_bytes
        self.timeout_s = timeout_s
        self._workers_wanted = workers
        self._queue: deque[_Job] = deque()
        self._pending_bytes = 0
        self._busy = 0
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._workers: list[asyncio.Task[None]] = []
        self._http: aiohttp.ClientSession | None = None
        self.tokenized = self.failed = self.dropped = 0
        self.last_error: str | None = None

    async def start(self) -> None:
        if self._http is None:
            self._http = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout_s), trust_env=False,
                cookie_jar=aiohttp.DummyCookieJar(),
            )  # fmt: skip
            self._workers = [
                asyncio.create_task(self._work(), name="proxy-tokenize") for _ in range(self._workers_wanted)
            ]

    def submit(self, kind: CallKind, body: bytes, auth: tuple[tuple[str, str], ...], done: TokensDone) -> bool:
        """Queue a call's prompt; False (and counted as dropped) when the queue is full."""
        if self._http is None or self._pending_bytes + len(body) > self.max_pending_bytes:
            self.dropped += 1
            return False
        self._queue.append(_Job(kind, body, auth, done))
        self._pending_bytes += len(body)
        self._idle.clear()
        self._wake.set()
        return True

    @property
    def pending(self) -> int:
        return len(self._queue) + self._busy

    def figures(self) -> TokenizerCounts:
        return TokenizerCounts(self.pending, self.tokenized, self.failed, self.dropped, self.last_error)

    async def drain(self, timeout_s: float) -> bool:
        """Wait until every queued call is tokenized, at most `timeout_s`; whether it got there."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout_s)
        return self._idle.is_set()

    async def close(self) -> None:
        """Stop the workers; calls still queued get None."""
        for task in self._workers:
            task.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []
        while self._queue:
            job = self._queue.popleft()
            with contextlib.suppress(Exception):
                await job.done(None)
        self._pending_bytes = 0
        self._idle.set()
        if self._http is not None:
            http, self._http = self._http, None
            await http.close()

    async def _work(self) -> None:
        while True:
            while not self._queue:
                self._wake.clear()
                await self._wake.wait()
            job = self._queue.popleft()
            self._pending_bytes -= len(job.body)
            self._busy += 1
            try:
                try:
                    ids = await self._tokens(job)
                except Exception:  # a surprise in one answer must not stop the worker
                    log.exception("tokenizing a proxied call failed")
                    self._failure("tokenizing failed unexpectedly")
                    ids = None
                try:
                    await job.done(ids)
                except Exception:
                    log.exception("recording a proxied call's tokens failed")
            finally:
                self._busy -= 1
                if not self._queue and not self._busy:
                    self._idle.set()

    async def _tokens(self, job: _Job) -> Sequence[int] | None:
        wanted = tokenize_request(job.kind, job.body)
        if wanted is None:
            return None
        if isinstance(wanted, list):
            return wanted  # the call sent token ids itself
        assert self._http is not None
        headers = {"Content-Type": "application/json", **self.headers, **dict(job.auth)}
        started = time.monotonic()
        try:
            async with self._http.post(self.url, data=json.dumps(wanted).encode(), headers=headers) as resp:
                if resp.status != 200:
                    self._failure(f"/tokenize answered HTTP {resp.status}")
                    return None
                data = await resp.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            waited = time.monotonic() - started
            self._failure(f"/tokenize failed after {waited:.1f} s ({type(exc).__name__})")
            return None
        tokens = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
            self._failure("/tokenize gave no token ids")
            return None
        self.tokenized += 1
        return tokens

    def _failure(self, why: str) -> None:
        self.failed += 1
        self.last_error = why
        return None
