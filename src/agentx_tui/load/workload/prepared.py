"""A workload made ready to run: its spec plus the data it replays, loaded once (docs/architecture.md).

`prepare_workload` reads a preset, a YAML file or a Mooncake trace; every problem is a `WorkloadError`
before any server starts. After the target is known, `fitted` scales a preset (or a trace) down to
the model's context when the user did not choose a `--scale`, and `check_fits` refuses a workload
whose first request can never fit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from agentx_tui.load.workload.mooncake import TraceRequest, load_trace
from agentx_tui.load.workload.session_files import SessionSet, load_session_set
from agentx_tui.load.workload.spec import Workload, check_first_request_fits, fit_to_context, load_workload


@dataclass(frozen=True)
class PreparedWorkload:
    spec: Workload
    trace: tuple[TraceRequest, ...] | None = None  # a Mooncake trace's requests
    sessions: SessionSet | None = None  # AgentX agent sessions, at the spec's scale

    @property
    def name(self) -> str:
        return self.spec.name

    def context_needed(self) -> int:
        """Tokens of context the workload's first steps need, at its current scale."""
        # A replay fits its 95th percentile: a few long outliers are skipped (and counted), not fitted,
        # or one 450 K-token session would shrink all the others a hundredfold.
        if self.trace is not None:
            return round(_p95([r.input_length + r.output_length for r in self.trace]) * self.spec.scale)
        if self.sessions is not None:  # over calls, not sessions: two 450 K-token files are outliers
            return _p95([c.input_tokens + c.output_tokens for t in self.sessions.trees for c in t.all_calls()])
        return self.spec.context_needed()

    def fitted(self, max_model_len: int | None) -> tuple[PreparedWorkload, str | None]:
        """Scaled down to fit `max_model_len` when it does not; the note says so."""
        spec, note = fit_to_context(self.spec, max_model_len, needed=self.context_needed())
        if spec is self.spec:
            return self, None
        sessions = self.sessions.with_scale(spec.scale) if self.sessions is not None else None
        return replace(self, spec=spec, sessions=sessions), note

    def check_fits(self, max_model_len: int, scale: float | None) -> None:
        check_first_request_fits(self.spec, max_model_len, scale)


def prepare_workload(name_or_path: str, *, scale: float | None = None) -> PreparedWorkload:
    """A preset name, a YAML file or a Mooncake `.jsonl` trace, with the data it replays."""
    return prepared(load_workload(name_or_path, scale=scale))


def prepared(spec: Workload) -> PreparedWorkload:
    """`spec` with the data it replays loaded (a trace's requests)."""
    if spec.kind == "trace" and spec.trace is not None:
        return PreparedWorkload(spec, trace=load_trace(spec.trace.path, spec.trace.skip, spec.trace.limit))
    if spec.kind == "sessions" and spec.sessions is not None:
        return PreparedWorkload(spec, sessions=load_session_set(Path(spec.sessions.path), scale=spec.scale))
    return PreparedWorkload(spec)


def _p95(sizes: list[int]) -> int:
    ordered = sorted(sizes)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
