"""A workload made ready to run: its spec plus the data it replays, loaded once (docs/architecture.md).

`prepare_workload` reads a preset, a YAML file or a Mooncake trace; every problem is a `WorkloadError`
before any server starts. After the target is known, `fitted` scales a preset (or a trace) down to
the model's context when the user did not choose a `--scale`, and `check_fits` refuses a workload
whose first request can never fit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agentx_tui.load.trace import TraceRequest, load_trace
from agentx_tui.load.workload import Workload, check_first_request_fits, fit_to_context, load_workload


@dataclass(frozen=True)
class PreparedWorkload:
    spec: Workload
    trace: tuple[TraceRequest, ...] | None = None  # a Mooncake trace's requests

    @property
    def name(self) -> str:
        return self.spec.name

    def context_needed(self) -> int:
        """Tokens of context the workload's first steps need, at its current scale."""
        if self.trace is not None:
            # The 95th percentile of input + output: a few long outliers are skipped, not fitted.
            sizes = sorted(r.input_length + r.output_length for r in self.trace)
            return round(sizes[min(len(sizes) - 1, int(0.95 * len(sizes)))] * self.spec.scale)
        return self.spec.context_needed()

    def fitted(self, max_model_len: int | None) -> tuple[PreparedWorkload, str | None]:
        """Scaled down to fit `max_model_len` when it does not; the note says so."""
        spec, note = fit_to_context(self.spec, max_model_len, needed=self.context_needed())
        return replace(self, spec=spec), note

    def check_fits(self, max_model_len: int, scale: float | None) -> None:
        check_first_request_fits(self.spec, max_model_len, scale)


def prepare_workload(name_or_path: str, *, scale: float | None = None) -> PreparedWorkload:
    """A preset name, a YAML file or a Mooncake `.jsonl` trace, with the data it replays."""
    return prepared(load_workload(name_or_path, scale=scale))


def prepared(spec: Workload) -> PreparedWorkload:
    """`spec` with the data it replays loaded (a trace's requests)."""
    if spec.kind == "trace" and spec.trace is not None:
        return PreparedWorkload(spec, trace=load_trace(spec.trace.path, spec.trace.skip, spec.trace.limit))
    return PreparedWorkload(spec)
