"""`-w hf:REPO[@REV]`: the corpus pulled (or found in the cache) in pre-flight, then prepared as a workload
of agent sessions named after the dataset and its commit, before any server starts."""

from __future__ import annotations

import pytest

from agentx_tui.cli import main, parse_args
from agentx_tui.corpus import HubUnreachableError
from agentx_tui.run import build_plan
from tests.corpus.corpus import REPO, SESSION_IDS, corpus_files
from tests.corpus.hub import FixtureHub


def test_a_hub_workload_is_pulled_and_prepared_as_sessions(hub: FixtureHub, capsys: pytest.CaptureFixture[str]) -> None:
    commit = hub.publish(REPO, corpus_files(), lfs=("traces.jsonl",))
    plan = build_plan(parse_args(["-w", f"hf:{REPO}", "--scale", "0.5", "--headless", "--duration", "5"]))
    workload = plan.load.workload
    assert workload.name == f"hf:{REPO}@{commit[:7]}" and workload.spec.kind == "sessions"
    assert workload.sessions is not None and workload.sessions.scale == 0.5
    assert [t.session_id for t in workload.sessions.trees] == list(SESSION_IDS)
    assert capsys.readouterr().err == ""  # online: nothing to say


def test_a_hub_workload_offline_comes_from_the_cache_and_says_so(
    hub: FixtureHub, capsys: pytest.CaptureFixture[str]
) -> None:
    commit = hub.publish(REPO, corpus_files())
    build_plan(parse_args(["-w", f"hf:{REPO}@main"]))
    hub.stop()
    plan = build_plan(parse_args(["-w", f"hf:{REPO}@main"]))
    assert plan.load.workload.name == f"hf:{REPO}@{commit[:7]}"
    assert capsys.readouterr().err.startswith(f"offline: the Hugging Face hub at {hub.endpoint} could not be reached")


def test_a_hub_workload_with_no_hub_and_no_cache_stops_the_run_before_it_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(HubUnreachableError):
        build_plan(parse_args(["-w", f"hf:{REPO}"]))
    assert main(["-w", f"hf:{REPO}", "--headless", "--duration", "1"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: The Hugging Face hub at ") and "Traceback" not in err


def test_a_bad_hub_workload_name_is_a_usage_error() -> None:
    assert main(["-w", "hf:no-owner", "--headless", "--duration", "1"]) == 2
