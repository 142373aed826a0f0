"""A measured window (docs/sweeps.md): a sweep point's, or a plain run's after its `--warmup`. Its client
figures (`WindowBook`) and the raw sample its confidence intervals are computed from (`PointSample`,
per session tree and per one-second slot; sweep/intervals.py). Fed by `ClientStats` with every request
that ends while the window is open (`WindowBook.add`); its tokens are placed in time by the one rule
of measure/slots.py.

Two sets of requests, each named where it is counted: the **prompts** whose first token came inside the
window (the token rates, the cached share and the client's hit rate are all over them, as the servers'
counters count a prompt when its prefill is done), and the **counted** requests, those that started
after the warm-up and ended inside (the latencies and interactivity)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from agentx_tui.measure.agentx import ContextOverflows, fewest_requests, output_coverage
from agentx_tui.measure.histogram import bucket_of
from agentx_tui.measure.record import Completed, Failed
from agentx_tui.measure.slots import slot_of, spread_tokens
from agentx_tui.measure.tally import Tally
from agentx_tui.measure.tasks import TaskBook, TaskWindow
from agentx_tui.snapshot import TaskReading

SLOT_S = 1.0  # the sample's time slots: batch means group whole slots into sub-windows


@dataclass(slots=True)
class TreeSample:
    """One session tree's part of a sweep point's window (its sub-agents' requests included)."""

    tokens: float = 0.0  # prompt tokens whose first token came inside, output tokens decoded inside
    requests: int = 0  # requests counted for the window's latencies
    itl: dict[int, float] = field(default_factory=dict)  # their per-request ITL, bucketed as `LogHistogram`
    e2e: dict[int, float] = field(default_factory=dict)  # their E2E per output token (r_i), bucketed alike


@dataclass(slots=True)
class SlotSample:
    """One `SLOT_S` slot of a sweep point's window: its tokens, and the counted requests that ended in it."""

    tokens: float = 0.0
    requests: int = 0
    # The tokens (prompt + output) of every request that ended in it, whenever it was sent: the
    # throughput series a point's steady rule reads (sweep/steady.py), final once the slot is over.
    ended_tokens: float = 0.0
    itl: dict[int, float] = field(default_factory=dict)
    e2e: dict[int, float] = field(default_factory=dict)  # r_i, E2E per output token


class PointSample:
    """The raw sample a sweep point's confidence intervals are computed from (sweep/intervals.py): per
    session tree and per time slot, the window's tokens and its counted requests' per-request ITL and
    E2E per output token (r_i).

    O(1) work per request (plus one step per second a request decodes across) and bounded memory:
    one small record per tree and per slot, ITLs and r_i in the 2% buckets of `LogHistogram`, never a list
    of requests. A request with no known tree (-1) counts as a tree of its own."""

    __slots__ = ("_untreed", "slot_s", "slots", "start", "trees", "users")

    def __init__(self, start: float) -> None:
        self.start = start
        self.slot_s = SLOT_S
        self.trees: dict[int, TreeSample] = {}
        self.users: dict[int | tuple[str, int], float] = {}  # tokens inside the window per user slot
        self.slots: dict[int, SlotSample] = {}
        self._untreed = 0

    def tree_of(self, tree: int) -> TreeSample:
        if tree < 0:  # unknown: a tree of its own, with an id no real tree has
            self._untreed += 1
            tree = -self._untreed
        found = self.trees.get(tree)
        if found is None:
            found = self.trees[tree] = TreeSample()
        return found

    def user_tokens(self, user: int, tree: int, tokens: float) -> None:
        """`tokens` of the window to the request's user slot. A request of no known slot counts apart
        from every real slot: with its tree, or (no tree either) as the tree `tree_of` just made it."""
        key: int | tuple[str, int] = user if user >= 0 else ("tree", tree if tree >= 0 else -self._untreed)
        self.users[key] = self.users.get(key, 0.0) + tokens

    def _slot(self, key: int) -> SlotSample:
        found = self.slots.get(key)
        if found is None:
            found = self.slots[key] = SlotSample()
        return found

    def tokens_at(self, t: float, tokens: float) -> None:
        """`tokens` that came at the moment `t` (a request's prompt, when its first token came)."""
        self._slot(slot_of(t, self.start, self.slot_s)).tokens += tokens

    def tokens_in(self, key: int, tokens: float) -> None:
        """`tokens` into slot `key`: a share that measure/slots.py `spread_tokens` gave it."""
        self._slot(key).tokens += tokens

    def ended(self, done: Completed) -> None:
        """A request that ended inside the window, whenever it was sent: its tokens to its end's slot."""
        self._slot(slot_of(done.ended_at, self.start, self.slot_s)).ended_tokens += (
            done.prompt_tokens + done.output_tokens
        )

    def counted(self, tree: TreeSample, done: Completed) -> None:
        """A request counted for the window's latencies (started after the warm-up, ended inside)."""
        slot = self._slot(slot_of(done.ended_at, self.start, self.slot_s))
        tree.requests += 1
        slot.requests += 1
        if done.request_itl_s is not None:
            index = bucket_of(done.request_itl_s)
            tree.itl[index] = tree.itl.get(index, 0.0) + 1.0
            slot.itl[index] = slot.itl.get(index, 0.0) + 1.0
        if done.e2e_per_token_s is not None:
            index = bucket_of(done.e2e_per_token_s)
            tree.e2e[index] = tree.e2e.get(index, 0.0) + 1.0
            slot.e2e[index] = slot.e2e.get(index, 0.0) + 1.0


@dataclass
class WindowBook:
    """A measured window's client figures (docs/sweeps.md): latencies of the requests that started after
    the warm-up and ended inside the window (`latency`); token rates from token times inside the window;
    the prompt side (prompt and cached tokens, hit rates, reuse) of the prompts whose first token came
    inside (`prompts`), so that the cached share and the client's hit rate are one set."""

    start: float
    end: float | None = None
    latency: Tally = field(default_factory=Tally)  # requests started and ended inside
    # The prompt side (`Tally.count_prompt`) of the requests whose first token came inside, and how many.
    prompts: Tally = field(default_factory=Tally)
    first_tokens: int = 0
    output_in_window: float = 0.0  # output tokens decoded inside (rates)
    # The counted requests that were not their session's first call (`Completed.first_call`): what the
    # latencies would be without the sessions' cold first prompts (measure/cold.py). Kept only where it is
    # asked for (a plain run's window after its warm-up: `keep_warm`): a sweep point's new users sent
    # their first requests in its warm-up, and a tally more per request and window is not free.
    warm: Tally | None = None
    failed: int = 0
    cached_reported: bool = False
    sample: PointSample = field(init=False)  # per tree and per slot, for the intervals
    user_since: Mapping[int, float] = field(default_factory=dict)  # ClientStats.user_since
    # The tasks (session trees) that began and ended inside, kept by the run's `TaskBook`.
    tasks: TaskWindow | None = None
    task_book: TaskBook | None = None
    # AgentX's rules (measure/agentx.py): the requests over the model's context sent (or not sent)
    # inside; the last output token, inside, of a request sent after the warm-up; each user slot's
    # completed requests when the window opened.
    overflows: ContextOverflows = field(default_factory=ContextOverflows)
    last_output_at: float | None = None
    requests_before: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        self.sample = PointSample(self.start)

    def task_figures(self, now: float, *, gpus: float | None, tokens_per_dollar: float | None) -> TaskReading | None:
        """The window's task figures (measure/tasks.py); None for a window no `ClientStats` opened."""
        if self.tasks is None or self.task_book is None:
            return None
        return self.task_book.figures(now, self.tasks, gpus=gpus, tokens_per_dollar=tokens_per_dollar)

    def keep_warm(self) -> None:
        """Tally the latencies of the counted requests that were not a session's first too (`warm`)."""
        if self.warm is None:
            self.warm = Tally()

    @property
    def prompt_in_window(self) -> int:
        """Prompt tokens whose first token came inside the window (the prompt rate)."""
        return self.prompts.prompt

    @property
    def duration_s(self) -> float | None:
        return None if self.end is None else self.end - self.start

    def rate(self, tokens: float) -> float | None:
        span = self.duration_s
        return tokens / span if span else None

    def inside(self, sent_at: float, ended_at: float) -> bool:
        return sent_at >= self.start and (self.end is None or ended_at <= self.end)

    def add(self, done: Completed) -> None:
        """A finished request: its tokens that came inside the window count for the window's rates; the
        request itself for its latencies when it started after the warm-up and ended inside."""
        tree = self.spread(done)
        if self.start <= done.ended_at and (self.end is None or done.ended_at <= self.end):
            self.sample.ended(done)
        if self.inside(done.sent_at, done.ended_at):
            self.count(done, tree)

    def overflows_of(self, failed: Failed) -> None:
        """A request over the model's context, refused or not sent: counted when it was due inside."""
        if self.inside(failed.sent_at, failed.at):
            self.overflows.count(failed)

    def agentx_figures(self, users: int) -> dict[str, int | float | None]:
        """The window's figures for AgentX's rules: its requests over the context and their share, its
        output coverage (over its measured length), the fewest requests any of `users` completed before
        it opened."""
        end = self.end if self.end is not None else self.start
        return {
            **self.overflows.figures(self.latency.requests, self.failed),
            "output_coverage": output_coverage(self.start, end, self.last_output_at),
            "warmup_requests_min": fewest_requests(self.requests_before, users),
        }

    def error(self, failed: Failed) -> None:
        """A request that failed for good: counted when it was sent after the warm-up and ended inside."""
        if self.inside(failed.sent_at, failed.at):
            self.failed += 1

    def count(self, done: Completed, tree: TreeSample | None = None) -> None:
        """`done` for the window's latencies and mean prompt (`tree`: its tree's sample, if `spread`
        already found it)."""
        sample = self.sample
        sample.counted(tree or sample.tree_of(done.tree), done)
        self.latency.count(done)
        if self.warm is not None and not done.first_call:
            self.warm.count_answer(done)

    def spread(self, done: Completed) -> TreeSample | None:
        """Count the tokens of a finished request that came inside the window: its prompt when its first
        token came, its output as measure/slots.py spreads it. The tree's sample, or None when none did."""
        first, last = done.decoded
        end = math.inf if self.end is None else self.end
        sample = self.sample
        inside = 0.0
        prompt = done.prompt_tokens
        if self.start <= first <= end:
            inside += prompt
            self.prompts.count_prompt(done)  # its cached tokens with its prompt: one set (the module's)
            self.first_tokens += 1
            self.cached_reported |= done.cached_tokens is not None
            if prompt:
                sample.tokens_at(first, prompt)
        decoded = 0.0
        for key, share in spread_tokens(
            first, last, done.output_tokens, arrivals=done.arrivals, origin=self.start, width=sample.slot_s,
            lo=self.start, hi=end,
        ):  # fmt: skip
            sample.tokens_in(key, share)
            decoded += share
        if not (inside or decoded):
            return None
        if decoded and done.sent_at >= self.start:
            seen = min(last, end)
            if self.last_output_at is None or seen > self.last_output_at:
                self.last_output_at = seen
        self.output_in_window += decoded
        inside += decoded
        found = sample.tree_of(done.tree)
        found.tokens += inside
        sample.user_tokens(done.user, done.tree, inside)
        return found
