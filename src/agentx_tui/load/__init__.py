"""The load side (workloads/README.md): workload specs and presets, the load loops, the load generators.

Public:
    prepare_workload, PreparedWorkload              — a workload and its data, loaded once
    load_workload, list_presets, Workload           — workload files and presets
    fit_to_context, check_first_request_fits        — scale to the context; refuse what cannot fit
    Driver, IdStride                                — simulated users against servers (one process)
    LoadGenerator, LoadSample, LocalLoad            — the run's view of its load, in this process
    ClientStats, Completed, LogHistogram            — client-side figures, mergeable exactly
    RequestRecord                                   — one request as the driver saw it
    WORKLOADS_DIR                                   — where the shipped presets live
"""

from agentx_tui.load.sending.driver import Driver, IdStride
from agentx_tui.load.sending.sse import RequestRecord
from agentx_tui.load.spreading.generator import LoadGenerator, LoadSample, LocalLoad
from agentx_tui.load.stats import ClientStats, Completed, LogHistogram
from agentx_tui.load.workload.prepared import PreparedWorkload, prepare_workload
from agentx_tui.load.workload.spec import (
    Workload,
    check_first_request_fits,
    fit_to_context,
    list_presets,
    load_workload,
    presets_dir,
)

WORKLOADS_DIR = presets_dir()

__all__ = [
    "WORKLOADS_DIR",
    "ClientStats",
    "Completed",
    "Driver",
    "IdStride",
    "LoadGenerator",
    "LoadSample",
    "LocalLoad",
    "LogHistogram",
    "PreparedWorkload",
    "RequestRecord",
    "Workload",
    "check_first_request_fits",
    "fit_to_context",
    "list_presets",
    "load_workload",
    "prepare_workload",
]
