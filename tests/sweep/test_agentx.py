"""AgentX validity, rule by rule (sweep/agentx.py): each rule met, broken, not known or pending, with its
value; the verdict valid only once every rule is met."""

from __future__ import annotations

import pytest

from agentx_tui.snapshot import (
    AgentXVerdict,
    ClientReading,
    ClientTotals,
    CostReading,
    EndpointReading,
    EndpointTotals,
    Figures,
    FrontierAxis,
    PointFigures,
    RunInfo,
    Snapshot,
    SweepPhase,
    SweepState,
    WorkerLossRow,
)
from agentx_tui.sweep import DECODE, NORTH_STAR, AgentXSetup, KvOffload, ServerMemory, judge

NO_OFFLOAD = KvOffload(False, 0.0, "no --kv-offloading-size")


def tick(
    *,
    elapsed_s: float = 1000.0,
    completed: int = 100,
    failed: int = 0,
    sweep: SweepState | None = None,
    gpus: int | None = 8,
    output_scale: float = 1.0,
    losses: tuple[WorkerLossRow, ...] = (),
    overflow: tuple[int, float | None] = (0, 0.0),
    coverage: float | None = 1.0,
) -> Snapshot:
    run = RunInfo(target="simulated h200/llama-3.1-8b", simulated=True, output_scale=output_scale, load_losses=losses)
    figures = Figures(
        context_overflow_requests=overflow[0], context_overflow_share=overflow[1], output_coverage=coverage
    )
    return Snapshot(
        seq=1,
        time=1e9 + elapsed_s,
        elapsed_s=elapsed_s,
        run=run,
        client=ClientReading(run=figures, totals=ClientTotals(requests_completed=completed, requests_failed=failed)),
        sweep=sweep,
        cost=CostReading(gpus=gpus),
    )


def point(
    users: int,
    *,
    duration_s: float = 900.0,
    error_rate: float = 0.0,
    completed: int = 100,
    early: bool = False,
    warmup: int | None = 10,
    overflow: tuple[int, float | None] = (0, 0.0),
    coverage: float | None = 1.0,
    steady: bool | None = True,
    steady_reason: str | None = None,
) -> PointFigures:
    return PointFigures(
        index=0,
        users=users,
        warmup_s=20.0,
        duration_s=duration_s,
        window_start_s=0.0,
        requests_completed=completed,
        error_rate=error_rate,
        stopped_early=early,
        warmup_requests_min=warmup,
        context_overflow_requests=overflow[0],
        context_overflow_share=overflow[1],
        output_coverage=coverage,
        steady=steady,
        steady_reason=steady_reason,
    )


def sweep(
    *points: PointFigures,
    planned_s: float = 900.0,
    axis: FrontierAxis = NORTH_STAR,
    at: tuple[int, SweepPhase, float | None] | None = None,
) -> SweepState:
    """A sweep with `points` measured; `at`: the point in progress (its users, phase, seconds left)."""
    users, phase, left = at if at is not None else (None, "done", None)
    return SweepState(
        points=points, point_duration_s=planned_s, frontier_axis=axis, current_users=users, phase=phase,
        phase_left_s=left,
    )  # fmt: skip


def valid_sweep() -> Snapshot:
    """A sweep of one full point that meets every rule it measures."""
    return tick(sweep=sweep(point(16)))


def verdict(snap: Snapshot, setup: AgentXSetup | None = None, **how: object) -> AgentXVerdict:
    found = judge(snap, setup or AgentXSetup(offload=NO_OFFLOAD), **how)  # type: ignore[arg-type]
    assert found is not None
    return found


def rule(v: AgentXVerdict, name: str) -> tuple[str, str]:
    """A rule's state and sentence."""
    (found,) = (r for r in v.rules if r.rule == name)
    return found.state, found.sentence


# --- a plain run is one point ------------------------------------------------------------------------


NO_WARMUP = "fewer than 10 warm-up requests per user: a plain run without --warmup measures from its users' first "
NO_WARMUP += "requests"
# A plain run with a warm-up whose window opened once every user had completed 10 requests.
WARM = AgentXSetup(run_warmup_s=20.0, offload=NO_OFFLOAD)


def warmed(snap: Snapshot, fewest: int = 10) -> Snapshot:
    """`snap` as a plain run's last tick that carries its measured window, opened after `fewest` requests
    a user at least."""
    window = PointFigures(
        index=0, users=16, warmup_s=20.0, duration_s=snap.elapsed_s - 20.0, window_start_s=20.0,
        warmup_requests_min=fewest, context_overflow_requests=0, context_overflow_share=0.0, output_coverage=1.0,
    )  # fmt: skip
    return snap.model_copy(update={"measured": window})


def test_a_20_s_run_is_not_agentx_valid_because_its_point_is_shorter_than_900_s() -> None:
    v = verdict(tick(elapsed_s=20.4), AgentXSetup(run_duration_s=20, offload=NO_OFFLOAD), final=True)
    assert v.valid is False
    assert v.reasons == ("points shorter than 900 s: the run's one point, --duration 20 s", NO_WARMUP)
    assert v.label == "not AgentX-valid: points shorter than 900 s (+1 more)"


def test_a_plain_runs_length_is_known_short_from_its_duration_at_once() -> None:
    v = verdict(tick(elapsed_s=1.0, completed=0), AgentXSetup(run_duration_s=20, offload=NO_OFFLOAD))
    assert rule(v, "point_length")[0] == "broken" and v.label.startswith("not AgentX-valid: points shorter than 900 s")


def test_a_plain_runs_warm_up_is_not_part_of_its_point() -> None:
    """--duration 910 --warmup 20 measures 890 s: short; 950 s with the same warm-up measures 930 s."""
    short = verdict(tick(elapsed_s=1.0), AgentXSetup(run_duration_s=910, run_warmup_s=20, offload=NO_OFFLOAD))
    assert rule(short, "point_length") == (
        "broken",
        "points shorter than 900 s: the run's one point, --duration 910 s less --warmup 20 s",
    )
    setup = AgentXSetup(run_duration_s=950, run_warmup_s=20, offload=NO_OFFLOAD)
    assert rule(verdict(tick(elapsed_s=950.0), setup, final=True), "point_length") == (
        "met",
        "points of at least 900 s: the run's one point, 930 s after a 20 s warm-up",
    )


def test_a_run_until_quit_waits_for_its_length_then_judges_it() -> None:
    running = verdict(tick(elapsed_s=300.0))
    assert rule(running, "point_length") == ("pending", "points of at least 900 s: the run's one point, 300 s of 900 s")
    assert rule(verdict(tick(elapsed_s=300.0), final=True), "point_length") == (
        "broken",
        "points shorter than 900 s: the run's one point ended after 300 s",
    )
    long = verdict(tick(elapsed_s=901.0), final=True)
    assert rule(long, "point_length") == ("met", "points of at least 900 s: the run's one point, 901 s")


def test_a_plain_run_without_a_warm_up_is_never_an_agentx_point() -> None:
    """Its one window is the whole run: its users' first requests are measured (AgentX: 10 per user first)."""
    for v in (verdict(tick(elapsed_s=3.0)), verdict(tick(elapsed_s=1800.0), final=True)):
        assert rule(v, "warmup") == ("broken", NO_WARMUP) and v.valid is False


def test_a_plain_runs_warm_up_is_judged_by_its_window() -> None:
    """With --warmup its window opens after it: the fewest requests a user had completed then decides."""
    assert rule(verdict(tick(elapsed_s=3.0), WARM), "warmup") == (
        "pending",
        "10 warm-up requests per user: the window opens after the 20 s warm-up",
    )
    met = verdict(warmed(tick(elapsed_s=1000.0)), WARM, final=True)
    assert rule(met, "warmup") == (
        "met",
        "10 warm-up requests per user: the fewest a user had completed when the window opened: 10 (after 20 s)",
    )
    assert met.valid is True
    short = verdict(warmed(tick(elapsed_s=1000.0), fewest=3), WARM, final=True)
    assert rule(short, "warmup")[0] == "broken" and short.valid is False


def test_a_run_cut_short_is_not_valid_whatever_its_figures() -> None:
    v = verdict(tick(), final=True, partial_reason="stopped by Ctrl-C")
    assert rule(v, "complete") == ("broken", "the run was cut short: stopped by Ctrl-C")
    assert v.valid is False


def lost(at_s: float, restarted_at_s: float | None = None) -> WorkerLossRow:
    return WorkerLossRow(
        at_s=at_s, worker=2, workers=2, pid=1234, how="SIGKILL", users=16, users_lost=8, users_left=8,
        restarted_at_s=restarted_at_s,
    )  # fmt: skip


def test_a_run_that_lost_a_load_worker_is_not_valid_at_once() -> None:
    v = verdict(tick(elapsed_s=300.0, losses=(lost(15.2),)), WARM)
    assert rule(v, "load_workers") == (
        "broken",
        "load workers lost: load worker 2 of 2 died at 15 s (SIGKILL): 8 of 16 users were not driven from then on",
    )
    assert v.valid is False and v.label == "not AgentX-valid: load workers lost"
    assert rule(verdict(tick(losses=(lost(15.2),)), final=True), "complete")[0] == "met"  # it did run to its end


def test_every_user_driven_to_the_end_waits_for_the_end_unless_a_loss_breaks_it() -> None:
    assert rule(verdict(tick(elapsed_s=300.0)), "load_workers") == (
        "pending",
        "every user driven to the end: no load worker lost so far",
    )
    assert rule(verdict(tick(), final=True), "load_workers") == (
        "met",
        "every user driven to the end: no load worker lost",
    )
    # A sweep restarted them and measured the point again: its points were all measured with their users.
    restarted = verdict(tick(losses=(lost(15.2, 18.0), lost(40.0, 41.0))), final=True)
    assert rule(restarted, "load_workers") == (
        "met",
        "every user driven to the end: 2 lost load workers restarted, the points they were lost in measured again",
    )
    # Of two, one not restarted: the rule is broken by it alone.
    one = verdict(tick(losses=(lost(15.2, 18.0), lost(40.0))), final=True)
    assert rule(one, "load_workers")[1].endswith(
        "load worker 2 of 2 died at 40 s (SIGKILL): 8 of 16 users were not driven from then on"
    )


# --- a sweep: every point ----------------------------------------------------------------------------


def test_a_sweep_of_short_points_breaks_the_rule_before_its_first_point() -> None:
    v = verdict(tick(sweep=sweep(planned_s=20.0)))
    assert rule(v, "point_length") == ("broken", "points shorter than 900 s: --point-duration is 20 s")


def test_a_point_that_precision_ended_early_is_short() -> None:
    points = (point(16), point(32, duration_s=412.0, early=True), point(64, duration_s=850.0, early=True))
    v = verdict(tick(sweep=sweep(*points)), final=True)
    # the shortest of them is named
    assert rule(v, "point_length") == (
        "broken",
        "points shorter than 900 s: the point at 32 users ended after 412 s (--precision)",
    )


def test_points_of_the_full_length_meet_it() -> None:
    v = verdict(tick(sweep=sweep(point(16), point(32))), final=True)
    assert rule(v, "point_length") == ("met", "points of at least 900 s: --point-duration 900 s")
    assert v.valid is True and v.reasons == () and v.label == "AgentX-valid"


def test_no_point_measured_yet_is_pending_and_none_at_the_end_is_invalid() -> None:
    assert rule(verdict(tick(sweep=sweep())), "error_rate")[0] == "pending"
    v = verdict(tick(sweep=sweep()), final=True)
    assert rule(v, "error_rate") == ("broken", "a point without a completed request: no point was measured")


@pytest.mark.parametrize(
    ("rate", "state"),
    [(0.0, "met"), (0.1, "met"), (0.1000001, "broken"), (0.25, "broken")],
)
def test_a_points_error_rate_may_be_10_percent_exactly(rate: float, state: str) -> None:
    v = verdict(tick(sweep=sweep(point(8), point(16, error_rate=rate))), final=True)
    assert rule(v, "error_rate")[0] == state
    if state == "broken":
        assert v.reasons[0] == f"error rate above 10%: {rate:.1%} at 16 users"


def test_a_plain_runs_error_rate_is_its_requests() -> None:
    assert rule(verdict(tick(completed=9, failed=1), final=True), "error_rate") == (
        "met",
        "error rate at most 10%: 10.0% of the run's requests failed",
    )
    assert rule(verdict(tick(completed=8, failed=2)), "error_rate") == (
        "broken",
        "error rate above 10%: 20.0% of the run's requests failed so far",
    )
    assert rule(verdict(tick(completed=0, failed=3), final=True), "error_rate") == (
        "broken",
        "a point without a completed request: no request of the run completed",
    )


def test_a_point_where_no_request_completed_is_invalid() -> None:
    v = verdict(tick(sweep=sweep(point(1, completed=0, error_rate=1.0), point(2))), final=True)
    assert rule(v, "error_rate") == (
        "broken",
        "a point without a completed request: none ended inside the window at 1 user",
    )


def test_tiers_read_on_decode_break_the_north_star_rule() -> None:
    v = verdict(tick(sweep=sweep(point(8), axis=DECODE)), final=True)
    assert rule(v, "north_star") == (
        "broken",
        "tiers read on decode interactivity, not the North Star: --frontier-axis decode",
    )
    assert rule(verdict(tick(sweep=sweep(point(8))), final=True), "north_star")[0] == "met"
    assert all(r.rule != "north_star" for r in verdict(tick(), final=True).rules)  # a plain run reads no tiers


# --- KV offload to CPU memory: within the budget ----------------------------------------------------


def offload_rule(offload: KvOffload, memory: ServerMemory, gpus: int | None = 2) -> tuple[AgentXVerdict, str, str]:
    v = verdict(tick(gpus=gpus, sweep=sweep(point(16))), AgentXSetup(offload=offload, memory=memory), final=True)
    state, sentence = rule(v, "kv_offload")
    return v, state, sentence


EIGHT_GPU_SERVER = ServerMemory(4e12, "--server-dram-gb", 8, "--server-gpus")


def test_an_offload_over_the_budget_is_invalid() -> None:
    v, state, sentence = offload_rule(KvOffload(True, 1.2e12, "--kv-offloading-size"), EIGHT_GPU_SERVER)
    assert state == "broken" and v.valid is False
    # 4 TB of DRAM counts as 3 TB (the cap per server); 2 of 8 GPUs: 0.75 TB
    assert (
        sentence == "KV offload over the budget: 1.2 TB exceeds the budget of 0.75 TB (DRAM baseline 3 TB × 2 GPUs ÷ 8)"
    )


def test_an_offload_within_the_budget_meets_it() -> None:
    small = ServerMemory(1e12, "/proc/meminfo", 8, "NVML")
    v, state, sentence = offload_rule(KvOffload(True, 0.2e12, "--kv-offloading-size"), small, gpus=8)
    assert state == "met" and v.valid is True
    assert sentence == "KV offload within the budget: 0.2 TB of a budget of 1 TB (DRAM baseline 1 TB × 8 GPUs ÷ 8)"


def test_a_server_that_does_not_offload_meets_it_whatever_its_dram() -> None:
    _, state, sentence = offload_rule(NO_OFFLOAD, ServerMemory())
    assert (state, sentence) == (
        "met",
        "KV offload within the budget: the server does not offload KV to CPU memory (no --kv-offloading-size)",
    )


def test_unknown_dram_is_said_and_leaves_the_run_neither_valid_nor_invalid() -> None:
    v, state, sentence = offload_rule(KvOffload(True, 1e11, "x"), ServerMemory(None, "", 8, "--server-gpus"))
    assert state == "unknown" and v.valid is None
    assert sentence == "the server's DRAM is unknown: the offload budget cannot be checked (give --server-dram-gb)"
    assert v.label == "AgentX validity unknown: the server's DRAM is unknown"


@pytest.mark.parametrize(
    ("offload", "memory", "gpus", "sentence"),
    [
        (
            KvOffload(None, None, "the attached server does not say whether it offloads KV to CPU memory"),
            EIGHT_GPU_SERVER,
            2,
            "KV offload unknown: the attached server does not say whether it offloads KV to CPU memory",
        ),
        (
            KvOffload(True, None, "the launched vLLM offloads through lmcache, whose size it does not say"),
            EIGHT_GPU_SERVER,
            2,
            "KV offload size unknown: the launched vLLM offloads through lmcache, whose size it does not say",
        ),
        (
            KvOffload(True, 1e11),
            ServerMemory(1e12, "x", None, ""),
            2,
            "the GPUs in the server are unknown: the offload budget cannot be checked (give --server-gpus)",
        ),
        (
            KvOffload(True, 1e11),
            EIGHT_GPU_SERVER,
            None,
            "the GPUs the server uses are unknown: the offload budget cannot be checked (give --gpus)",
        ),
    ],
)
def test_whatever_the_budget_lacks_is_said_never_guessed(
    offload: KvOffload, memory: ServerMemory, gpus: int | None, sentence: str
) -> None:
    v, state, said = offload_rule(offload, memory, gpus)
    assert (state, said) == ("unknown", sentence) and v.valid is None


# --- the sessions as recorded ------------------------------------------------------------------------


def test_capped_think_times_and_rescaled_answers_break_the_replay_rules() -> None:
    snap = valid_sweep().model_copy(update={"run": RunInfo(target="x", output_scale=0.7)})
    v = verdict(snap, AgentXSetup(max_think_s=5, offload=NO_OFFLOAD), final=True)
    assert v.reasons == (
        "think times capped: --max-think 5 s; AgentX keeps each session's own pacing",
        "answers rescaled: --output-scale 0.7; AgentX generates every answer at its recorded length",
    )
    assert v.label == "not AgentX-valid: think times capped (+1 more)"


def test_the_idle_cap_is_not_a_think_time_cap() -> None:
    """--agentx's whole-system idle cap moves waiting think times alike while nothing is in flight: the
    sessions keep their pacing, and the rule says the cap is there."""
    v = verdict(valid_sweep(), AgentXSetup(idle_cap_s=10.0, offload=NO_OFFLOAD), final=True)
    assert rule(v, "think_time") == (
        "met",
        "think times as the sessions have them: no --max-think; whole-system idle gaps capped at 10 s, as the "
        "harness does",
    )
    assert v.valid is True


# --- the verdict -------------------------------------------------------------------------------------


def test_a_run_without_load_of_its_own_is_not_judged() -> None:
    assert judge(tick().model_copy(update={"client": None}), AgentXSetup()) is None


def test_a_proxy_only_run_is_not_judged_though_it_measures_client_figures() -> None:
    """`--proxy` with `-w none`: the real agents' calls fill the client figures, but the run sends no load
    of its own, so there is no point of its own to judge (docs/usage.md)."""
    proxied = tick(elapsed_s=20.0)
    assert proxied.client is not None
    assert judge(proxied, AgentXSetup(sends_load=False, offload=NO_OFFLOAD), final=True) is None
    assert judge(proxied, AgentXSetup(sends_load=True, offload=NO_OFFLOAD), final=True) is not None


def test_broken_rules_come_before_unknown_ones_and_are_counted() -> None:
    unknown = KvOffload(None, None, "the simulated engine does not say whether it offloads KV to CPU memory")
    v = verdict(tick(elapsed_s=20.0), AgentXSetup(run_duration_s=20, max_think_s=2, offload=unknown), final=True)
    assert [r.split(":")[0] for r in v.reasons] == [
        "points shorter than 900 s",
        "fewer than 10 warm-up requests per user",
        "think times capped",
        "KV offload unknown",
    ]
    assert v.labels() == (
        "not AgentX-valid: points shorter than 900 s (+3 more)",
        "not AgentX-valid: points shorter than 900 s",
        "not AgentX-valid",
    )
    assert [r.rule for r in v.met] == [
        "error_rate", "context_overflow", "coverage", "complete", "load_workers", "answer_length", "spec_acceptance",
    ]  # fmt: skip


def test_the_test_hook_shortens_the_rule_and_the_verdict_says_so() -> None:
    setup = AgentXSetup(min_point_s=3.0, offload=NO_OFFLOAD)
    v = verdict(tick(sweep=sweep(point(1, duration_s=3.0), planned_s=3.0)), setup, final=True)
    assert rule(v, "point_length") == (
        "met",
        "points of at least 3 s: --point-duration 3 s (AGENTX_TEST_MIN_POINT_S=3 shortens the rule's 900 s for a test)",
    )
    assert v.valid is True and v.labels() == ("AgentX-valid (test rule: points ≥ 3 s)", "AgentX-valid")
    real = verdict(tick(sweep=sweep(point(1, duration_s=3.0), planned_s=3.0)), final=True)
    assert rule(real, "point_length")[1] == "points shorter than 900 s: --point-duration is 3 s"


# --- speculative decoding at the golden acceptance length ------------------------------------------


def speculating(snap: Snapshot, *, drafts: float, accepted: float, golden: float | None, k: int = 3) -> Snapshot:
    """`snap` whose servers speculate at draft length `k`, with these run totals and golden length."""
    aggregate = EndpointReading(
        url="aggregate",
        up=True,
        spec_draft_length=k,
        spec_golden_acceptance_length=golden,
        spec_golden_source="DeepSeek V4 Pro MTP, thinking on, k = 3: InferenceX dsv4_mtp.yaml" if golden else "none",
        totals=EndpointTotals(spec_drafts=drafts, spec_accepted_tokens=accepted, spec_draft_tokens=k * drafts),
    )
    return snap.model_copy(update={"aggregate": aggregate})


def spec_point(users: int, length: float | None, golden: float | None, k: int | None = 3) -> PointFigures:
    return point(users).model_copy(
        update={
            "spec_acceptance_length": length,
            "spec_golden_acceptance_length": golden,
            "spec_golden_source": "--spec-golden" if golden else "no golden acceptance length for 'm'",
            "spec_draft_length": k,
        }
    )


def test_a_server_that_does_not_speculate_is_not_judged_on_the_golden_length_and_says_so() -> None:
    v = verdict(warmed(tick()), WARM, final=True)
    assert rule(v, "spec_acceptance") == (
        "met",
        "no speculative decoding: the servers export no speculative-decoding counters: the golden length does "
        "not apply",
    )
    assert v.valid is True


def test_a_run_within_2_percent_of_the_golden_length_meets_the_rule() -> None:
    v = verdict(speculating(warmed(tick()), drafts=1000, accepted=1500, golden=2.49), WARM, final=True)  # AL 2.5: +0.4%
    assert rule(v, "spec_acceptance") == (
        "met",
        "acceptance pinned to the golden length: 2.50 over the run against the golden 2.49 at k = 3 (+0.4%)",
    )
    assert v.valid is True


def test_a_run_off_the_golden_length_by_more_than_2_percent_is_not_agentx_valid() -> None:
    v = verdict(speculating(warmed(tick()), drafts=1000, accepted=2720, golden=2.49), WARM, final=True)  # AL 3.72
    assert v.valid is False
    assert v.reasons == (
        "acceptance not pinned to the golden length: 3.72 over the run against the golden 2.49 at k = 3 (+49.4%)",
    )
    below = verdict(speculating(tick(), drafts=1000, accepted=1430, golden=2.49), final=True)  # AL 2.43: −2.4%
    assert rule(below, "spec_acceptance")[0] == "broken"


def test_speculation_without_a_golden_length_or_without_a_draft_is_unknown() -> None:
    no_golden = verdict(speculating(warmed(tick()), drafts=1000, accepted=2720, golden=None), WARM, final=True)
    assert no_golden.valid is None
    assert no_golden.reasons == ("golden acceptance length unknown: none; measured 3.72 over the run",)
    # Speculation configured, nothing drafted (ngram under sampling): pending while the run goes on.
    idle = speculating(warmed(tick()), drafts=0, accepted=0, golden=2.49)
    pending = ("pending", "acceptance pinned to the golden length: no draft verified yet")
    assert rule(verdict(idle, WARM), "spec_acceptance") == pending
    final = verdict(idle, WARM, final=True)
    assert final.valid is None and final.reasons == (
        "acceptance length unknown: no draft was verified: the acceptance length could not be measured",
    )


def test_a_sweep_is_judged_by_its_worst_point() -> None:
    points = (spec_point(8, 2.5, 2.49), spec_point(16, 2.6, 2.49), spec_point(32, None, 2.49))
    v = verdict(tick(sweep=sweep(*points)), final=True)
    assert rule(v, "spec_acceptance") == (
        "broken",
        "acceptance not pinned to the golden length: 2.60 at 16 users against the golden 2.49 at k = 3 (+4.4%)",
    )
    fine = verdict(tick(sweep=sweep(spec_point(8, 2.5, 2.49), spec_point(16, 2.47, 2.49))), final=True)
    assert rule(fine, "spec_acceptance")[0] == "met" and fine.valid is True
    unknown = verdict(tick(sweep=sweep(spec_point(8, 2.5, None))), final=True)
    assert rule(unknown, "spec_acceptance")[0] == "unknown"
    plain = verdict(tick(sweep=sweep(spec_point(8, None, None, k=None))), final=True)
    assert rule(plain, "spec_acceptance")[0] == "met"  # no point's servers speculated


# --- warm-up, context overflow, output coverage --------------------------------------------------------


@pytest.mark.parametrize(("fewest", "state"), [(10, "met"), (25, "met"), (9, "broken"), (0, "broken")])
def test_each_user_completes_10_requests_before_a_points_window_opens(fewest: int, state: str) -> None:
    v = verdict(tick(sweep=sweep(point(8, warmup=40), point(16, warmup=fewest))), final=True)
    head = "10 warm-up requests per user" if state == "met" else "fewer than 10 warm-up requests per user"
    assert rule(v, "warmup") == (
        state,
        f"{head}: the fewest a user had completed when a window opened: {fewest} (at 16 users)",
    )


def test_the_warm_up_waits_for_a_point_and_is_unknown_from_points_that_do_not_say_it() -> None:
    assert rule(verdict(tick(sweep=sweep())), "warmup") == (
        "pending",
        "10 warm-up requests per user: no point measured yet",
    )
    old = verdict(tick(sweep=sweep(point(8, warmup=None))), final=True)  # a recording of before the figure
    assert (
        rule(old, "warmup") == ("unknown", "warm-up per user unknown: the points do not say it") and old.valid is None
    )


@pytest.mark.parametrize(("share", "state"), [(0.0, "met"), (0.01, "met"), (0.0100001, "broken"), (0.2, "broken")])
def test_a_points_context_overflow_may_be_1_percent_exactly(share: float, state: str) -> None:
    v = verdict(tick(sweep=sweep(point(8), point(16, overflow=(12, share)))), final=True)
    found = rule(v, "context_overflow")
    assert found[0] == state
    if state == "broken":
        assert (
            found[1]
            == f"context overflow above 1%: {share:.1%} of the requests (12 over the model's context) at 16 users"
        )
        assert v.valid is False


def test_a_plain_runs_context_overflow_is_over_its_requests_so_far() -> None:
    running = verdict(tick(overflow=(3, 0.03)))
    assert rule(running, "context_overflow") == (
        "broken",
        "context overflow above 1%: 3.0% of the requests (3 over the model's context) so far",
    )
    assert rule(verdict(tick(overflow=(1, 0.005)), final=True), "context_overflow") == (
        "met",
        "context overflow at most 1%: 0.5% of the requests (1 over the model's context)",
    )
    assert rule(verdict(tick(overflow=(0, None))), "context_overflow")[0] == "pending"
    assert rule(verdict(tick(overflow=(0, None)), final=True), "context_overflow")[0] == "unknown"


@pytest.mark.parametrize(("coverage", "state"), [(1.0, "met"), (0.95, "met"), (0.9499, "broken"), (0.0, "broken")])
def test_output_must_arrive_through_95_percent_of_each_window(coverage: float, state: str) -> None:
    v = verdict(tick(sweep=sweep(point(8), point(16, coverage=coverage))), final=True)
    found = rule(v, "coverage")
    assert found[0] == state
    if state == "broken":
        assert found[1] == f"output through less than 95% of a window: {coverage:.1%} of the window at 16 users"


def test_a_plain_runs_coverage_is_pending_until_it_ends() -> None:
    """Output may come again while the run goes on: only its end judges its coverage."""
    assert rule(verdict(tick(coverage=0.4)), "coverage") == (
        "pending",
        "output through at least 95% of each window: 40.0% of the run so far",
    )
    assert rule(verdict(tick(coverage=0.4), final=True), "coverage")[0] == "broken"
    assert rule(verdict(tick(coverage=0.97), final=True), "coverage") == (
        "met",
        "output through at least 95% of each window: 97.0% of the run",
    )


# --- pending is not valid -------------------------------------------------------------------------------


def test_a_run_still_measured_is_pending_never_valid() -> None:
    """Nothing broken yet, but a rule waits: "AgentX pending" and what it waits for, not "AgentX-valid"."""
    first = verdict(tick(elapsed_s=23.0, sweep=sweep(at=(32, "measure", 877.0), planned_s=900.0)))
    assert first.valid is None and first.waiting and first.label != "AgentX-valid"  # pending is not valid
    assert first.labels() == (
        "AgentX pending: the point at 32 users, 23 s of 900 s (no point measured yet)",
        "AgentX pending",
    )
    warming = verdict(tick(sweep=sweep(at=(32, "warmup", 12.0))))
    assert (
        warming.labels()[0] == "AgentX pending: the point at 32 users, warming up (12 s left) (no point measured yet)"
    )
    later = verdict(tick(sweep=sweep(point(32), at=(64, "measure", 600.0))))
    assert [r.rule for r in later.pending] == ["complete", "load_workers"]
    assert later.labels()[0] == "AgentX pending: still running: the point at 64 users, 300 s of 900 s"
    done = verdict(tick(sweep=sweep(point(32), point(64))), final=True)
    assert not done.waiting and done.labels() == ("AgentX-valid",)


def test_a_broken_rule_is_said_at_once_even_while_others_wait() -> None:
    v = verdict(tick(sweep=sweep(point(32, overflow=(40, 0.04)), at=(64, "measure", 600.0))))
    assert not v.waiting and v.labels()[0] == "not AgentX-valid: context overflow above 1%"


# --- a sweep's points were steady when their windows opened (MSER-5) ---------------------------------


def test_a_sweep_with_a_point_that_never_settled_is_not_agentx_valid() -> None:
    drifting = "--warmup 900 s reached, p90 r_i still drifting (truncated at the first half's end: 90 of 180 batches)"
    v = verdict(tick(sweep=sweep(point(16), point(32, steady=False, steady_reason=drifting))), final=True)
    assert v.valid is False
    assert rule(v, "steady") == ("broken", f"a point never settled: at 32 users: {drifting}")


def test_every_point_steady_meets_the_rule_with_its_warm_ups() -> None:
    v = verdict(tick(sweep=sweep(point(16), point(32))), final=True)
    assert rule(v, "steady") == ("met", "every point steady before its window: MSER-5 found each of 2 points steady "
                                "after 20 s of warm-up")  # fmt: skip
    # While the first point warms up the rule waits; points of an older report, which do not say, are unknown.
    assert rule(verdict(tick(sweep=sweep(at=(16, "warmup", 30.0)))), "steady")[0] == "pending"
    assert rule(verdict(tick(sweep=sweep(point(16, steady=None))), final=True), "steady")[0] == "unknown"


def test_a_tier_sweep_waiting_on_a_probe_says_so() -> None:
    state = sweep(at=(48, "measure", 20.0)).model_copy(update={"probing": True, "step_for": "tier 50"})
    assert rule(verdict(tick(sweep=state)), "point_length")[1].endswith(
        "probing 48 users for tier 50 (no point measured yet)"
    )
