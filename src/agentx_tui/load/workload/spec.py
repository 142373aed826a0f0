"""The workload spec (workloads/README.md): one agent-loop shape, loaded from a preset or a user's YAML file.

Presets live in this package (`presets/*.yaml`) so that an installed agentx-tui finds them; a user's
file is validated the same way. Every validation problem becomes one `WorkloadError` sentence naming
the file, the field and what is allowed.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentx_tui.errors import WorkloadError
from agentx_tui.load.workload.distributions import DIST_HELP, Constant, Dist
from agentx_tui.yamlfile import YamlFileError, read_yaml

NONE_NAME = "none"
# The first steps a fitted workload must hold: enough for a session to grow and hit the cache.
_FIT_STEPS = 4
_FIT_MARGIN = 0.95


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SubAgents(_Spec):
    """After every `every_steps`-th step the parent spawns children that share its prefix and waits."""

    every_steps: int = Field(ge=1)
    children: Dist = Field(default_factory=lambda: Constant(value=2))
    steps: Dist = Field(default_factory=lambda: Constant(value=4))
    task_tokens: Dist = Field(default_factory=lambda: Constant(value=200))


class Arrival(_Spec):
    """`closed`: each user starts a new session when its last one ends. `poisson`: sessions arrive at
    `rate_per_s`, at most `users` at once (later arrivals wait)."""

    mode: Literal["closed", "poisson"] = "closed"
    rate_per_s: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _rate_for_poisson(self) -> Arrival:
        if self.mode == "poisson" and self.rate_per_s is None:
            raise ValueError("poisson arrival needs rate_per_s (sessions per second, > 0)")
        return self


class StopRule(_Spec):
    duration_s: float | None = Field(default=None, gt=0)
    sessions: int | None = Field(default=None, ge=1)


class TraceSpec(_Spec):
    """Replay of a Mooncake-format JSONL trace (`timestamp` ms, `input_length`, `output_length`,
    `hash_ids` of `block_tokens`-token blocks)."""

    path: str
    mode: Literal["timed", "closed"] = "timed"
    speed: float = Field(default=1.0, gt=0)
    block_tokens: int = Field(default=512, ge=1)
    skip: int = Field(default=0, ge=0)
    limit: int | None = Field(default=None, ge=1)


class SessionsSpec(_Spec):
    """Replay of AgentX agent sessions (workloads/README.md): a folder of session `.json` files, or one."""

    path: str


class Workload(_Spec):
    name: str = ""
    description: str = ""
    kind: Literal["agent", "trace", "sessions", "none"] = "agent"
    shared_prefix_tokens: Dist = Field(default_factory=lambda: Constant(value=0))
    unique_prefix_tokens: Dist = Field(default_factory=lambda: Constant(value=0))
    first_message_tokens: Dist = Field(default_factory=lambda: Constant(value=100))
    steps: Dist = Field(default_factory=lambda: Constant(value=10))
    output_tokens: Dist = Field(default_factory=lambda: Constant(value=200))
    tool_result_tokens: Dist = Field(default_factory=lambda: Constant(value=500))
    tool_latency_s: Dist = Field(default_factory=lambda: Constant(value=0))
    subagents: SubAgents | None = None
    arrival: Arrival = Field(default_factory=Arrival)
    stop: StopRule = Field(default_factory=StopRule)
    temperature: float = Field(default=0.0, ge=0)
    # `synthetic`: the history holds text of the generated length made by the driver (token-exact);
    # `echo`: the history holds the text the server streamed back.
    history: Literal["synthetic", "echo"] = "synthetic"
    # The factor already applied to every token length (trace lengths are scaled at replay time).
    scale: float = Field(default=1.0, gt=0)
    trace: TraceSpec | None = None
    sessions: SessionsSpec | None = None

    @model_validator(mode="after")
    def _replay_needs_spec(self) -> Workload:
        if self.kind == "trace" and self.trace is None:
            raise ValueError("a trace workload needs a trace section (path, mode, speed)")
        if self.kind == "sessions" and self.sessions is None:
            raise ValueError("a sessions workload needs a sessions section (path)")
        return self

    @property
    def is_none(self) -> bool:
        """Observe only: the driver sends nothing."""
        return self.kind == "none"

    def scaled(self, factor: float) -> Workload:
        """Every token length multiplied by `factor` (steps and latencies unchanged)."""
        if factor <= 0:
            raise WorkloadError(f"--scale must be a positive number, not {factor}.")
        if self.kind != "agent":
            return self.model_copy(update={"scale": self.scale * factor})
        update: dict[str, Any] = {
            key: getattr(self, key).scaled(factor)
            for key in (
                "shared_prefix_tokens",
                "unique_prefix_tokens",
                "first_message_tokens",
                "output_tokens",
                "tool_result_tokens",
            )
        }
        if self.subagents is not None:
            update["subagents"] = self.subagents.model_copy(
                update={"task_tokens": self.subagents.task_tokens.scaled(factor)}
            )
        update["scale"] = self.scale * factor
        return self.model_copy(update=update)

    def context_needed(self) -> int:
        """Tokens of context the first few steps of a session need (what `fit_to_context` fits)."""
        steps = min(self.steps.mean_value, _FIT_STEPS)
        per_step = self.output_tokens.mean_value + self.tool_result_tokens.mean_value
        opening = self.shared_prefix_tokens.upper + self.unique_prefix_tokens.upper
        opening += self.first_message_tokens.upper
        return round(opening + max(steps - 1, 0) * per_step + self.output_tokens.upper)


def presets_dir() -> Path:
    return Path(str(resources.files("agentx_tui.load.workload") / "presets"))


def list_presets() -> list[tuple[str, str]]:
    """(name, one-line description) of every shipped preset, sorted by name."""
    out = []
    for path in sorted(presets_dir().glob("*.yaml")):
        data = read_yaml(path) or {}
        out.append((path.stem, str(data.get("description", "")).strip().splitlines()[0]))
    return out


_DIST_FIELDS = frozenset(
    {
        "shared_prefix_tokens", "unique_prefix_tokens", "first_message_tokens", "steps", "output_tokens",
        "tool_result_tokens", "tool_latency_s", "children", "task_tokens",
    }
)  # fmt: skip
_DIST_TAGS = frozenset({"constant", "uniform", "normal", "lognormal"})
_SECTIONS: dict[str, type[BaseModel]] = {
    "subagents": SubAgents, "arrival": Arrival, "stop": StopRule, "trace": TraceSpec, "sessions": SessionsSpec,
}  # fmt: skip


def _field_sentence(source: str, exc: ValidationError) -> str:
    err = exc.errors()[0]
    parts = [str(p) for p in err["loc"] if str(p) not in _DIST_TAGS]
    loc = ".".join(parts) or "(top level)"
    if err["type"] == "extra_forbidden":
        owner: type[BaseModel] = _SECTIONS.get(parts[0], Workload) if len(parts) > 1 else Workload
        if any(p in _DIST_FIELDS for p in parts[:-1]):
            return f"{source}: unknown key in field '{loc}'; a distribution is {DIST_HELP}."
        allowed = ", ".join(owner.model_fields)
        return f"{source}: unknown field '{loc}'; allowed fields here are: {allowed}."
    extra = f" (allowed: {DIST_HELP})" if any(p in _DIST_FIELDS for p in parts) else ""
    return f"{source}: field '{loc}' is invalid: {err['msg']}{extra}."


def parse_workload(data: Any, *, source: str, default_name: str) -> Workload:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise WorkloadError(f"{source}: a workload file must be a YAML mapping of fields, not {type(data).__name__}.")
    data = {"name": default_name, **data}
    try:
        return Workload.model_validate(data)
    except ValidationError as exc:
        raise WorkloadError(
            _field_sentence(source, exc), "See `agentx-tui workloads` and workloads/README.md."
        ) from exc


def load_workload(name_or_path: str, *, scale: float | None = None) -> Workload:
    """A preset name, a YAML file, a Mooncake `.jsonl` trace, or AgentX agent sessions (a folder of
    `.json` files, or one); `scale` multiplies every token length."""
    preset = presets_dir() / f"{name_or_path}.yaml"
    path = Path(name_or_path).expanduser()
    if "/" not in name_or_path and preset.is_file():
        path = preset
    elif not path.is_file() and not path.is_dir():
        names = ", ".join(name for name, _ in list_presets())
        raise WorkloadError(
            f"No workload preset or file named '{name_or_path}'; presets are: {names}.",
            "Pass a preset name, a .yaml workload file, a .jsonl trace or a folder of agent-session .json files.",
        )
    if path.is_dir() or path.suffix == ".json":
        workload = Workload(
            name=path.name,
            description=f"replay of the agent sessions in {path}",
            kind="sessions",
            sessions=SessionsSpec(path=str(path)),
        )
    elif path.suffix == ".jsonl":
        workload = Workload(
            name=path.name,
            description=f"replay of trace {path}",
            kind="trace",
            trace=TraceSpec(path=str(path)),
        )
    else:
        try:
            data = read_yaml(path)
        except YamlFileError as exc:
            hint = "Check the indentation and brackets there." if "YAML" in exc.reason else "Pass a YAML workload file."
            raise WorkloadError(f"The workload file {path} is {exc.reason}.", hint) from exc
        workload = parse_workload(data, source=str(path), default_name=path.stem)
        if workload.trace is not None and not Path(workload.trace.path).is_absolute():
            trace = workload.trace.model_copy(update={"path": str(path.parent / workload.trace.path)})
            workload = workload.model_copy(update={"trace": trace})
    return workload if scale is None else workload.scaled(scale)


def fit_to_context(
    workload: Workload, max_model_len: int | None, *, needed: int | None = None
) -> tuple[Workload, str | None]:
    """Scale `workload` down when its first steps (`needed` tokens; by default its own estimate)
    cannot fit `max_model_len`; the note says so."""
    if max_model_len is None or workload.kind == "none":
        return workload, None
    if needed is None:
        needed = workload.context_needed()
    budget = max_model_len * _FIT_MARGIN
    if needed <= budget:
        return workload, None
    factor = round(budget / needed, 4)
    note = (
        f"Workload '{workload.name}' needs about {needed} tokens of context; scaled every token length "
        f"by {factor:g} to fit the model's {max_model_len}-token context (pass --scale to choose)."
    )
    return workload.scaled(factor), note


def check_first_request_fits(workload: Workload, max_model_len: int, scale: float | None) -> None:
    """Refuse, before any load is sent, a workload whose sessions could never send a request: the
    driver would otherwise end every session at step 0 and the run would measure nothing."""
    if workload.kind != "agent":
        return  # a trace skips (and counts) the requests that do not fit; the rest still run
    shared = workload.shared_prefix_tokens.mean_value
    first = (
        shared
        + workload.unique_prefix_tokens.mean_value
        + workload.first_message_tokens.mean_value
        + workload.output_tokens.mean_value
    )
    if first < max_model_len:
        return
    at = f" at --scale {scale:g}" if scale is not None else ""
    what = (
        f"a shared prefix of about {shared:.0f} tokens"
        if shared >= max_model_len
        else f"a first request of about {first:.0f} tokens"
    )
    raise WorkloadError(
        f"Workload '{workload.name}' has {what}{at}, more than the model's context of {max_model_len} tokens.",
        "Lower --scale, or leave it out to scale the workload to fit.",
    )
