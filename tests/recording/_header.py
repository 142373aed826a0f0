"""A recording header as a run on an attached server writes it, for the tests that record."""

from __future__ import annotations

from agentx_tui.recording import RecordedEndpoint, RecordedSettings, RecordingHeader

URL = "http://10.0.0.1:8000"


def a_header(*, attach: tuple[str, ...] = (URL,), vllm_args: tuple[str, ...] = ()) -> RecordingHeader:
    settings = RecordedSettings(
        target="attach",
        attach=attach,
        serve=None,
        vllm_args=vllm_args,
        sim_profile="",
        prometheus=None,
        workload="chat",
        users=2,
        scale=None,
        seed=0,
        sessions=None,
        max_think_s=None,
        workers=1,
        duration_s=None,
        sweep=None,
        gpu_price=None,
        cost_profile=None,
        gpus=None,
        interval_s=1.0,
    )
    return RecordingHeader.now(
        target=f"attach {URL}",
        simulated=False,
        workload="chat",
        endpoints=(RecordedEndpoint(url=URL, model="m"),),
        settings=settings,
    )
