"""A completed call's prompt, tokenized by the server (`Tokenizer`, off the request's path) for whoever
needs its tokens: the statistics (the prompt's length when the server gave no usage; its reused tokens,
for the split of the prompt into cold, hit and evicted tokens: `SentBlocks`) and the capture (the
prompt's block hashes)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agentx_tui.proxy._call import ProxiedCall
from agentx_tui.proxy._capture import Capture, CapturedCall
from agentx_tui.proxy._reuse import SentBlocks
from agentx_tui.proxy._session import LiveSession
from agentx_tui.proxy._tokenize import Tokenizer

# Hands a completed call's figures to the statistics: its prompt's length and its reused tokens (None:
# not known).
Counted = Callable[[ProxiedCall, int, int | None], None]


class PromptTokens:
    def __init__(
        self, tokenizer: Tokenizer | None, capture: Capture | None, counted: Counted, sent: SentBlocks | None = None
    ) -> None:
        self.tokenizer = tokenizer
        self.capture = capture
        self.counted = counted
        self.sent = sent if sent is not None else SentBlocks()

    def wanted(self, call: ProxiedCall) -> bool:
        """Whether a completed call's prompt is tokenized: its length is unknown, it is captured, or the
        server reported its cached tokens (then its split can be told: what it reused, what was hit).
        A server that reports no cached tokens is not asked: without them the split says nothing."""
        return self.tokenizer is not None and (
            call.prompt_tokens is None or self.capture is not None or call.cached_tokens is not None
        )

    def request(self, call: ProxiedCall, session: LiveSession | None, record: CapturedCall | None) -> None:
        """Tokenize a completed call's prompt (`wanted`); `record` is its capture's, waiting for the
        tokens. The call reaches the statistics (`counted`) once, when its tokens are in: with its
        prompt's length (the server's usage, else the tokens counted, 0 when neither can be had) and its
        reused tokens (`SentBlocks`, in the order the calls were handed in)."""
        tokenizer, capture = self.tokenizer, self.capture
        assert tokenizer is not None
        prompt = call.prompt_tokens
        agent = session.agent if session is not None else None
        ticket = self.sent.ticket()

        def count(ids: Sequence[int] | None, reused: int | None) -> None:
            length = prompt if prompt is not None else len(ids) if ids is not None else 0
            self.counted(call, length, reused)
            if prompt is None and session is not None and ids is not None:
                session.context_tokens = length

        async def tokens_done(ids: Sequence[int] | None) -> None:
            self.sent.observe(ticket, ids, lambda reused: count(ids, reused))
            if record is not None and agent is not None and capture is not None:
                await capture.add_tokens(agent, record, ids)

        if not tokenizer.submit(call.kind, call.body, call.auth, tokens_done):
            self.sent.skip(ticket)
            if record is not None and agent is not None:
                agent.tree.pending -= 1
            count(None, None)
        call.body = b""  # the tokenizer has its own reference; nothing else needs the text
