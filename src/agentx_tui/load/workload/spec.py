"""A workload file or preset → its spec (workloads/README.md): one pydantic model per kind, chosen by `kind`.

Presets live in this package (`presets/*.yaml`) so that an installed agentx-tui finds them; a user's
file is validated the same way. A `.jsonl` file is a Mooncake trace and a folder (or a `.json` file)
holds AgentX session files, with no YAML needed. Every validation problem becomes one `WorkloadError`
sentence naming the file, the field and what is allowed.

Adding a kind: its spec model in its own module of this layer, one entry in `Workload` and `_KINDS`
below, its prepared form in `prepared.py`'s table, and its loop in load/sending/kinds/.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from agentx_tui.errors import WorkloadError
from agentx_tui.load.workload.base import NoneWorkload, StopRule, WorkloadBase
from agentx_tui.load.workload.distributions import DIST_HELP
from agentx_tui.load.workload.mooncake import TraceSpec, TraceWorkload
from agentx_tui.load.workload.session_files import SessionsSpec, SessionsWorkload
from agentx_tui.load.workload.synthetic import AgentWorkload, Arrival, SubAgents
from agentx_tui.yamlfile import YamlFileError, read_yaml

Workload = Annotated[AgentWorkload | TraceWorkload | SessionsWorkload | NoneWorkload, Field(discriminator="kind")]
_ADAPTER: TypeAdapter[Workload] = TypeAdapter(Workload)
_KINDS: dict[str, type[WorkloadBase]] = {
    "agent": AgentWorkload,
    "trace": TraceWorkload,
    "sessions": SessionsWorkload,
    "none": NoneWorkload,
}
_SECTIONS: dict[str, type[BaseModel]] = {
    "subagents": SubAgents, "arrival": Arrival, "stop": StopRule, "trace": TraceSpec, "sessions": SessionsSpec,
}  # fmt: skip
_DIST_FIELDS = frozenset(
    {
        "shared_prefix_tokens", "unique_prefix_tokens", "first_message_tokens", "steps", "output_tokens",
        "tool_result_tokens", "tool_latency_s", "children", "task_tokens",
    }
)  # fmt: skip
_DIST_TAGS = frozenset({"constant", "uniform", "normal", "lognormal"})
_HINT = "See `agentx-tui workloads` and workloads/README.md."


def presets_dir() -> Path:
    return Path(str(resources.files("agentx_tui.load.workload") / "presets"))


def list_presets() -> list[tuple[str, str]]:
    """(name, one-line description) of every shipped preset, sorted by name."""
    out = []
    for path in sorted(presets_dir().glob("*.yaml")):
        data = read_yaml(path) or {}
        out.append((path.stem, str(data.get("description", "")).strip().splitlines()[0]))
    return out


def _field_sentence(source: str, kind: str, exc: ValidationError) -> str:
    err = exc.errors()[0]
    parts = [str(p) for p in err["loc"] if str(p) not in _DIST_TAGS]
    if parts and parts[0] == kind:  # the union's tag: the kind, said separately
        parts = parts[1:]
    loc = ".".join(parts) or "(top level)"
    if err["type"] == "extra_forbidden":
        if any(p in _DIST_FIELDS for p in parts[:-1]):
            return f"{source}: unknown key in field '{loc}'; a distribution is {DIST_HELP}."
        if len(parts) > 1:
            allowed = ", ".join(_SECTIONS[parts[0]].model_fields) if parts[0] in _SECTIONS else ""
            return f"{source}: unknown field '{loc}'; allowed fields here are: {allowed}."
        owner = _KINDS[kind]
        elsewhere = [k for k, model in _KINDS.items() if k != kind and parts[-1] in model.model_fields]
        allowed = ", ".join(owner.model_fields)
        if elsewhere:
            return (
                f"{source}: field '{loc}' does not apply to a workload of kind {kind} (it is for kind "
                f"{' or '.join(elsewhere)}); allowed fields here are: {allowed}."
            )
        return f"{source}: unknown field '{loc}'; allowed fields here are: {allowed}."
    extra = f" (allowed: {DIST_HELP})" if any(p in _DIST_FIELDS for p in parts) else ""
    return f"{source}: field '{loc}' is invalid: {err['msg']}{extra}."


def parse_workload(data: Any, *, source: str, default_name: str) -> Workload:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise WorkloadError(f"{source}: a workload file must be a YAML mapping of fields, not {type(data).__name__}.")
    data = {"name": default_name, "kind": "agent", **data}
    kind = data["kind"]
    if kind not in _KINDS:
        allowed = ", ".join(f"'{k}'" for k in _KINDS)
        raise WorkloadError(f"{source}: field 'kind' is {kind!r}; it must be one of {allowed}.", _HINT)
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        raise WorkloadError(_field_sentence(source, str(kind), exc), _HINT) from exc


def load_workload(name_or_path: str, *, scale: float | None = None) -> Workload:
    """A preset name, a YAML file, a Mooncake `.jsonl` trace, or AgentX agent sessions (a folder of
    `.json` files, or one); `scale` multiplies every token length (the scaling rule, base.py)."""
    preset = presets_dir() / f"{name_or_path}.yaml"
    path = Path(name_or_path).expanduser()
    workload: Workload
    if "/" not in name_or_path and preset.is_file():
        path = preset
    elif not path.is_file() and not path.is_dir():
        names = ", ".join(name for name, _ in list_presets())
        raise WorkloadError(
            f"No workload preset or file named '{name_or_path}'; presets are: {names}.",
            "Pass a preset name, a .yaml workload file, a .jsonl trace or a folder of agent-session .json files.",
        )
    if path.is_dir() or path.suffix == ".json":
        workload = SessionsWorkload(
            name=path.name,
            description=f"replay of the agent sessions in {path}",
            kind="sessions",
            sessions=SessionsSpec(path=str(path)),
        )
    elif path.suffix == ".jsonl":
        workload = TraceWorkload(
            name=path.name, description=f"replay of trace {path}", kind="trace", trace=TraceSpec(path=str(path))
        )
    else:
        try:
            data = read_yaml(path)
        except YamlFileError as exc:
            hint = "Check the indentation and brackets there." if "YAML" in exc.reason else "Pass a YAML workload file."
            raise WorkloadError(f"The workload file {path} is {exc.reason}.", hint) from exc
        workload = parse_workload(data, source=str(path), default_name=path.stem)
        workload = _relative_to(workload, path.parent)
    return workload if scale is None else workload.scaled(scale)


def _relative_to(workload: Workload, folder: Path) -> Workload:
    """A trace or session path written in a workload file counts from the file's folder."""
    if isinstance(workload, TraceWorkload) and not Path(workload.trace.path).is_absolute():
        trace = workload.trace.model_copy(update={"path": str(folder / workload.trace.path)})
        return workload.model_copy(update={"trace": trace})
    if isinstance(workload, SessionsWorkload) and not Path(workload.sessions.path).is_absolute():
        sessions = workload.sessions.model_copy(update={"path": str(folder / workload.sessions.path)})
        return workload.model_copy(update={"sessions": sessions})
    return workload
