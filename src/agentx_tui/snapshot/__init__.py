"""The one immutable `Snapshot` per tick that every consumer sees, and what is read off it.

model        the Snapshot and the figures it carries (JSON-round-trippable: the recording format)
rates        which rates a tick shows: the client's when it sends load, else the servers'
stat         running means and maxima over ticks (the report's and a sweep point's `_mean`/`_max`)
bottleneck   whether the simulated engine, not the modelled GPU, limited a tick's figures

Everything that produces figures (telemetry, load, cost, sweep) and everything that consumes them
(ui, report, recording) imports this package; it imports nothing of theirs.
"""

from agentx_tui.snapshot.model import (
    CHILD_ID_BASE,
    SCHEMA_VERSION,
    USERS_SHOWN,
    ClientFigures,
    ClientHealth,
    ClientTotals,
    CostFigures,
    EndpointFigures,
    EndpointTotals,
    EngineFigures,
    Flavor,
    FrontierAxis,
    GpuFigures,
    GpuState,
    Percentiles,
    PointFigures,
    ProxyState,
    RunInfo,
    RunIntervals,
    RunState,
    Snapshot,
    StepRow,
    SweepPhase,
    SweepState,
    TaskFigures,
    TierRead,
    UserRow,
    UserState,
)

__all__ = [
    "CHILD_ID_BASE",
    "SCHEMA_VERSION",
    "USERS_SHOWN",
    "ClientFigures",
    "ClientHealth",
    "ClientTotals",
    "CostFigures",
    "EndpointFigures",
    "EndpointTotals",
    "EngineFigures",
    "Flavor",
    "FrontierAxis",
    "GpuFigures",
    "GpuState",
    "Percentiles",
    "PointFigures",
    "ProxyState",
    "RunInfo",
    "RunIntervals",
    "RunState",
    "Snapshot",
    "StepRow",
    "SweepPhase",
    "SweepState",
    "TaskFigures",
    "TierRead",
    "UserRow",
    "UserState",
]
