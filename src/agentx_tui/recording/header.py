"""A recording's first line, typed once: what was recorded (`RecordingHeader`), written by the recorder
and read back by the reader.

No field holds a credential: the run's settings are kept without the API key, the Prometheus token or
header values (a test checks the field names), and the recorder masks every secret it is given in every
line besides (an attach URL may carry user-info, a vLLM argument a key).

Every file of format 1 reads: a field added after the first such files has a default, the value the
tool had before it was added; a field this version does not know is ignored.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, ConfigDict

from agentx_tui import __version__
from agentx_tui.snapshot import SCHEMA_VERSION, FrontierAxis

RECORDING_FORMAT = 1  # the header's `agentx_recording`: a reader refuses a newer one


class _Recorded(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class RecordedEndpoint(_Recorded):
    """A server the run sent load to (or scraped), as probed when it started."""

    url: str
    model: str | None = None
    engine_version: str | None = None


class RecordedSweep(_Recorded):
    users: tuple[int, ...] | Literal["auto", "tiers"]
    warmup_s: float
    point_duration_s: float
    tiers: tuple[float, ...]


class RecordedProxy(_Recorded):
    listen: str  # HOST:PORT as asked (port 0: a free one)
    capture_dir: str | None = None
    session_header: str
    session_idle_s: float


class RecordedSettings(_Recorded):
    """The run's plan, as the command line set it (run/plan.py), credentials left out."""

    target: str  # attach, serve, sim or prometheus
    attach: tuple[str, ...]
    serve: str | None
    vllm_args: tuple[str, ...]
    sim_profile: str  # empty unless the target is the simulator
    prometheus: str | None
    workload: str
    users: int  # at the start
    scale: float | None
    output_scale: float = 1.0
    seed: int
    sessions: int | None
    max_think_s: float | None
    workers: int
    duration_s: float | None
    sweep: RecordedSweep | None
    proxy: RecordedProxy | None = None
    precision: float | None = None
    frontier_axis: FrontierAxis = "decode_interactivity"  # the frontier's only axis before there were two
    gpu_price: float | None
    cost_profile: str | None
    gpus: int | None
    gpu_peak: tuple[float, float] | None = None  # --gpu-peak (TFLOP/s, TB/s); absent before it existed
    spec_golden: float | None = None  # --spec-golden; absent before it existed
    interval_s: float


class RecordingHeader(_Recorded):
    agentx_recording: int  # the format, RECORDING_FORMAT when written
    version: str  # agentx-tui's
    schema_version: int  # the Snapshot's, of every line after this one
    created_at: float  # Unix time
    target: str  # as the dashboard's header says it, e.g. "simulated h200/llama-3.1-8b"
    simulated: bool
    workload: str
    endpoints: tuple[RecordedEndpoint, ...]
    settings: RecordedSettings

    @classmethod
    def now(
        cls,
        *,
        target: str,
        simulated: bool,
        workload: str,
        endpoints: tuple[RecordedEndpoint, ...],
        settings: RecordedSettings,
    ) -> RecordingHeader:
        """The header of a recording started now, by this agentx-tui."""
        return cls(
            agentx_recording=RECORDING_FORMAT,
            version=__version__,
            schema_version=SCHEMA_VERSION,
            created_at=time.time(),
            target=target,
            simulated=simulated,
            workload=workload,
            endpoints=endpoints,
            settings=settings,
        )
