"""Measuring what the servers did, as the load client and the proxy see it (docs/metrics.md): from
the bytes of one answer to the run's and a sweep point's figures. A leaf: it reads `snapshot` only.

    sse.py         an OpenAI-compatible SSE body read from raw bytes; what went wrong, by kind
    usage.py       the server's own token counts (`usage`)
    timing.py      a finished answer's times and counts as figures: output tokens, TTFT, decode, ITL,
                   where E2E ends, E2E per output token (r_i, AgentX's North Star before it is inverted)
    record.py      one request as the statistics count it (built from its answer's figures, in one
                   place for the load client and the proxy), and as the driver keeps it
    percentile.py  the one percentile rule: linear between the closest ranks (numpy's default)
    histogram.py   log-bucketed histograms, mergeable exactly; a figure's values exact while few
    slots.py       time in slots; a request's tokens placed in them (one rule, every window), counted
                   live while it streams
    tally.py       what a set of requests adds up to: a slot's, the run's or a window's; a users-table row's
    headline.py    a tally's headline figures (rates, latencies, interactivity, hit rates): one rule
                   for the client's window and run, a sweep point and a --precision run
    window.py      a sweep point's measured window and its raw sample (for the intervals)
    schedule.py    a timed replay's schedule as kept: behind or not, the users that would keep it
    reuse.py       where each prompt went: cold, hit, evicted; the idle times; the retention curve
    stats.py       the client's figures over the run and its sliding window (`ClientStats`)

Public:
    SseScanner, classify, RETRIABLE                 reading an SSE stream; error kinds, the retriable ones
    UsageFigures, usage_int, usage_cached_tokens    token counts from a `usage` object
    answer_figures, AnswerFigures, token_gaps       a finished answer's output tokens, TTFT, decode, ITL
                                                    (the one rule of the load client and the proxy)
    answer_end, e2e_per_token                       where E2E ends; r_i = E2E latency / output tokens
    Completed, Failed, RequestRecord                one request as counted (`Completed.of_answer`); as
                                                    the driver saw it
    slot_of, spread_tokens, arrivals_of             the slot of a moment; output tokens over slots; a
                                                    stream's content events per second
    LiveCount, Streamed, Arrivals, TokensPerEvent   a request's tokens counted as it streams; what the
                                                    requests in flight streamed since the last tick
    linear_quantile                                 the percentile of exact samples (the one rule)
    LogHistogram, bucket_of, bucketed               log-bucketed histograms
    Tally, CallTally                                a set of requests' figures; a users-table row's
    tally_figures                                   a tally's headline figures, as the report names them
    WindowFigures, PointSample, TreeSample, SlotSample, SLOT_S
                                                    a sweep point's window and its sample
    ClientStats, StatsSink                          the client's figures; where a load loop hands them
    ScheduleBook, behind_schedule                   a timed replay's schedule: users needed, the lag rule
    split_prompt, PromptSplit, ReuseTally           a prompt's cold, hit and evicted tokens; their sums
    SeenPrefixes, cacheable_tokens                  the prefixes sent, for the ceiling and reused tokens
"""

from agentx_tui.measure.headline import tally_figures
from agentx_tui.measure.histogram import LogHistogram, bucket_of, bucketed
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
from agentx_tui.measure.sse import RETRIABLE, SseScanner, classify
from agentx_tui.measure.stats import ClientStats, StatsSink
from agentx_tui.measure.tally import CallTally, Tally
from agentx_tui.measure.timing import AnswerFigures, answer_end, answer_figures, e2e_per_token, token_gaps
from agentx_tui.measure.usage import UsageFigures, usage_cached_tokens, usage_int
from agentx_tui.measure.window import SLOT_S, PointSample, SlotSample, TreeSample, WindowFigures

__all__ = [
    "RETRIABLE",
    "SLOT_S",
    "AnswerFigures",
    "Arrivals",
    "CallTally",
    "ClientStats",
    "Completed",
    "Failed",
    "LiveCount",
    "LogHistogram",
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
    "Tally",
    "TokensPerEvent",
    "TreeSample",
    "UsageFigures",
    "WindowFigures",
    "answer_end",
    "answer_figures",
    "arrivals_of",
    "behind_schedule",
    "bucket_of",
    "bucketed",
    "cacheable_tokens",
    "classify",
    "e2e_per_token",
    "linear_quantile",
    "slot_of",
    "split_prompt",
    "spread_tokens",
    "tally_figures",
    "token_gaps",
    "usage_cached_tokens",
    "usage_int",
]
