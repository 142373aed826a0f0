"""The load side (workloads/README.md, docs/architecture.md), in three layers:

    workload/    what is sent: workload specs and the data they replay, prompt text (no asyncio)
    sending/     one process sending: the driver, its users, one loop per workload kind, the SSE client
    spreading/   load spread over processes or Ray actors, merged into one `ClientStats`

What it measures it measures with agentx_tui.measure (the figures, the SSE scan, the records).

Public:
    prepare_workload, prepare, PreparedWorkload     a workload and its data, loaded once
    load_workload, list_presets, Workload           workload files and presets
    load_session_set                                AgentX session files (a folder, a file, a corpus), whole
    survey_sessions                                 every session of them checked, only figures kept
    fit_to_context, fit_to_servers                  scale to the servers' context; refuse what cannot fit
    Driver, LoadSettings, IdStride, DEFAULT_USERS   simulated users against servers (one process)
    LoadGenerator, LoadSample, LocalLoad, WorkerPool, workers_for
                                                    the run's view of its load, here or in workers
    WorkerLoss                                      a load worker that died mid-run
    HealthProbe, HealthBook                         a process's health; the client's over the run
    WorkerHandle, WorkerSpec, ray_actors            a worker as the pool sees it; Ray actors (extra `ray`)
    WORKLOADS_DIR                                   where the shipped presets live
"""

from agentx_tui.load.sending import DEFAULT_USERS, Driver, HealthProbe, IdStride, LoadSettings
from agentx_tui.load.spreading import ray_actors
from agentx_tui.load.spreading.client_health import HealthBook
from agentx_tui.load.spreading.generator import LoadGenerator, LoadSample, WorkerLoss
from agentx_tui.load.spreading.local import LocalLoad
from agentx_tui.load.spreading.pool import USERS_PER_WORKER, WorkerPool, workers_for
from agentx_tui.load.spreading.protocol import WorkerHandle, WorkerSpec
from agentx_tui.load.workload import (
    PreparedWorkload,
    Workload,
    fit_to_context,
    fit_to_servers,
    list_presets,
    load_workload,
    prepare,
    prepare_workload,
    presets_dir,
)
from agentx_tui.load.workload.sessions import load_session_set, survey_sessions

WORKLOADS_DIR = presets_dir()

__all__ = [
    "DEFAULT_USERS",
    "USERS_PER_WORKER",
    "WORKLOADS_DIR",
    "Driver",
    "HealthBook",
    "HealthProbe",
    "IdStride",
    "LoadGenerator",
    "LoadSample",
    "LoadSettings",
    "LocalLoad",
    "PreparedWorkload",
    "WorkerHandle",
    "WorkerLoss",
    "WorkerPool",
    "WorkerSpec",
    "Workload",
    "fit_to_context",
    "fit_to_servers",
    "list_presets",
    "load_session_set",
    "load_workload",
    "prepare",
    "prepare_workload",
    "ray_actors",
    "survey_sessions",
    "workers_for",
]
