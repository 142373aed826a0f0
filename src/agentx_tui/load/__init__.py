"""The load side (DESIGN §2, §7): workload specs and presets, and the agent-loop load driver.

Public:
    load_workload, list_presets, fit_to_context, Workload   — workload files, presets and scaling
    check_first_request_fits                                 — refuse a workload the context can't hold
    Driver, EndpointTarget                                   — simulated users against endpoints
    RequestRecord                                            — one request as the driver saw it
    WORKLOADS_DIR                                            — where the shipped presets live
"""

from agentx_tui.load.client import RequestRecord
from agentx_tui.load.core import EndpointTarget
from agentx_tui.load.driver import Driver
from agentx_tui.load.workload import (
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
    "Driver",
    "EndpointTarget",
    "RequestRecord",
    "Workload",
    "check_first_request_fits",
    "fit_to_context",
    "list_presets",
    "load_workload",
]
