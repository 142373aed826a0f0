"""A completed call's prompt, tokenized by the server (`Tokenizer`, off the request's path) for whoever
needs its tokens: the statistics when the server gave no usage (the prompt's length), and the capture
(the prompt's block hashes)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agentx_tui.proxy._call import ProxiedCall
from agentx_tui.proxy._capture import Capture, CapturedCall
from agentx_tui.proxy._session import LiveSession
from agentx_tui.proxy._tokenize import Tokenizer

# Hands a completed call's figures to the statistics, with its prompt's length.
Counted = Callable[[ProxiedCall, int], None]


class PromptTokens:
    def __init__(self, tokenizer: Tokenizer | None, capture: Capture | None, counted: Counted) -> None:
        self.tokenizer = tokenizer
        self.capture = capture
        self.counted = counted

    def wanted(self, call: ProxiedCall) -> bool:
        """Whether a completed call's prompt is tokenized: its length is unknown, or it is captured."""
        return self.tokenizer is not None and (call.prompt_tokens is None or self.capture is not None)

    def request(self, call: ProxiedCall, session: LiveSession | None, record: CapturedCall | None) -> None:
        """Tokenize a completed call's prompt (`wanted`); `record` is its capture's, waiting for the
        tokens. A call whose prompt's length is unknown reaches the statistics once it is known (0 when
        it cannot be had)."""
        tokenizer, capture = self.tokenizer, self.capture
        assert tokenizer is not None
        prompt = call.prompt_tokens
        agent = session.agent if session is not None else None

        async def tokens_done(ids: Sequence[int] | None) -> None:
            if prompt is None:
                count = len(ids) if ids is not None else 0
                self.counted(call, count)
                if session is not None and ids is not None:
                    session.context_tokens = count
            if record is not None and agent is not None and capture is not None:
                await capture.add_tokens(agent, record, ids)

        if not tokenizer.submit(call.kind, call.body, call.auth, tokens_done):
            if record is not None and agent is not None:
                agent.tree.pending -= 1
            if prompt is None:
                self.counted(call, 0)
        call.body = b""  # the tokenizer has its own reference; nothing else needs the text
