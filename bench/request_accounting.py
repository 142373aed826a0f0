"""Client CPU per finished request of the load client's own accounting: a call's figures turned into
its `Completed` (the sender's conversion), then `ClientStats.add` with no sweep window open and with two.

    .venv/bin/python bench/request_accounting.py [--requests 50000] [--repeat 5]

No network and no event loop: `--requests` synthetic answers (seeded: a TTFT of 50-500 ms, 1-600
output tokens, one network read every 20 ms with 1-3 content events each, a new request every 10 ms,
20 requests to a session tree, the first a session's first (no idle time before it), 64 user slots) have
their read times made beforehand; what is timed is
what the sender and the statistics do with each once it has ended:

- **convert**: `answer_figures` (output tokens, TTFT, decode, ITL, token gaps, r_i) and the
  `Completed` built from it;
- **add**: `ClientStats.add` of those `Completed`, no window open (a plain run);
- **add+2w**: the same with two sweep windows open (a sweep point's and a `--precision` window).

CPU is this process's time (`time.process_time`) over each phase, per request, in µs; each phase runs
`--repeat` times, printed as min / median / max. On a shared machine the spread is what to read.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentx_tui.measure import AnswerFigures, ClientStats, Completed, answer_figures


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


def answers(n: int, seed: int = 1) -> list[Answer]:
    rng = random.Random(seed)
    out = []
    for k in range(n):
        sent = 1000.0 + k * 0.01
        t = sent + rng.uniform(0.05, 0.5)
        tokens = rng.randint(1, 600)
        times, events = [], []
        while tokens > 0:
            got = min(tokens, rng.randint(1, 3))
            times.append(t)
            events.append(got)
            tokens -= got
            t += 0.02
        out.append(Answer(sent, times[-1] + 0.001, tuple(times), tuple(events), k // 20, k % 64, k % 20 + 1))
    return out


def completed(answer: AnswerFigures, a: Answer) -> Completed:
    """The sender's conversion of a finished call into what the statistics count."""
    return Completed.of_answer(
        answer, sent_at=a.sent_at, ended_at=a.ended_at, prompt_tokens=1000, cached_tokens=500, ceiling_tokens=600,
        tree=a.tree, user=a.user, step=a.step, idle_s=None if a.step == 1 else 0.5,
    )  # fmt: skip


def convert(all_answers: Sequence[Answer]) -> list[Completed]:
    out = []
    for a in all_answers:
        figures = answer_figures(
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


def timed(work: Callable[[], object], n: int) -> float:
    """µs of this process's CPU per request."""
    start = time.process_time()
    work()
    return (time.process_time() - start) / n * 1e6


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    made = answers(args.requests)
    done = convert(made)
    phases: dict[str, Callable[[], object]] = {
        "convert": lambda: convert(made),
        "add": lambda: add(done, 0),
        "add+2w": lambda: add(done, 2),
    }
    figures: dict[str, list[float]] = {name: [] for name in phases}
    for _ in range(args.repeat):  # phases interleaved: drift on a shared machine hits each alike
        for name, work in phases.items():
            figures[name].append(timed(work, args.requests))
    print(f"{args.requests} requests, {args.repeat} runs: µs CPU per request, min / median / max")
    for name, runs in figures.items():
        print(f"  {name:<8} {min(runs):6.2f} / {statistics.median(runs):6.2f} / {max(runs):6.2f}")


if __name__ == "__main__":
    main()
