"""One model call as the proxy saw it: what the request said, when its bytes came, what the server
counted; and its figures in the load client's terms (`Completed`, `Failed`, measure/record.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentx_tui.measure import (
    Completed,
    Failed,
    MeasuredAnswer,
    SseScanner,
    UsageCounts,
    classify,
    measure_answer,
    usage_int,
)
from agentx_tui.proxy._request import CallKind, CallRequest

_JSON_KEEP = 16 * 1024 * 1024  # a non-streamed answer is read for its usage up to this size


@dataclass(slots=True, eq=False)
class ProxiedCall(UsageCounts):
    """Filled in by the proxy as the call goes; read by its observer when it starts and when it ends.

    `body`, `session_name`, `parent_name` and `auth` hold what the agent sent: they stay in memory (the
    capture tokenizes the body off the request's path, then drops it) and never reach a log or a file."""

    kind: CallKind
    body: bytes
    received_at: float  # time.monotonic() when the proxy had the request
    session_name: str | None = None  # the session header's value
    parent_name: str | None = None  # the parent-session header's value
    auth: tuple[tuple[str, str], ...] = ()  # the request's credentials, for the server's /tokenize
    request: CallRequest | None = None  # None: not a JSON object (the server refuses it)
    status: int | None = None
    first_byte_at: float | None = None  # the upstream's first body bytes reached the proxy
    scan: SseScanner | None = None  # a streamed (SSE) answer
    _json: list[bytes] = field(default_factory=list)  # a whole (non-SSE) answer, for its usage or error
    _json_size: int = 0
    body_relayed: bool = False  # the upstream's body ended and every byte of it went to the agent's connection
    ended_at: float = 0.0
    error: str | None = None  # the failure's kind (measure/sse.py's names), None if completed
    detail: str = ""  # the upstream's error, one line (no header values: they are never in it)
    session: Any = None  # the observer's own handle for the call's session
    tree: int = -1  # the task (session tree) id the observer gave it, for the run's statistics
    step: int = 0  # its 1-based place in its own agent's loop (0: unknown)
    # How long its session sat idle before it: its start − the end of its agent's previous call (a
    # sub-agent's first: its parent's latest); None for a session's first call or an unknown session.
    idle_s: float | None = None
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None
    _figures: MeasuredAnswer | None = None  # worked out once the call is over (`figures`)

    # -- filled by the proxy --------------------------------------------------------------------
    def keep(self, data: bytes) -> None:
        """Keep a chunk of a non-SSE answer (bounded): its usage, or its error message, is read at the end."""
        if self._json_size < _JSON_KEEP:
            self._json.append(data)
            self._json_size += len(data)

    @property
    def answer_relayed(self) -> bool:
        """Whether the agent has its whole answer: a streamed answer's `[DONE]` handed to its connection,
        or a whole body. The scanner is fed only what was handed over, so its `[DONE]` is the relayed one."""
        return self.scan.done if self.scan is not None else self.body_relayed

    def finish(self, ended_at: float, error: str | None = None, detail: str = "") -> None:
        """The call is over: read the usage and finish reason, decide whether it completed.

        An answer relayed whole is complete whatever happens to either connection after: an agent that
        has its `[DONE]` may close at once (the official `openai` client drains the rest for at most
        0.1 s, then closes), and the proxy, on a busy event loop, may only then try to end the response.
        Counting that as a hang-up would drop a call the agent received from its capture and session."""
        self.ended_at = ended_at
        self._figures = None
        if error is not None and self.answer_relayed:
            error, detail = None, ""
        body = b"".join(self._json)
        self._json = []
        if error is None and self.status is not None and self.status >= 400:
            text = body[:2000].decode(errors="replace")
            error, detail = classify(self.status, text), _one_line(text)
        if self.scan is not None:
            self.scan.end()
            self.usage, self.finish_reason = self.scan.usage, self.scan.finish_reason
            if error is None and self.scan.error is not None:
                error, detail = self.scan.error, _one_line(self.scan.detail)
            if error is None and not self.scan.done:
                error = "incomplete_stream"
        elif body and error is None:
            self.usage, self.finish_reason = _answer(body)
        self.error, self.detail = error, detail

    # -- read by the observer -------------------------------------------------------------------
    @property
    def streamed(self) -> bool:
        return self.scan is not None

    @property
    def first_at(self) -> float | None:
        """When the first content event reached the proxy (streamed answers only)."""
        return self.scan.read_times[0] if self.scan is not None and self.scan.read_times else None

    def figures(self) -> MeasuredAnswer:
        """The ended call's output tokens, TTFT, decode tok/s, ITL and r_i, by the load client's rule
        (measure/timing.py); TTFT and E2E count from when the proxy had the request."""
        if self._figures is None:
            scan = self.scan
            self._figures = measure_answer(
                self.received_at,
                scan.read_times if scan is not None else (),
                scan.read_events if scan is not None else (),
                reported_output=usage_int(self.usage, "completion_tokens"),
                counted_events=scan.events if scan is not None else None,
                ended_at=self.ended_at or None,  # 0.0 until the call has ended
            )
        return self._figures

    @property
    def output_tokens(self) -> int | None:
        """The server's count, else the content events counted (`measure_answer`)."""
        return self.figures().output_tokens

    @property
    def ttft_s(self) -> float | None:
        return self.figures().ttft_s

    def completed(self, prompt_tokens: int, reused_tokens: int | None = None) -> Completed:
        """The call's figures for the run's statistics; `prompt_tokens` from usage or /tokenize, and its
        reused tokens (proxy/_reuse.py: its ceiling's count too) once its prompt was tokenized."""
        return Completed.of_answer(
            self.figures(),
            sent_at=self.received_at,
            ended_at=self.ended_at,
            prompt_tokens=prompt_tokens,
            cached_tokens=self.cached_tokens,
            ceiling_tokens=reused_tokens,  # None when its prompt was not tokenized (then unknown)
            tree=self.tree,
            step=self.step,
            idle_s=self.idle_s,
        )

    def failed(self) -> Failed:
        # A call the agent itself gave up is not a failure of the server: counted, not failed.
        # A failure of the server fails the call's task; a cancelled call leaves its task running.
        return Failed(self.error or "unknown", self.error != "cancelled", self.received_at, self.ended_at, self.tree)


def _one_line(text: str) -> str:
    """The server's error message, else its text, in one line of at most 200 characters."""
    try:
        data = json.loads(text)
        message = data.get("error", {}).get("message") if isinstance(data.get("error"), dict) else data.get("message")
        text = message if isinstance(message, str) else text
    except (ValueError, AttributeError):
        pass
    line = " ".join(text.split())
    return line if len(line) <= 200 else line[:197] + "..."


def _answer(body: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """Usage and finish reason of a whole JSON answer."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None, None
    if not isinstance(data, dict):
        return None, None
    usage = data.get("usage")
    choices = data.get("choices")
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    reason = first.get("finish_reason")
    return (usage if isinstance(usage, dict) else None), (reason if isinstance(reason, str) else None)
