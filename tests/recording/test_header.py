"""The recording header: no field for a credential, older files of format 1 read, newer fields ignored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentx_tui.recording import RecordingHeader
from tests.recording._header import a_header

LAST_RELEASE = Path(__file__).parent / "data" / "stop31.jsonl"
# Field names that would hold a credential (the recorder used to drop keys named so).
CREDENTIAL_WORDS = ("key", "token", "authorization", "password", "secret", "bearer", "header_value", "headers")


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for argument in getattr(annotation, "__args__", ()):  # `X | None`, `tuple[X, ...]`
        yield from _models_in(argument)


def _field_names(model: type[BaseModel]) -> set[str]:
    """Every field name of `model` and of the models its fields hold, as `Model.field`."""
    names: set[str] = set()
    for name, field in model.model_fields.items():
        names.add(f"{model.__name__}.{name}")
        for inner in _models_in(field.annotation):
            names |= _field_names(inner)
    return names


def _last_release_header() -> dict[str, Any]:
    header: dict[str, Any] = json.loads(LAST_RELEASE.read_text(encoding="utf-8").splitlines()[0])
    return header


def test_no_field_is_named_like_a_credential() -> None:
    names = _field_names(RecordingHeader)
    assert {"RecordingHeader.settings", "RecordedSettings.proxy", "RecordedProxy.session_header"} <= names
    assert {"RecordedEndpoint.url", "RecordedSweep.tiers"} <= names
    assert sorted(n for n in names if any(word in n.split(".")[1] for word in CREDENTIAL_WORDS)) == []


def test_a_header_reads_back_as_written() -> None:
    header = a_header()
    assert RecordingHeader.model_validate_json(header.model_dump_json()) == header


def test_a_header_of_format_1_without_the_later_fields_reads_with_what_the_tool_then_did() -> None:
    data = _last_release_header()
    for later in ("output_scale", "proxy", "precision", "frontier_axis"):
        del data["settings"][later]
    settings = RecordingHeader.model_validate(data).settings
    assert (settings.output_scale, settings.proxy, settings.precision) == (1.0, None, None)
    assert settings.frontier_axis == "decode_interactivity"


def test_a_field_this_version_does_not_know_is_ignored() -> None:
    data = _last_release_header()
    data["settings"]["kv_offload_gib"] = 64
    data["written_by"] = "a later agentx-tui"
    assert RecordingHeader.model_validate(data) == RecordingHeader.model_validate(_last_release_header())
