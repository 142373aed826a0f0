"""Client CPU per finished request of the load client's own accounting: a call's figures turned into
its `Completed` (the sender's conversion), then `ClientStats.add` with no sweep window open and with two;
and what the figures of where the North Star's time went add to it, before/after in one run.

    .venv/bin/python bench/request_accounting.py [--requests 50000] [--repeat 5] [--request-ms 7.95]

No network and no event loop: `--requests` synthetic answers (seeded: a TTFT of 50-500 ms, 1-600
output tokens, one network read every 20 ms, a new request every 10 ms, 20 requests to a session tree,
the first a session's first (no idle time before it), 64 user slots) have their read times made
beforehand, twice: with 1-3 content events a read (a client that fell behind, or a speculative server's
bursts read together) and with one (vLLM's stream as a client that keeps up reads it). What is timed is
what the sender and the statistics do with each once it has ended:

- **convert**: `measure_answer` (output tokens, TTFT, decode, ITL, token gaps, r_i, its first-token
  part, its decode stalls) and the `Completed` built from it;
- **add**: `ClientStats.add` of those `Completed`, no window open (a plain run);
- **add+2w**: the same with two sweep windows open (a sweep point's and a `--precision` window).

Each phase runs as it is (**after**) and with the time split's per-request work left out (**before**:
`decode_stalls` answering no stall, `TimeSplit.count` and `IntegerCounts.add` doing nothing; what
remains of it in both, a division, three fields and four additions, is not in the difference, which
so reads a few tens of ns low). The difference is printed in µs per request and as a share of what a
request costs the client in all, `--request-ms` (bench/replay_efficiency.py: 7.95-8.49 ms of CPU per
request for the AgentX replay in its steady window; the smallest is the default, for the largest share).

CPU is this process's time (`time.process_time`) over each phase, per request, in µs; each phase runs
`--repeat` times, printed as min / median / max. On a shared machine the spread is what to read.

Measured here (2 shared cores, busy; 20 000 requests, 5 runs): the time split adds 38 µs per request
(no window open) to 58 µs (two) with one event a read, 0.5-0.7% of 7.95 ms; 97-101 µs with 1-3 events
a read, 1.2-1.3%. Most of it is the stall rule (`decode_stalls`, ~300 events an answer): 28 µs on one
event a read, 76 µs on 1-3 (each event's gap listed, then sorted). Its median by a sort in C: a
selection in Python measured 5x slower at 20 gaps and 12x at 600.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from agentx_tui.measure import ClientStats, Completed, IntegerCounts, MeasuredAnswer, TimeSplit, measure_answer
from agentx_tui.measure import timing as timing_module


@dataclass(frozen=True, slots=True)
class Answer:
    """One synthetic answer as the sender has it when the request ends."""

    sent_at: float
    ended_at: float
    read_times: tuple[float, ...]
    read_events: tuple[int, ...]
    tree: int
    user: int
    step: int


def answers(n: int, seed: int = 1, *, most_events: int = 3) -> list[Answer]:
    """`n` answers whose reads hold 1 to `most_events` content events each."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        sent = 1000.0 + k * 0.01
        t = sent + rng.uniform(0.05, 0.5)
        tokens = rng.randint(1, 600)
        times, events = [], []
        while tokens > 0:
            got = min(tokens, rng.randint(1, most_events))
            times.append(t)
            events.append(got)
            tokens -= got
            t += 0.02
        out.append(Answer(sent, times[-1] + 0.001, tuple(times), tuple(events), k // 20, k % 64, k % 20 + 1))
    return out


def completed(answer: MeasuredAnswer, a: Answer) -> Completed:
    """The sender's conversion of a finished call into what the statistics count."""
    return Completed.of_answer(
        answer, sent_at=a.sent_at, ended_at=a.ended_at, prompt_tokens=1000, cached_tokens=500, ceiling_tokens=600,
        tree=a.tree, user=a.user, step=a.step, idle_s=None if a.step == 1 else 0.5,
    )  # fmt: skip


def convert(all_answers: Sequence[Answer]) -> list[Completed]:
    out = []
    for a in all_answers:
        figures = measure_answer(
            a.sent_at, a.read_times, a.read_events, reported_output=sum(a.read_events),
            counted_events=sum(a.read_events), ended_at=a.ended_at,
        )  # fmt: skip
        out.append(completed(figures, a))
    return out


def add(done: Sequence[Completed], windows: int) -> None:
    stats = ClientStats(window_s=10.0, started_at=999.0)
    for w in range(windows):
        stats.open_window(1000.0 + w)
    for d in done:
        stats.add(d)


@contextlib.contextmanager
def without_time_split() -> Iterator[None]:
    """The accounting as it was before the time split: no stall rule, no split or length counted."""
    saved = timing_module.decode_stalls, TimeSplit.count, IntegerCounts.add
    timing_module.decode_stalls = lambda times, events: (0, 0.0)  # type: ignore[assignment]
    TimeSplit.count = lambda self, done: None  # type: ignore[method-assign]
    IntegerCounts.add = lambda self, value: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        timing_module.decode_stalls, TimeSplit.count, IntegerCounts.add = saved  # type: ignore[method-assign]


def before(work: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        with without_time_split():
            return work()

    return run


def timed(work: Callable[[], object], n: int) -> float:
    """µs of this process's CPU per request."""
    start = time.process_time()
    work()
    return (time.process_time() - start) / n * 1e6


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--request-ms", type=float, default=7.95, help="a request's whole client CPU, ms")
    args = parser.parse_args(argv)
    phases: dict[str, Callable[[], object]] = {}
    for label, most in (("1-3/read", 3), ("1/read", 1)):
        made = answers(args.requests, most_events=most)
        done = convert(made)
        with without_time_split():
            done_before = convert(made)
        for name, work, work_before in (
            ("convert", lambda m=made: convert(m), lambda m=made: convert(m)),
            ("add", lambda d=done: add(d, 0), lambda d=done_before: add(d, 0)),
            ("add+2w", lambda d=done: add(d, 2), lambda d=done_before: add(d, 2)),
        ):
            phases[f"{name} {label} after"] = work
            phases[f"{name} {label} before"] = before(work_before)
    figures: dict[str, list[float]] = {name: [] for name in phases}
    for _ in range(args.repeat):  # phases interleaved: drift on a shared machine hits each alike
        for name, work in phases.items():
            figures[name].append(timed(work, args.requests))
    print(f"{args.requests} requests, {args.repeat} runs: µs CPU per request, min / median / max")
    for name, runs in figures.items():
        print(f"  {name:<24} {min(runs):7.2f} / {statistics.median(runs):7.2f} / {max(runs):7.2f}")
    print(f"the time split's cost per request (medians, after − before), and its share of {args.request_ms} ms:")
    for label in ("1-3/read", "1/read"):
        for windows in ("add", "add+2w"):
            medians = {name: statistics.median(runs) for name, runs in figures.items()}
            cost = sum(
                medians[f"{name} {label} after"] - medians[f"{name} {label} before"] for name in ("convert", windows)
            )
            share = cost / (args.request_ms * 1000)
            print(f"  {label:<9} convert + {windows:<7} {cost:6.2f} µs  {share:7.2%}")


if __name__ == "__main__":
    main()
