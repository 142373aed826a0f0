"""Measuring what the servers did, as the load client and the proxy see it (docs/metrics.md): from
the bytes of one answer to the run's and a sweep point's figures. A leaf: it reads `snapshot` only.

    sse.py         an OpenAI-compatible SSE body read from raw bytes; what went wrong, by kind
    usage.py       the server's own token counts (`usage`)
    timing.py      a finished answer's times and counts as figures: output tokens, TTFT, decode, ITL,
                   where E2E ends, E2E per output token (r_i, AgentX's North Star before it is inverted),
                   its first-token part and its decode stalls
    record.py      one request as the statistics count it (built from its answer's figures, in one
                   place for the load client and the proxy), and as the driver keeps it
    percentile.py  the one percentile rule: linear between the closest ranks (numpy's default)
    histogram.py   log-bucketed histograms, mergeable exactly; a figure's values exact while few;
                   whole numbers counted exactly
    slots.py       time in slots; a request's tokens placed in them (one rule, every window), counted
                   live while it streams
    time_split.py  where r_i went over a set of requests: its parts summed per bucket of r_i
    tally.py       what a set of requests adds up to: a slot's, the run's or a window's; a users-table row's
    headline.py    a tally's headline figures (rates, latencies, interactivity, hit rates): one rule
                   for the client's window and run, a sweep point and a --precision run
    window.py      a measured window (a sweep point's, a plain run's after --warmup) and its raw sample
    cold.py        the cold start: which latency figures the sessions' first requests set
    schedule.py    a timed replay's schedule as kept: behind or not, the users that would keep it
    reuse.py       where each prompt went: cold, hit, evicted; the idle times; the retention curve
    stats.py       the client's figures over the run and its sliding window (`ClientStats`)
    agentx.py      what AgentX's rules measure of the client's requests: context overflows, output
                   coverage, warm-up requests per user

Public:
    SseScanner, classify, RETRIABLE                 reading an SSE stream; error kinds, the retriable ones
    OVER_CONTEXT and its kinds (CONTEXT_OVERFLOW, SESSION_CALL_TOO_LONG, TRACE_TOO_LONG, AGENT_STEP_TOO_LONG)
                                                    a request over the model's context, refused or not sent
    ContextOverflows, output_coverage, fewest_requests
                                                    AgentX's rules' figures of the client's requests
    UsageCounts, usage_int, usage_cached_tokens    token counts from a `usage` object
    measure_answer, MeasuredAnswer, token_gaps       a finished answer's output tokens, TTFT, decode, ITL
                                                    (the one rule of the load client and the proxy)
    answer_end, e2e_per_token                       where E2E ends; r_i = E2E latency / output tokens
    decode_stalls, STALL_FACTOR                     a request's decode stalls (the stall rule)
    Completed, Failed, RequestRecord                one request as counted (`Completed.of_answer`); as
                                                    the driver saw it
    slot_of, spread_tokens, arrivals_of             the slot of a moment; output tokens over slots; a
                                                    stream's content events per second
    LiveCount, Streamed, Arrivals, TokensPerEvent   a request's tokens counted as it streams; what the
                                                    requests in flight streamed since the last tick
    linear_quantile                                 the percentile of exact samples (the one rule)
    LogHistogram, bucket_of, bucketed               log-bucketed histograms
    IntegerCounts                                   whole numbers counted exactly (output tokens)
    TimeSplit, TailShares                           r_i's parts per bucket of r_i; a tail's shares
    Tally, CallTally                                a set of requests' figures; a users-table row's
    tally_figures, TALLY_KEYS                       a tally's headline figures, as the report names them
    WindowBook, PointSample, TreeSample, SlotSample, SLOT_S
                                                    a measured window and its sample
    cold_start                                      the latency figures the sessions' first requests set
    ClientStats, StatsSink                          the client's figures; where a load loop hands them
    ScheduleBook, behind_schedule                   a timed replay's schedule: users needed, the lag rule
    split_prompt, PromptSplit, ReuseTally           a prompt's cold, hit and evicted tokens; their sums
    SeenPrefixes, cacheable_tokens                  the prefixes sent, for the ceiling and reused tokens
"""

from agentx_tui.measure.agentx import ContextOverflows, fewest_requests, output_coverage
from agentx_tui.measure.cold import cold_start
from agentx_tui.measure.headline import TALLY_KEYS, tally_figures
from agentx_tui.measure.histogram import IntegerCounts, LogHistogram, bucket_of, bucketed
from agentx_tui.measure.percentile import linear_quantile
from agentx_tui.measure.prefixes import SeenPrefixes, cacheable_tokens
from agentx_tui.measure.record import Completed, Failed, RequestRecord
from agentx_tui.measure.reuse import PromptSplit, ReuseTally, split_prompt
from agentx_tui.measure.schedule import ScheduleBook, behind_schedule
from agentx_tui.measure.slots import (
    Arrivals,
    LiveCount,
    Streamed,
    TokensPerEvent,
    arrivals_of,
    slot_of,
    spread_tokens,
)
from agentx_tui.measure.sse import (
    AGENT_STEP_TOO_LONG,
    CONTEXT_OVERFLOW,
    OVER_CONTEXT,
    RETRIABLE,
    SESSION_CALL_TOO_LONG,
    TRACE_TOO_LONG,
    SseScanner,
    classify,
)
from agentx_tui.measure.stats import ClientStats, StatsSink
from agentx_tui.measure.tally import CallTally, Tally
from agentx_tui.measure.time_split import TailShares, TimeSplit
from agentx_tui.measure.timing import (
    STALL_FACTOR,
    MeasuredAnswer,
    answer_end,
    decode_stalls,
    e2e_per_token,
    measure_answer,
    token_gaps,
)
from agentx_tui.measure.usage import UsageCounts, usage_cached_tokens, usage_int
from agentx_tui.measure.window import SLOT_S, PointSample, SlotSample, TreeSample, WindowBook

__all__ = [
    "AGENT_STEP_TOO_LONG",
    "CONTEXT_OVERFLOW",
    "OVER_CONTEXT",
    "RETRIABLE",
    "SESSION_CALL_TOO_LONG",
    "SLOT_S",
    "STALL_FACTOR",
    "TALLY_KEYS",
    "TRACE_TOO_LONG",
    "Arrivals",
    "CallTally",
    "ClientStats",
    "Completed",
    "ContextOverflows",
    "Failed",
    "IntegerCounts",
    "LiveCount",
    "LogHistogram",
    "MeasuredAnswer",
    "PointSample",
    "PromptSplit",
    "RequestRecord",
    "ReuseTally",
    "ScheduleBook",
    "SeenPrefixes",
    "SlotSample",
    "SseScanner",
    "StatsSink",
    "Streamed",
    "TailShares",
    "Tally",
    "TimeSplit",
    "TokensPerEvent",
    "TreeSample",
    "UsageCounts",
    "WindowBook",
    "answer_end",
    "arrivals_of",
    "behind_schedule",
    "bucket_of",
    "bucketed",
    "cacheable_tokens",
    "classify",
    "cold_start",
    "decode_stalls",
    "e2e_per_token",
    "fewest_requests",
    "linear_quantile",
    "measure_answer",
    "output_coverage",
    "slot_of",
    "split_prompt",
    "spread_tokens",
    "tally_figures",
    "token_gaps",
    "usage_cached_tokens",
    "usage_int",
]
