"""Agents against the simulated engine in simulated time: no HTTP, no wall clock, deterministic.

Each of `users` agents runs one session after another: a call's prompt is the whole history so far (a
prefix all sessions share, the session's first message, then each answer and a tool result after it),
and after each answer the agent thinks (runs its tool) for `think_s(session, step)` seconds before the
next call. The engine's loop is driven directly (`SimEngine.run_window`) with a clock that jumps from
one event to the next, so minutes of serving take a second or two of CPU.

Every call is kept as a `Call`, with what the client would know of it: when it started and ended, its
session's idle time before it (its previous call's end → its start), the tokens of its prompt that the
session had sent before (reused) and how many of them the server had cached. The engine's /metrics
page before the first request (`AgentRun.first_page`) and after the run (`AgentRun.page`) are what a
scraper would read.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from prometheus_client import generate_latest

from agentx_tui.sim.engine import SimEngine
from agentx_tui.sim.profiles import SimProfile
from agentx_tui.sim.scheduler import SimRequest, Status

ThinkTime = Callable[[int, int], float]  # (session, step) → seconds before the next call


@dataclass(frozen=True)
class Call:
    session: int
    step: int
    start: float
    first_token: float
    end: float
    prompt: int
    cached: int  # the server's cached_tokens: GPU cache and CPU tier
    offloaded: int  # of those, loaded from the CPU tier
    output: int
    reused: int  # prompt tokens the session had sent before (its previous prompt and answer)
    idle_s: float | None  # its previous call's end → its start; None for a session's first call

    @property
    def hit(self) -> int:
        """Reused tokens the server had cached (its cached tokens, capped at the reused ones)."""
        return min(self.cached, self.reused)


@dataclass
class AgentRun:
    engine: SimEngine
    duration_s: float
    calls: list[Call] = field(default_factory=list)
    first_page: str = ""  # /metrics before the first request

    @property
    def page(self) -> str:
        return generate_latest(self.engine.registry).decode()

    def tokens_per_s_per_gpu(self) -> float:
        tokens = sum(c.prompt + c.output for c in self.calls)
        return tokens / self.duration_s / self.engine.profile.gpus

    def north_star_p90(self) -> float:
        """1 / p90 of E2E latency per output token (docs/metrics.md), over the calls (nearest rank)."""
        per_token = sorted((c.end - c.start) / c.output for c in self.calls)
        return 1.0 / per_token[min(len(per_token) - 1, int(0.9 * len(per_token)))]

    def hit_share(self, low: float, high: float) -> float | None:
        """Σ hit / Σ reused of the calls whose session had been idle for [low, high) seconds."""
        inside = [c for c in self.calls if c.idle_s is not None and low <= c.idle_s < high]
        reused = sum(c.reused for c in inside)
        return sum(c.hit for c in inside) / reused if reused else None


@dataclass
class _Session:
    index: int
    step: int = 0
    history: list[int] = field(default_factory=list)
    last_end: float | None = None
    sent: int = 0  # tokens of the history the server has seen (prompt + answer of the previous call)


def run_agents(
    profile: SimProfile,
    *,
    users: int,
    duration_s: float,
    think_s: ThinkTime,
    steps: int = 12,
    shared_tokens: int = 1024,
    first_tokens: int = 256,
    tool_tokens: int = 384,
    output_tokens: int = 64,
) -> AgentRun:
    """Run `users` agents for `duration_s` simulated seconds; calls that end after it are not counted."""
    clock = [0.0]
    engine = SimEngine(profile, clock=lambda: clock[0])
    run = AgentRun(engine, duration_s)
    run.first_page = run.page
    vocab = itertools.count(1000)  # every tool result and first message is new text
    shared = [next(vocab) for _ in range(shared_tokens)]
    sessions = {i: _Session(i) for i in range(users)}
    due: list[tuple[float, int]] = [(0.0, i) for i in range(users)]
    live: dict[SimRequest, tuple[_Session, float, int]] = {}
    next_session = itertools.count(users)

    def send(session: _Session, now: float) -> None:
        if session.step == 0:
            session.history = [*shared, *(next(vocab) for _ in range(first_tokens))]
        else:
            session.history += [next(vocab) for _ in range(tool_tokens)]
        handle = engine.submit(
            list(session.history), max_tokens=output_tokens, min_tokens=output_tokens, ignore_eos=True
        )
        live[handle.request] = (session, now, session.sent)

    while clock[0] < duration_s:
        while due and due[0][0] <= clock[0]:
            _, index = heapq.heappop(due)
            send(sessions[index], clock[0])
        if not engine.scheduler.has_work():
            if not due:
                break
            clock[0] = due[0][0]
            continue
        end, touched = engine.run_window(clock[0])
        clock[0] = max(end, clock[0] + 1e-6)
        for req in touched:
            if req.status is not Status.FINISHED or req not in live:
                continue
            session, start, reused = live.pop(req)
            finished = req.finished_at if req.finished_at is not None else clock[0]
            if finished <= duration_s and req.first_token is not None:
                idle = None if session.last_end is None else start - session.last_end
                run.calls.append(
                    Call(
                        session.index, session.step, start, req.first_token, finished, req.num_prompt,
                        req.num_cached_prompt or 0, req.num_offloaded_prompt, req.num_output, reused, idle,
                    )
                )  # fmt: skip
            session.history = list(req.kv.tokens)  # the prompt and the answer: the next call's prefix
            session.sent = len(session.history)
            session.last_end = finished
            session.step += 1
            if session.step >= steps:  # the session is over: the user starts a new one
                fresh = _Session(next(next_session))
                sessions[fresh.index] = fresh
                heapq.heappush(due, (finished, fresh.index))
            else:
                heapq.heappush(due, (finished + think_s(session.index, session.step), session.index))
    return run
