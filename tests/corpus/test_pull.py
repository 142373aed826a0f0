"""`agentx-tui sessions pull` against the fixture hub: the folder printed, its sessions loadable; a second
pull from the cache with the hub gone (and said so); a pinned commit never asked for again; one sentence
and exit 3 with no hub and no cache; one sentence and exit 2 for a name the hub does not know or a corpus
file the replay cannot read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentx_tui.cli import main
from agentx_tui.load.workload.sessions import load_session_set
from tests.corpus.conftest import closed_endpoint
from tests.corpus.corpus import REPO, SESSION_IDS, corpus_files, plain, traces, with_sub_agent
from tests.corpus.hub import FixtureHub


def pull(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["sessions", "pull", *args])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_pull_prints_the_folder_and_its_files_load_as_sessions(
    hub: FixtureHub, hub_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit = hub.publish(REPO, corpus_files(), lfs=("traces.jsonl",))  # the big file through a CDN redirect
    code, out, err = pull(capsys, REPO)
    assert code == 0
    folder = Path(out.strip())
    assert out.count("\n") == 1 and folder.name == commit and folder.is_relative_to(hub_env)
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == sorted(corpus_files())
    assert f"{REPO}@{commit}: 4 file(s)" in err and "3 agent session(s)" in err and "1 sub-agent(s)" in err
    sessions = load_session_set(folder)
    assert [t.session_id for t in sessions.trees] == list(SESSION_IDS)
    assert [c.t for c in sessions.trees[0].subagents[0].calls] == pytest.approx([0.1, 2.0])  # from its spawn


def test_a_dataset_url_names_the_same_corpus(hub: FixtureHub, capsys: pytest.CaptureFixture[str]) -> None:
    commit = hub.publish(REPO, corpus_files())
    hub.publish(REPO, corpus_files(traces(plain())), branch="v2")
    code, out, _ = pull(capsys, f"https://huggingface.co/datasets/{REPO}")
    assert code == 0 and Path(out.strip()).name == commit
    code, out, err = pull(capsys, f"https://huggingface.co/datasets/{REPO}/tree/v2")
    assert code == 0 and Path(out.strip()).name != commit and "1 agent session(s)" in err


def test_a_second_pull_with_the_hub_stopped_uses_the_cache_and_says_so(
    hub: FixtureHub, capsys: pytest.CaptureFixture[str]
) -> None:
    hub.publish(REPO, corpus_files())
    code, first, _ = pull(capsys, REPO)
    assert code == 0
    hub.stop()
    code, again, err = pull(capsys, REPO)
    assert code == 0 and again == first
    offline = [line for line in err.splitlines() if line.startswith("offline:")]
    assert offline == [
        f"offline: the Hugging Face hub at {hub.endpoint} could not be reached (ConnectError); "
        f"using the cached copy of {REPO} (commit {Path(first.strip()).name[:7]})"
    ]


def test_a_pinned_commit_is_served_from_the_cache_without_asking_the_hub(
    hub: FixtureHub, capsys: pytest.CaptureFixture[str]
) -> None:
    commit = hub.publish(REPO, corpus_files())
    code, first, _ = pull(capsys, f"{REPO}@{commit}")
    asked = len(hub.requests)
    assert code == 0 and asked > 0
    code, again, err = pull(capsys, f"{REPO}@{commit}")
    assert code == 0 and again == first and len(hub.requests) == asked
    assert "offline" not in err


def test_offline_mode_uses_the_cache_without_asking_the_hub(
    hub: FixtureHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hub.publish(REPO, corpus_files())
    assert pull(capsys, REPO)[0] == 0
    asked = len(hub.requests)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, _, err = pull(capsys, REPO)
    assert code == 0 and len(hub.requests) == asked
    assert "offline: HF_HUB_OFFLINE is set; using the cached copy" in err


def test_no_hub_and_an_empty_cache_is_one_sentence_and_exit_3(
    hub_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = pull(capsys, REPO)
    assert code == 3 and out == ""
    line = one_error_line(err)
    endpoint = os.environ["HF_ENDPOINT"]
    assert line.startswith(
        f"error: The Hugging Face hub at {endpoint} could not be reached (ConnectError) and no complete copy of "
        f"{REPO} is cached in {hub_env / 'hub'}. "
    )


def test_offline_mode_and_an_empty_cache_is_one_sentence_and_exit_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, _, err = pull(capsys, f"{REPO}@main")
    assert code == 3
    assert one_error_line(err).startswith(f"error: HF_HUB_OFFLINE is set and no complete copy of {REPO}@main is cached")


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("semianalysisai/cc-traces-weka-nope", "There is no dataset semianalysisai/cc-traces-weka-nope on the Hugging"),
        (f"{REPO}@v9", f"The dataset {REPO} on the Hugging Face hub at "),
        (f"{REPO}@{'0' * 40}", "has no revision '0000000000000000000000000000000000000000'"),
        ("cc-traces-weka-062126", "names no owner"),
        ("https://huggingface.co/semianalysisai/model", "is not the URL of a dataset"),
    ],
)
def test_a_name_the_hub_does_not_know_is_one_sentence_and_exit_2(
    hub: FixtureHub, capsys: pytest.CaptureFixture[str], name: str, needle: str
) -> None:
    hub.publish(REPO, corpus_files())
    code, out, err = pull(capsys, name)
    assert code == 2 and out == ""
    assert needle in one_error_line(err)


def test_a_corpus_file_the_replay_cannot_read_names_the_file_and_the_field(
    hub: FixtureHub, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = plain()
    del bad["requests"][1]["in"]
    hub.publish(REPO, corpus_files(traces(with_sub_agent(), bad)))
    code, out, err = pull(capsys, REPO)
    assert code == 2 and out == ""
    pulled, failed = err.strip().splitlines()  # what was pulled is said before its sessions are read
    assert pulled.startswith(f"{REPO}@") and "/traces.jsonl, line 2, requests[1]: `in` is missing" in failed
    one_error_line(failed)


def test_to_dir_keeps_the_files_beside_a_report(
    hub: FixtureHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hub.publish(REPO, corpus_files(), lfs=("traces.jsonl",))
    kept = tmp_path / "report" / "sessions"
    code, out, _ = pull(capsys, REPO, "--to", str(kept))
    assert code == 0 and out.strip() == str(kept)
    for name, data in corpus_files().items():
        assert (kept / name).read_bytes() == data and not (kept / name).is_symlink()
    assert len(load_session_set(kept).trees) == 3
    hub.stop()  # again, offline: the same files, in place
    code, out, _ = pull(capsys, REPO, "--to", str(kept))
    assert (
        code == 0
        and out.strip() == str(kept)
        and (kept / "traces.jsonl").read_bytes() == corpus_files()["traces.jsonl"]
    )
    assert sorted(p.name for p in kept.iterdir()) == ["README.md", "plots", "stats.txt", "traces.jsonl"]


def test_the_hub_token_never_shows(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    token = "hf_NotARealTokenButSecret0123456789"
    monkeypatch.setenv("HF_TOKEN", token)
    monkeypatch.setenv("HF_ENDPOINT", f"{closed_endpoint()}/{token}")  # a mirror URL that embeds it
    code, out, err = pull(capsys, REPO)
    assert code == 3 and token not in out + err and "***" in one_error_line(err)


def test_sessions_needs_an_action_and_a_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions"]) == 2
    assert "error: " in capsys.readouterr().err
    assert main(["sessions", "pull"]) == 2
    assert "NAME|URL" in capsys.readouterr().err


def test_a_fresh_pull_writes_nothing_but_the_cache(hub: FixtureHub, hub_env: Path, tmp_path: Path) -> None:
    hub.publish(REPO, corpus_files())
    before = {p for p in tmp_path.rglob("*") if not p.is_relative_to(hub_env)}
    assert main(["sessions", "pull", REPO]) == 0
    assert {p for p in tmp_path.rglob("*") if not p.is_relative_to(hub_env)} == before
    refs = hub_env / "hub" / f"datasets--{REPO.replace('/', '--')}" / "refs" / "main"
    assert json.dumps(refs.read_text())  # the branch's commit is remembered, for the offline pull
