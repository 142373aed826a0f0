"""The one immutable `Snapshot` per tick that every consumer sees, and what is read off it.

model        the Snapshot and the figures it carries (JSON-round-trippable: the recording format)
buckets      a server histogram's quantile (Prometheus `histogram_quantile`)
cache        the servers' cache figures over a stretch of time, from their totals' increase
servertime   where a request's time went on the server and how its speculative decoding did, over a
             stretch of time (one rule for a rate window, the run, an endpoint's row, a sweep point)
figures      every figure the tool reports, declared once (`Figures`: the report's vocabulary over a
             window; a sweep point's `PointFigures`)
figureset    how a figure is declared (`figure`, `declared` reads them back) and written (`FigureSet`)
rows         the rows a set of figures lists (users, steps, endpoints, task-time bars, lost load workers),
             the frontier axis
legacy       recordings of earlier versions, read as this one
rates        which rates a tick shows: the client's when it sends load, else the servers'
stat         running means and maxima over ticks (the report's and a sweep point's `_mean`/`_max`)
price        the one price rule: USD per hour, tokens per dollar, USD per 1M tokens and per task
bottleneck   whether the simulated engine, not the modelled GPU, limited a tick's figures
agentx       whether the run meets AgentX's rules, rule by rule, and the verdict in words
limits       how close to the limit: the roofline (MFU, MBU, the bound) and energy (J/token, agents per MW)
split        where the North Star's time went, as one bar: first token (queue, prefill, outside), decode, stalls

Everything that produces figures (telemetry, load, cost, sweep) and everything that consumes them
(ui, report, recording) imports this package; it imports nothing of theirs.
"""

from agentx_tui.snapshot.agentx import AgentXRule, AgentXVerdict, RuleState, validity_words
from agentx_tui.snapshot.buckets import histogram_quantile
from agentx_tui.snapshot.cache import cache_figures, prompt_shares, totals_since
from agentx_tui.snapshot.figures import Figures, PointFigures, RunIntervals, TierRead
from agentx_tui.snapshot.figureset import (
    AGENTS_GROUP,
    CACHE_CLIENT,
    CACHE_SERVERS,
    CI_SUFFIXES,
    COUNT,
    FRACTION,
    GATE,
    POINTS_SPEED,
    POINTS_USE,
    SECONDS,
    SHOW,
    SUMMARY_TABLE,
    TIME_SPLIT,
    TOKENS,
    TOKENS_PER_S_PER_USER,
    USD,
    Figure,
    FigureSet,
    Place,
    Span,
    declared,
    figure,
    shown,
)
from agentx_tui.snapshot.model import (
    CHILD_ID_BASE,
    SCHEMA_VERSION,
    USERS_SHOWN,
    BucketCounts,
    ClientHealth,
    ClientReading,
    ClientTotals,
    CostReading,
    EndpointReading,
    EndpointTotals,
    EnergyFrom,
    EngineReading,
    Flavor,
    GpuPeak,
    GpuReading,
    GpuState,
    LimitsReading,
    Percentiles,
    ProxyState,
    RunInfo,
    RunState,
    Snapshot,
    SweepPhase,
    SweepState,
    TaskReading,
)
from agentx_tui.snapshot.price import NO_GPUS, NO_PRICE, Pricing, pricing, usd_per_task
from agentx_tui.snapshot.rows import (
    IDLE_BUCKETS_S,
    EndpointRow,
    FrontierAxis,
    ProbeRow,
    RetentionRow,
    RooflineBound,
    StepRow,
    TaskTimeBar,
    UserRow,
    UserState,
    WorkerLossRow,
    idle_bucket,
    idle_place,
    lost_users_reason,
    lost_worker_words,
    restarted_worker_words,
)
from agentx_tui.snapshot.servertime import (
    SERVER_TIME_KEYS,
    acceptance_vs_golden,
    server_time_figures,
    totals_server_time,
    ttft_outside_server,
)
from agentx_tui.snapshot.split import TailSplit, tail_split

__all__ = [
    "AGENTS_GROUP",
    "CACHE_CLIENT",
    "CACHE_SERVERS",
    "CHILD_ID_BASE",
    "CI_SUFFIXES",
    "COUNT",
    "FRACTION",
    "GATE",
    "IDLE_BUCKETS_S",
    "NO_GPUS",
    "NO_PRICE",
    "POINTS_SPEED",
    "POINTS_USE",
    "SCHEMA_VERSION",
    "SECONDS",
    "SERVER_TIME_KEYS",
    "SHOW",
    "SUMMARY_TABLE",
    "TIME_SPLIT",
    "TOKENS",
    "TOKENS_PER_S_PER_USER",
    "USD",
    "USERS_SHOWN",
    "AgentXRule",
    "AgentXVerdict",
    "BucketCounts",
    "ClientHealth",
    "ClientReading",
    "ClientTotals",
    "CostReading",
    "EndpointReading",
    "EndpointRow",
    "EndpointTotals",
    "EnergyFrom",
    "EngineReading",
    "Figure",
    "FigureSet",
    "Figures",
    "Flavor",
    "FrontierAxis",
    "GpuPeak",
    "GpuReading",
    "GpuState",
    "LimitsReading",
    "Percentiles",
    "Place",
    "PointFigures",
    "Pricing",
    "ProbeRow",
    "ProxyState",
    "RetentionRow",
    "RooflineBound",
    "RuleState",
    "RunInfo",
    "RunIntervals",
    "RunState",
    "Snapshot",
    "Span",
    "StepRow",
    "SweepPhase",
    "SweepState",
    "TailSplit",
    "TaskReading",
    "TaskTimeBar",
    "TierRead",
    "UserRow",
    "UserState",
    "WorkerLossRow",
    "acceptance_vs_golden",
    "cache_figures",
    "declared",
    "figure",
    "histogram_quantile",
    "idle_bucket",
    "idle_place",
    "lost_users_reason",
    "lost_worker_words",
    "pricing",
    "prompt_shares",
    "restarted_worker_words",
    "server_time_figures",
    "shown",
    "tail_split",
    "totals_server_time",
    "totals_since",
    "ttft_outside_server",
    "usd_per_task",
    "validity_words",
]
