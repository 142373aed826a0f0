"""A real tiny vLLM of a test module's own, with engine flags the session's engine (tests/conftest.py)
does not have: started in a thread as soon as collection shows a selected test needs it, so that its
start-up (35–85 s on these machines) overlaps the tests before that one, and stopped when the session
ends. The thread lives until then: the server's parent-death signal is tied to the thread that
started it (engine/process.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import pytest

from agentx_tui.engine import LaunchedServer, start_vllm

# The session's engine and the fresh one: a small, fixed KV space keeps memory low; prefix caching is on
# by default in vLLM V1.
TINY_VLLM_ARGS = ["--max-num-seqs", "32"]
# The speculating one: ngram drafts of up to 3 tokens, which on greedy requests the tiny random model's
# repetitions accept, so that its `spec_decode` counters and acceptance length are real (docs/vllm.md).
# An engine of its own: the session's must keep the metric families the simulator's contract compares
# (tests/sim/test_contract.py) and one streamed chunk per token.
NGRAM_SPECULATION = '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4,"prompt_lookup_min":2}'
SPEC_VLLM_ARGS = [*TINY_VLLM_ARGS, "--speculative-config", NGRAM_SPECULATION]
# The small-KV one: 48 blocks of 128 tokens (6,144 tokens of KV, docs/vllm.md's KV-pressure recipe);
# --kv-cache-metrics is added by the launcher, every block sampled so that a few dozen evictions give its
# histograms their observations.
SMALL_KV_VLLM_ARGS = ["--max-num-seqs", "16", "--num-gpu-blocks-override", "48", "--kv-cache-metrics-sample", "1.0"]


class BackgroundVllm:
    def __init__(self, args: Sequence[str], name: str) -> None:
        self.args = list(args)
        self.server: LaunchedServer | None = None
        self.error: Exception | None = None
        self._ready = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.server = asyncio.run(start_vllm("tiny", self.args, timeout_s=300))
        except Exception as exc:  # reported by the test that needs the server, not lost in a thread
            self.error = exc
        finally:
            self._ready.set()
        self._done.wait()
        if self.server is not None:
            self.server.stop()

    def wait(self) -> LaunchedServer:
        self._ready.wait()
        if self.server is None:
            pytest.fail(f"could not start the real vLLM engine ({' '.join(self.args)}): {self.error}")
        return self.server

    def stop(self) -> None:
        self._done.set()
        self._thread.join(timeout=120)
