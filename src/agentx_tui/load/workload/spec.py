"""A workload file or preset → its spec (workloads/README.md): the model of its `kind` (kinds.py).

The presets are the repository's `workloads/*.yaml`, shipped as the package
`agentx_tui.load.workload.presets` (setup.py) so that an installed agentx-tui finds them; a user's
file is validated the same way. A kind's data given directly (a Mooncake `.jsonl` trace, a folder or
`.json` file of AgentX session files) needs no YAML: its spec says so (`from_data`). Every validation
problem becomes one `WorkloadError` sentence naming the file, the field and what is allowed.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, TypeAlias, get_args

from pydantic import BaseModel, ValidationError

from agentx_tui.errors import WorkloadError
from agentx_tui.load.workload.base import WorkloadBase
from agentx_tui.load.workload.distributions import DIST_HELP
from agentx_tui.load.workload.kinds import KINDS
from agentx_tui.yamlfile import YamlFileError, read_yaml

# A workload's spec, of any kind: an instance of the model its `kind` registered.
Workload: TypeAlias = WorkloadBase
_DIST_FIELDS = frozenset(
    {
        "shared_prefix_tokens", "unique_prefix_tokens", "first_message_tokens", "steps", "output_tokens",
        "tool_result_tokens", "tool_latency_s", "children", "task_tokens",
    }
)  # fmt: skip
_DIST_TAGS = frozenset({"constant", "uniform", "normal", "lognormal"})
_HINT = "See `agentx-tui workloads` and workloads/README.md."


def presets_dir() -> Path:
    return Path(str(resources.files("agentx_tui.load.workload.presets")))


def list_presets() -> list[tuple[str, str]]:
    """(name, one-line description) of every shipped preset, sorted by name."""
    out = []
    for path in sorted(presets_dir().glob("*.yaml")):
        data = read_yaml(path) or {}
        out.append((path.stem, str(data.get("description", "")).strip().splitlines()[0]))
    return out


def _section(owner: type[BaseModel], field: str) -> type[BaseModel] | None:
    """The model of `owner`'s section `field` (`stop`, `subagents`, `trace`...); None if not a section."""
    info = owner.model_fields.get(field)
    annotation = info.annotation if info is not None else None
    for candidate in (annotation, *get_args(annotation)):  # `SubAgents | None` too
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _field_sentence(source: str, kind: str, exc: ValidationError) -> str:
    err = exc.errors()[0]
    parts = [str(p) for p in err["loc"] if str(p) not in _DIST_TAGS]
    loc = ".".join(parts) or "(top level)"
    owner = KINDS[kind].spec
    if err["type"] == "extra_forbidden":
        if any(p in _DIST_FIELDS for p in parts[:-1]):
            return f"{source}: unknown key in field '{loc}'; a distribution is {DIST_HELP}."
        if len(parts) > 1:
            section = _section(owner, parts[0])
            allowed = ", ".join(section.model_fields) if section is not None else ""
            return f"{source}: unknown field '{loc}'; allowed fields here are: {allowed}."
        elsewhere = [k for k, other in KINDS.items() if k != kind and parts[-1] in other.spec.model_fields]
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
    if not isinstance(kind, str) or kind not in KINDS:
        allowed = ", ".join(f"'{k}'" for k in KINDS)
        raise WorkloadError(f"{source}: field 'kind' is {kind!r}; it must be one of {allowed}.", _HINT)
    if "output_scale" in data:  # the factor already applied (base.py): a file cannot say it was
        raise WorkloadError(
            f"{source}: field 'output_scale' is not for a workload file.", "Pass --output-scale F on the command line."
        )
    try:
        spec: Workload = KINDS[kind].spec.model_validate(data)
    except ValidationError as exc:
        raise WorkloadError(_field_sentence(source, kind, exc), _HINT) from exc
    return spec


def load_workload(name_or_path: str, *, scale: float | None = None, output_scale: float = 1.0) -> Workload:
    """A preset name, a YAML file, a Mooncake `.jsonl` trace, or AgentX agent sessions (a folder of
    `.json` files, or one); `scale` multiplies every token length (the scaling rule, base.py), and
    `output_scale` every answer's length on top of it (the output scale, base.py)."""
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
    workload = _from_data(path)
    if workload is None:
        try:
            data = read_yaml(path)
        except YamlFileError as exc:
            hint = "Check the indentation and brackets there." if "YAML" in exc.reason else "Pass a YAML workload file."
            raise WorkloadError(f"The workload file {path} is {exc.reason}.", hint) from exc
        workload = parse_workload(data, source=str(path), default_name=path.stem).relative_to(path.parent)
    if output_scale != 1.0:
        workload = workload.outputs_scaled(output_scale)
    return workload if scale is None else workload.scaled(scale)


def _from_data(path: Path) -> Workload | None:
    """The spec of the kind whose data `path` is (a trace, session files); None for a workload file."""
    for kind in KINDS.values():
        workload: Workload | None = kind.spec.from_data(path)
        if workload is not None:
            return workload
    return None
