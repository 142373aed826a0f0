"""AgentX validity (docs/sweeps.md, "AgentX validity"): does a run or a sweep meet the rules a published
AgentX point must, and which one does it break?

The rules, as SemiAnalysis InferenceX states them (MODELS.md "AgentX Guidelines", its KV cache offloading
policy; docs/eval-agentx-procedures.md; the validator utils/agentic/validation/validate_agentic_result.py;
and AIPerf's `inferencex-agentx-mvp` scenario, which stamps `submission_valid`), those a client can check:

- every point measures at least 900 s (AIPerf refuses a shorter `--benchmark-duration` unless told to
  mark the run invalid);
- every user has completed at least 10 requests before a point's window opens (AIPerf's
  `--warmup-requests-per-lane 10`); a plain run measures from its first request, with no warm-up;
- a sweep's every point was steady when its window opened (MSER-5 on its throughput and p90 r_i,
  sweep/steady.py): a window opened in the transient reads the early, short contexts and flatters the
  point (the harness's ten warm-up requests per user stand in for the same);
- at most 10% of a point's requests fail (failed / (completed + failed) ≤ 0.10, the limit inclusive),
  and a point completes at least one;
- at most 1% of a point's requests exceed the model's context, refused by the server or not sent because
  they would not fit (AIPerf: `context_overflow_rate_exceeded`, strictly above 1% fails);
- output keeps arriving through at least 95% of each window: its start to its last output token over its
  length (AIPerf's `minimum_profile_metric_coverage_ratio` 0.95: `insufficient_profile_metric_coverage`);
- the tiers are read on the North Star, E2E-normalized interactivity (the canonical frontier);
- KV cache offloading, when the server does it, goes to CPU DRAM only and within the budget: the server's
  DRAM (at most 3 TB per server when the SKU has no standard DRAM) × the GPUs the configuration uses ÷
  the GPUs in the server;
- the run was not cut short (AIPerf: `run_cancelled`);
- every user was driven to the end: no load worker died taking its users with it, unless a sweep
  restarted them and measured the point again;
- each session keeps its own pacing and answer lengths (AIPerf forbids per-turn delay caps and locks
  `ignore_eos`): no `--max-think`, no `--output-scale`;
- speculative decoding, when the server does it, accepts as the golden acceptance length of the model at
  its draft length says (InferenceX golden_al_distribution/README.md, "Fairness Guidelines for AgentX"):
  the measured length within 2% of it. A server that exports no speculative-decoding counters is not
  judged on it.

A plain run (no sweep) is one point: its window is the run. Nothing unknown is taken for a pass or a
failure: a rule that cannot be checked (the server's DRAM, whether it offloads) is said to be so, and
the run is then neither valid nor invalid (`AgentXVerdict.valid` is None). While a run is measured,
rules wait for their points (`pending`), and the run is not valid until it ends with every rule met; a
point length or a flag that already breaks a rule says so at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from agentx_tui.snapshot import (
    AgentXRule,
    AgentXVerdict,
    Figures,
    FrontierAxis,
    PointFigures,
    RuleState,
    Snapshot,
    SweepState,
    WorkerLossRow,
    lost_users_reason,
    totals_server_time,
)
from agentx_tui.sweep.axes import DECODE, NORTH_STAR
from agentx_tui.units import percent

MIN_POINT_S: Final = 900.0
# `--agentx`'s point length: the harness's default `--benchmark-duration` (900 s stays the least a point may have).
AGENTX_POINT_S: Final = 1800.0
# `--agentx`'s replay: whole-system idle gaps capped at this (the harness's `--system-idle-gap-cap-seconds 10`).
AGENTX_IDLE_CAP_S: Final = 10.0
MAX_ERROR_RATE: Final = 0.10
MAX_CONTEXT_OVERFLOW: Final = 0.01  # of a point's requests; exactly 1% passes
MIN_OUTPUT_COVERAGE: Final = 0.95  # of a window's length; exactly 95% passes
WARMUP_REQUESTS: Final = 10  # per user, before a point's window opens
# The per-server ceiling on the DRAM baseline (decimal, as InferenceX's budget formula: 2,861,022 MiB).
DRAM_CAP_BYTES: Final = 3e12
# `--agentx`'s tiers (tok/s/user, p90 on the North Star).
AGENTX_TIERS: Final = (30.0, 50.0, 75.0, 100.0)
# How far a measured acceptance length may be from the golden one, relative to it: vLLM's synthetic
# acceptance at the golden length measures within a few tenths of a percent of it over a point.
GOLDEN_TOLERANCE: Final = 0.02
# For tests only: a shorter point length the rule is judged by (and `--agentx` measures), so a test need
# not run 15 minutes a point. The verdict then says so; a real run never sets it.
TEST_MIN_POINT_ENV: Final = "AGENTX_TEST_MIN_POINT_S"


@dataclass(frozen=True)
class KvOffload:
    """Whether the server offloads KV to CPU memory, and how many bytes, as far as it is known (None: not
    known), and where that came from, in words."""

    offloads: bool | None
    size_bytes: float | None = None
    source: str = ""


@dataclass(frozen=True)
class ServerMemory:
    """The server's DRAM and the GPUs in it, for the offload budget; None where not known (never guessed)."""

    dram_bytes: float | None = None
    dram_source: str = ""
    gpus: int | None = None
    gpus_source: str = ""


@dataclass(frozen=True)
class AgentXSetup:
    """What the rules need that a tick does not carry: the plan's flags and the server's facts."""

    min_point_s: float = MIN_POINT_S  # shorter only under AGENTX_TEST_MIN_POINT_S
    run_duration_s: float | None = None  # a plain run's --duration; None: until it is stopped
    run_warmup_s: float = 0.0  # a plain run's --warmup: its first seconds, not part of its point
    max_think_s: float | None = None  # --max-think
    idle_cap_s: float | None = None  # --agentx's whole-system idle cap (not a cap on any think time)
    offload: KvOffload = field(default_factory=lambda: KvOffload(None, source="the server does not say"))
    memory: ServerMemory = field(default_factory=ServerMemory)
    # The run sends load of its own (simulated users, a trace, session files). A run that only observes,
    # or only relays real agents' calls through --proxy, has no point of its own to judge.
    sends_load: bool = True

    @property
    def test_rule(self) -> bool:
        return self.min_point_s != MIN_POINT_S


def judge(
    snap: Snapshot, setup: AgentXSetup, *, final: bool = False, partial_reason: str | None = None
) -> AgentXVerdict | None:
    """The run's AgentX verdict as of `snap` (`final`: its last tick); None when it sends no load of its
    own (observing only, or only real agents' calls through --proxy: there is no point of its own to judge)."""
    if snap.client is None or not setup.sends_load:
        return None
    sweep = snap.sweep
    if sweep is not None:
        points = list(sweep.points)
        progress = _progress(sweep)
        rules = [
            _sweep_length(sweep.point_duration_s, points, setup, progress),
            _sweep_warmup(points, final=final),
            _sweep_steady(points, final=final),
            _sweep_errors(points, final=final),
            _sweep_overflow(points, final=final),
            _sweep_coverage(points, final=final),
            _north_star(sweep.frontier_axis),
        ]
    else:
        rules = [
            _run_length(snap.elapsed_s, setup, final=final),
            _run_warmup(snap, setup, final=final),
            _run_errors(snap, final=final),
            _run_overflow(snap, final=final),
            _run_coverage(snap, final=final),
        ]
        progress = f"{_seconds(snap.elapsed_s)} into the run"
    rules += [
        _offload(setup, snap.cost.gpus),
        _complete(partial_reason, progress, final=final),
        _load_workers(snap.run.load_losses, final=final),
        _think_time(setup.max_think_s, setup.idle_cap_s),
        _answer_length(snap.run.output_scale),
        _golden_acceptance(_acceptances(snap), final=final),
    ]
    return AgentXVerdict(
        rules=tuple(rules), final=final, test_min_point_s=setup.min_point_s if setup.test_rule else None
    )


# --- the rules, one function each -----------------------------------------------------------------


def _rule(rule: str, state: RuleState, head: str, detail: str) -> AgentXRule:
    return AgentXRule(rule=rule, state=state, head=head, detail=detail)


def _users(n: int) -> str:
    return f"{n} user{'s' if n != 1 else ''}"


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value >= 10 else f"{value:.3g} s"


def _length_heads(setup: AgentXSetup) -> tuple[str, str, str]:
    """The point-length rule's head when met and when broken, and what the test hook adds to the detail."""
    least = _seconds(setup.min_point_s)
    note = ""
    if setup.test_rule:
        note = f" ({TEST_MIN_POINT_ENV}={setup.min_point_s:g} shortens the rule's {_seconds(MIN_POINT_S)} for a test)"
    return f"points of at least {least}", f"points shorter than {least}", note


def _progress(sweep: SweepState) -> str:
    """Where a sweep stands, in words, for a rule that waits on it: "the point at 32 users, 23 s of 1800 s"."""
    if sweep.current_users is None:
        return "the sweep's last point is measured"
    if sweep.probing:  # a tier sweep's probe (docs/sweeps.md): no point is measured yet
        return f"probing {_users(sweep.current_users)}" + (f" for {sweep.step_for}" if sweep.step_for else "")
    at = f"the point at {_users(sweep.current_users)}"
    left = sweep.phase_left_s
    if sweep.phase == "warmup":
        return f"{at}, warming up" + (f" ({_seconds(left)} left)" if left is not None else "")
    if left is None:
        return f"{at}, measuring"
    return f"{at}, {_seconds(max(0.0, sweep.point_duration_s - left))} of {_seconds(sweep.point_duration_s)}"


def _sweep_length(planned_s: float, points: list[PointFigures], setup: AgentXSetup, progress: str) -> AgentXRule:
    """Every point measures at least the minimum: its planned length (`--point-duration`), and the points
    `--precision` ended early, their measured windows."""
    met, broken, note = _length_heads(setup)
    if planned_s < setup.min_point_s:
        return _rule("point_length", "broken", broken, f"--point-duration is {_seconds(planned_s)}{note}")
    short = [p for p in points if p.stopped_early and p.duration_s < setup.min_point_s]
    if short:
        p = min(short, key=lambda p: p.duration_s)
        detail = f"the point at {_users(p.users)} ended after {_seconds(p.duration_s)} (--precision){note}"
        return _rule("point_length", "broken", broken, detail)
    if not points:
        return _rule("point_length", "pending", met, f"{progress} (no point measured yet){note}")
    return _rule("point_length", "met", met, f"--point-duration {_seconds(planned_s)}{note}")


def _run_length(elapsed_s: float, setup: AgentXSetup, *, final: bool) -> AgentXRule:
    """A plain run is one point: its planned `--duration`, and at its end how long it ran; less its
    `--warmup`, whose seconds are not measured."""
    met, broken, note = _length_heads(setup)
    warm = setup.run_warmup_s
    planned = setup.run_duration_s
    if planned is not None and planned - warm < setup.min_point_s:
        less = f" less --warmup {_seconds(warm)}" if warm else ""
        return _rule(
            "point_length", "broken", broken, f"the run's one point, --duration {_seconds(planned)}{less}{note}"
        )
    measured = max(0.0, elapsed_s - warm)
    after = f" after a {_seconds(warm)} warm-up" if warm else ""
    if measured >= setup.min_point_s:
        return _rule("point_length", "met", met, f"the run's one point, {_seconds(measured)}{after}{note}")
    if final:
        detail = f"the run's one point ended after {_seconds(measured)}{after}{note}"
        return _rule("point_length", "broken", broken, detail)
    of = f"{_seconds(measured)} of {_seconds(setup.min_point_s)}"
    return _rule("point_length", "pending", met, f"the run's one point, {of}{after}{note}")


def _none_known(
    rule: str, unknown: str, met: str, broken: str, points: list[PointFigures], *, final: bool
) -> AgentXRule:
    """A sweep rule that no measured point can judge yet: pending while the sweep runs; at its end unknown
    when its points do not say it, broken when no point was measured."""
    if final and points:
        return _rule(rule, "unknown", unknown, "the points do not say it")
    if final:
        return _rule(rule, "broken", broken, "no point was measured")
    return _rule(rule, "pending", met, "no point measured yet")


_WARMUP_MET = f"{WARMUP_REQUESTS} warm-up requests per user"
_WARMUP_BROKEN = f"fewer than {WARMUP_REQUESTS} warm-up requests per user"


def _sweep_warmup(points: list[PointFigures], *, final: bool) -> AgentXRule:
    """Before each point's window opened, each of its users had completed at least 10 requests (AIPerf's
    warm-up of 10 requests per lane): the point's fewest (`warmup_requests_min`)."""
    known = [p for p in points if p.warmup_requests_min is not None]
    if not known:
        return _none_known("warmup", "warm-up per user unknown", _WARMUP_MET, _WARMUP_BROKEN, points, final=final)
    worst = min(known, key=lambda p: p.warmup_requests_min or 0)
    fewest = worst.warmup_requests_min or 0
    detail = f"the fewest a user had completed when a window opened: {fewest} (at {_users(worst.users)})"
    if fewest < WARMUP_REQUESTS:
        return _rule("warmup", "broken", _WARMUP_BROKEN, detail)
    return _rule("warmup", "met", _WARMUP_MET, detail)


_STEADY_MET = "every point steady before its window"
_STEADY_BROKEN = "a point never settled"


def _sweep_steady(points: list[PointFigures], *, final: bool) -> AgentXRule:
    """Each point's load was steady when its window opened (MSER-5, sweep/steady.py): its `steady`, with
    `steady_reason` for a point that still drifted when `--warmup` ran out."""
    known = [p for p in points if p.steady is not None]
    if not known:
        return _none_known("steady", "steadiness unknown", _STEADY_MET, _STEADY_BROKEN, points, final=final)
    unsteady = [p for p in known if not p.steady]
    if unsteady:
        first = unsteady[0]
        more = f" (+{len(unsteady) - 1} more)" if len(unsteady) > 1 else ""
        return _rule("steady", "broken", _STEADY_BROKEN, f"at {_users(first.users)}: {first.steady_reason}{more}")
    waits = [p.warmup_s for p in known]
    detail = f"MSER-5 found each of {len(known)} point{'s' if len(known) != 1 else ''} steady after "
    low, high = min(waits), max(waits)
    detail += f"{_seconds(low)}" if _seconds(low) == _seconds(high) else f"{_seconds(low)}–{_seconds(high)}"
    return _rule("steady", "met", _STEADY_MET, detail + " of warm-up")


def _run_warmup(snap: Snapshot, setup: AgentXSetup, *, final: bool) -> AgentXRule:
    """A plain run is one point, measured after its `--warmup` (run/phases.py): the fewest requests any
    user had completed when its window opened, known at its end. Without a warm-up its window is the
    whole run, its users' first requests measured: broken at once."""
    if not setup.run_warmup_s:
        detail = "a plain run without --warmup measures from its users' first requests"
        return _rule("warmup", "broken", _WARMUP_BROKEN, detail)
    measured = snap.measured
    if measured is None or measured.warmup_requests_min is None:
        if final:
            return _rule("warmup", "unknown", "warm-up per user unknown", "the run's window does not say it")
        return _rule(
            "warmup", "pending", _WARMUP_MET, f"the window opens after the {_seconds(setup.run_warmup_s)} warm-up"
        )
    fewest = measured.warmup_requests_min
    detail = f"the fewest a user had completed when the window opened: {fewest} (after {_seconds(setup.run_warmup_s)})"
    if fewest < WARMUP_REQUESTS:
        return _rule("warmup", "broken", _WARMUP_BROKEN, detail)
    return _rule("warmup", "met", _WARMUP_MET, detail)


_ERRORS_MET = f"error rate at most {percent(MAX_ERROR_RATE, 0)}"
_ERRORS_BROKEN = f"error rate above {percent(MAX_ERROR_RATE, 0)}"
_NO_REQUEST = "a point without a completed request"


def _sweep_errors(points: list[PointFigures], *, final: bool) -> AgentXRule:
    """Each measured point's failed / (completed + failed) at most 10% (inclusive), and at least one request
    completed in it (AIPerf's validator refuses a run that completed none)."""
    if not points:
        if final:
            return _rule("error_rate", "broken", _NO_REQUEST, "no point was measured")
        return _rule("error_rate", "pending", _ERRORS_MET, "no point measured yet")
    empty = [p for p in points if not p.requests_completed]
    if empty:
        return _rule("error_rate", "broken", _NO_REQUEST, f"none ended inside the window at {_users(empty[0].users)}")
    worst = max(points, key=lambda p: p.error_rate or 0.0)
    rate = worst.error_rate or 0.0
    if rate > MAX_ERROR_RATE:
        return _rule("error_rate", "broken", _ERRORS_BROKEN, f"{percent(rate)} at {_users(worst.users)}")
    return _rule("error_rate", "met", _ERRORS_MET, f"the highest was {percent(rate)} (at {_users(worst.users)})")


def _run_errors(snap: Snapshot, *, final: bool) -> AgentXRule:
    """A plain run's error rate over the whole run (so far, while it runs)."""
    totals = snap.client.totals if snap.client is not None else None
    completed = totals.requests_completed if totals else 0
    failed = totals.requests_failed if totals else 0
    so_far = "" if final else " so far"
    if not completed:
        if final:
            return _rule("error_rate", "broken", _NO_REQUEST, "no request of the run completed")
        return _rule("error_rate", "pending", _ERRORS_MET, "no request completed yet")
    rate = failed / (completed + failed)
    if rate > MAX_ERROR_RATE:
        return _rule("error_rate", "broken", _ERRORS_BROKEN, f"{percent(rate)} of the run's requests failed{so_far}")
    return _rule("error_rate", "met", _ERRORS_MET, f"{percent(rate)} of the run's requests failed{so_far}")


_OVERFLOW_MET = f"context overflow at most {percent(MAX_CONTEXT_OVERFLOW, 0)}"
_OVERFLOW_BROKEN = f"context overflow above {percent(MAX_CONTEXT_OVERFLOW, 0)}"


def _overflow_words(requests: int | None, share: float) -> str:
    n = requests or 0
    return f"{percent(share)} of the requests ({n} over the model's context)"


def _sweep_overflow(points: list[PointFigures], *, final: bool) -> AgentXRule:
    """Each point's requests over the model's context, refused or not sent, at most 1% of its requests
    (`context_overflow_share`; exactly 1% passes)."""
    known = [p for p in points if p.context_overflow_share is not None]
    if not known:
        unknown = "context overflow unknown"
        return _none_known("context_overflow", unknown, _OVERFLOW_MET, _OVERFLOW_BROKEN, points, final=final)
    worst = max(known, key=lambda p: p.context_overflow_share or 0.0)
    share = worst.context_overflow_share or 0.0
    detail = f"{_overflow_words(worst.context_overflow_requests, share)} at {_users(worst.users)}"
    if share > MAX_CONTEXT_OVERFLOW:
        return _rule("context_overflow", "broken", _OVERFLOW_BROKEN, detail)
    return _rule("context_overflow", "met", _OVERFLOW_MET, f"the highest was {detail}")


def _run_window(snap: Snapshot) -> Figures | None:
    """A plain run's figures the rules read: its measured window's at its end when it had a `--warmup`
    (run/phases.py), else the whole run's (so far, while it runs)."""
    if snap.measured is not None:
        return snap.measured
    return snap.client.run if snap.client is not None else None


def _run_overflow(snap: Snapshot, *, final: bool) -> AgentXRule:
    """A plain run's requests over the model's context over its window (`_run_window`)."""
    run = _run_window(snap)
    share = run.context_overflow_share if run is not None else None
    if share is None:
        if final:
            return _rule("context_overflow", "unknown", "context overflow unknown", "no request of the run counted it")
        return _rule("context_overflow", "pending", _OVERFLOW_MET, "no request yet")
    requests = run.context_overflow_requests if run is not None else None
    detail = _overflow_words(requests, share) + ("" if final else " so far")
    if share > MAX_CONTEXT_OVERFLOW:
        return _rule("context_overflow", "broken", _OVERFLOW_BROKEN, detail)
    return _rule("context_overflow", "met", _OVERFLOW_MET, detail)


_COVERAGE_MET = f"output through at least {percent(MIN_OUTPUT_COVERAGE, 0)} of each window"
_COVERAGE_BROKEN = f"output through less than {percent(MIN_OUTPUT_COVERAGE, 0)} of a window"


def _sweep_coverage(points: list[PointFigures], *, final: bool) -> AgentXRule:
    """Each point's output kept arriving through at least 95% of its window (`output_coverage`: the
    window's start to its last output token over its length)."""
    known = [p for p in points if p.output_coverage is not None]
    if not known:
        unknown = "output coverage unknown"
        return _none_known("coverage", unknown, _COVERAGE_MET, _COVERAGE_BROKEN, points, final=final)
    worst = min(known, key=lambda p: p.output_coverage or 0.0)
    coverage = worst.output_coverage or 0.0
    detail = f"{percent(coverage)} of the window at {_users(worst.users)}"
    if coverage < MIN_OUTPUT_COVERAGE:
        return _rule("coverage", "broken", _COVERAGE_BROKEN, detail)
    return _rule("coverage", "met", _COVERAGE_MET, f"the lowest was {detail}")


def _run_coverage(snap: Snapshot, *, final: bool) -> AgentXRule:
    """A plain run's output kept arriving through at least 95% of its window (`_run_window`); while it
    runs, the value so far is pending (output may come again)."""
    run = _run_window(snap)
    coverage = run.output_coverage if run is not None else None
    if coverage is None:
        if final:
            return _rule("coverage", "unknown", "output coverage unknown", "the run had no length")
        return _rule("coverage", "pending", _COVERAGE_MET, "no output yet")
    if not final:
        return _rule("coverage", "pending", _COVERAGE_MET, f"{percent(coverage)} of the run so far")
    detail = f"{percent(coverage)} of the run"
    if coverage < MIN_OUTPUT_COVERAGE:
        return _rule("coverage", "broken", _COVERAGE_BROKEN, detail)
    return _rule("coverage", "met", _COVERAGE_MET, detail)


def _north_star(axis: FrontierAxis | None) -> AgentXRule:
    """The frontier and its tiers on E2E-normalized interactivity, the canonical AgentX frontier."""
    if axis == NORTH_STAR:
        return _rule("north_star", "met", "tiers read on the North Star", "E2E-normalized interactivity")
    detail = "--frontier-axis decode" if axis == DECODE else "a sweep of before the North Star"
    return _rule("north_star", "broken", "tiers read on decode interactivity, not the North Star", detail)


def _tb(size: float) -> str:
    return f"{size / 1e12:.3g} TB" if size >= 1e11 else f"{size / 1e9:.3g} GB"


def _offload(setup: AgentXSetup, gpus_used: int | None) -> AgentXRule:
    """KV offload to CPU memory within the budget when the server offloads: min(DRAM, 3 TB) × the GPUs
    it uses ÷ the GPUs in the server."""
    offload, memory = setup.offload, setup.memory
    within = "KV offload within the budget"
    if offload.offloads is False:
        return _rule("kv_offload", "met", within, f"the server does not offload KV to CPU memory ({offload.source})")
    if offload.offloads is None:
        return _rule("kv_offload", "unknown", "KV offload unknown", offload.source)
    if offload.size_bytes is None:
        return _rule("kv_offload", "unknown", "KV offload size unknown", offload.source)
    missing = (
        (memory.dram_bytes, "the server's DRAM is unknown", "--server-dram-gb"),
        (gpus_used, "the GPUs the server uses are unknown", "--gpus"),
        (memory.gpus, "the GPUs in the server are unknown", "--server-gpus"),
    )
    for value, head, flag in missing:
        if value is None:
            return _rule("kv_offload", "unknown", head, f"the offload budget cannot be checked (give {flag})")
    assert memory.dram_bytes is not None and gpus_used is not None and memory.gpus is not None
    baseline = min(memory.dram_bytes, DRAM_CAP_BYTES)
    budget = baseline * gpus_used / memory.gpus
    how = f"DRAM baseline {_tb(baseline)} × {gpus_used} GPUs ÷ {memory.gpus}"
    if offload.size_bytes > budget:
        detail = f"{_tb(offload.size_bytes)} exceeds the budget of {_tb(budget)} ({how})"
        return _rule("kv_offload", "broken", "KV offload over the budget", detail)
    return _rule("kv_offload", "met", within, f"{_tb(offload.size_bytes)} of a budget of {_tb(budget)} ({how})")


def _complete(partial_reason: str | None, progress: str, *, final: bool) -> AgentXRule:
    """The run ran to its end (AIPerf marks a cancelled run invalid); while it runs, where it stands."""
    if partial_reason is not None:
        return _rule("complete", "broken", "the run was cut short", partial_reason)
    if final:
        return _rule("complete", "met", "the run ran to its end", "not cut short")
    return _rule("complete", "pending", "the run ran to its end", f"still running: {progress}")


def _load_workers(losses: Sequence[WorkerLossRow], *, final: bool) -> AgentXRule:
    """Every user driven to the end: a load worker that died took its users with it, and a point measured
    with fewer users than its label is another operating point. A sweep restarts the lost users and
    measures the point again (docs/sweeps.md); a loss no fresh worker made good breaks the rule."""
    if (lost := lost_users_reason(losses)) is not None:
        return _rule("load_workers", "broken", "load workers lost", lost)
    met = "every user driven to the end"
    if losses:
        restarted = "1 lost load worker" if len(losses) == 1 else f"{len(losses)} lost load workers"
        detail = f"{restarted} restarted, the points they were lost in measured again"
        return _rule("load_workers", "met" if final else "pending", met, detail)
    if final:
        return _rule("load_workers", "met", met, "no load worker lost")
    return _rule("load_workers", "pending", met, "no load worker lost so far")


def _think_time(max_think_s: float | None, idle_cap_s: float | None) -> AgentXRule:
    """No cap on the time between a session's calls: AIPerf's AgentX scenario forbids per-turn caps. Its
    whole-system idle cap (`--agentx`'s too) is another thing: it cuts only time in which nothing is in
    flight, moving every waiting think time alike, and breaks nothing."""
    if max_think_s is not None:
        detail = f"--max-think {_seconds(max_think_s)}; AgentX keeps each session's own pacing"
        return _rule("think_time", "broken", "think times capped", detail)
    detail = "no --max-think"
    if idle_cap_s is not None:
        detail += f"; whole-system idle gaps capped at {_seconds(idle_cap_s)}, as the harness does"
    return _rule("think_time", "met", "think times as the sessions have them", detail)


def _answer_length(output_scale: float) -> AgentXRule:
    """Every answer at its own length: AgentX generates the full recorded output (ignore_eos)."""
    if output_scale != 1:
        detail = f"--output-scale {output_scale:g}; AgentX generates every answer at its recorded length"
        return _rule("answer_length", "broken", "answers rescaled", detail)
    return _rule("answer_length", "met", "answers at their own length", "no --output-scale")


@dataclass(frozen=True)
class Acceptance:
    """A stretch's measured speculative decoding against its golden length: the run's, or a point's."""

    where: str  # "the run", "at 64 users"
    length: float | None  # measured acceptance length; None: no draft in the stretch
    golden: float | None
    golden_source: str | None
    draft_length: int | None


def _acceptances(snap: Snapshot) -> list[Acceptance] | None:
    """The stretches the golden-length rule judges: each measured point of a sweep, else the run so far;
    None when the servers export no speculative-decoding counters (nothing to judge)."""
    agg = snap.aggregate
    if snap.sweep is not None:
        speculating = [p for p in snap.sweep.points if p.spec_draft_length is not None]
        if not speculating:
            return [] if agg is not None and agg.spec_draft_length is not None else None
        return [
            Acceptance(
                f"at {_users(p.users)}",
                p.spec_acceptance_length,
                p.spec_golden_acceptance_length,
                p.spec_golden_source,
                p.spec_draft_length,
            )
            for p in speculating
        ]
    if agg is None or agg.spec_draft_length is None:
        return None
    run = totals_server_time(agg.totals)
    return [
        Acceptance(
            "over the run",
            run["spec_acceptance_length"],
            agg.spec_golden_acceptance_length,
            agg.spec_golden_source,
            agg.spec_draft_length,
        )
    ]


_PINNED = "acceptance pinned to the golden length"
_NOT_PINNED = "acceptance not pinned to the golden length"


def _golden_acceptance(stretches: list[Acceptance] | None, *, final: bool) -> AgentXRule:
    """Speculative decoding at the model's golden acceptance length: every measured stretch within 2% of
    it. Not judged when the servers do not speculate; unknown where no golden length is known, or no
    draft was verified by the end; pending while none was yet."""
    if stretches is None:
        detail = "the servers export no speculative-decoding counters: the golden length does not apply"
        return _rule("spec_acceptance", "met", "no speculative decoding", detail)
    no_golden = [a for a in stretches if a.golden is None]
    if no_golden:
        a = no_golden[0]
        measured = f"; measured {a.length:.2f} {a.where}" if a.length is not None else ""
        return _rule("spec_acceptance", "unknown", "golden acceptance length unknown", f"{a.golden_source}{measured}")
    known = [a for a in stretches if a.length is not None]
    if not known:
        if final:
            detail = "no draft was verified: the acceptance length could not be measured"
            return _rule("spec_acceptance", "unknown", "acceptance length unknown", detail)
        return _rule("spec_acceptance", "pending", _PINNED, "no draft verified yet")
    worst = max(known, key=lambda a: abs(_deviation(a)))
    detail = (
        f"{worst.length:.2f} {worst.where} against the golden {worst.golden:.3g} at k = {worst.draft_length} "
        f"({_deviation(worst):+.1%})"
    )
    if abs(_deviation(worst)) > GOLDEN_TOLERANCE:
        return _rule("spec_acceptance", "broken", _NOT_PINNED, detail)
    return _rule("spec_acceptance", "met", _PINNED, detail)


def _deviation(a: Acceptance) -> float:
    """measured ÷ golden − 1, of a stretch where both are known."""
    assert a.length is not None and a.golden is not None
    return a.length / a.golden - 1
