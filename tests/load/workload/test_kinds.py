"""The workload kinds' registry: each `kind:` name (a contract, workloads/README.md) names one module
holding its spec and its prepared form, and a kind's data given directly is read by its own spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentx_tui.load import load_workload, prepare
from agentx_tui.load.workload.agent import AgentSpec, PreparedAgent
from agentx_tui.load.workload.kinds import KINDS
from agentx_tui.load.workload.none import NoneSpec, PreparedNone
from agentx_tui.load.workload.sessions import SessionsSpec
from agentx_tui.load.workload.trace import TraceSpec


def test_the_kinds_are_the_contracts_names() -> None:
    assert set(KINDS) == {"agent", "trace", "sessions", "none"}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_kind_has_one_name_for_its_module_and_spec(name: str) -> None:
    kind = KINDS[name]
    assert kind.name == name
    assert kind.spec.__module__ == f"agentx_tui.load.workload.{name}"
    assert kind.spec.__name__ == f"{name.capitalize()}Spec"


def test_prepare_uses_the_specs_kind() -> None:
    assert isinstance(prepare(load_workload("chat")), PreparedAgent)
    assert isinstance(prepare(load_workload("none")), PreparedNone)


def test_a_kinds_data_given_directly_needs_no_workload_file(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [1]}\n')
    (tmp_path / "sessions").mkdir()
    one = tmp_path / "one.json"
    one.write_text("{}")
    assert isinstance(load_workload(str(trace)), TraceSpec)
    assert isinstance(load_workload(str(tmp_path / "sessions")), SessionsSpec)
    assert isinstance(load_workload(str(one)), SessionsSpec)
    yaml = tmp_path / "w.yaml"
    yaml.write_text("kind: none\n")
    assert isinstance(load_workload(str(yaml)), NoneSpec)
    assert AgentSpec.from_data(trace) is None


def test_data_paths_in_a_workload_file_count_from_its_folder(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text("kind: trace\ntrace: {path: t.jsonl}\n")
    (tmp_path / "s.yaml").write_text("kind: sessions\nsessions: {path: /abs/sessions}\n")
    trace = load_workload(str(tmp_path / "w.yaml"))
    sessions = load_workload(str(tmp_path / "s.yaml"))
    assert isinstance(trace, TraceSpec) and trace.trace.path == str(tmp_path / "t.jsonl")
    assert isinstance(sessions, SessionsSpec) and sessions.sessions.path == "/abs/sessions"
