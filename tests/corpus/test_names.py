"""Corpus names: `REPO`, `REPO@REV`, a dataset URL (with `/tree/REV`), `hf:REPO[@REV]`; anything else is one
sentence (exit 2)."""

from __future__ import annotations

import pytest

from agentx_tui.corpus import CorpusRef, parse_corpus_name
from agentx_tui.errors import UsageError

REPO = "semianalysisai/cc-traces-weka-061526"
COMMIT = "23f152f6f0f9399a85901b89a6458def0ef16729"


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        (REPO, CorpusRef(REPO)),
        (f"  {REPO}@main ", CorpusRef(REPO, "main")),
        (f"{REPO}@{COMMIT}", CorpusRef(REPO, COMMIT)),
        (f"hf:{REPO}", CorpusRef(REPO)),
        (f"hf:{REPO}@v1.0", CorpusRef(REPO, "v1.0")),
        (f"https://huggingface.co/datasets/{REPO}", CorpusRef(REPO)),
        (f"https://huggingface.co/datasets/{REPO}/", CorpusRef(REPO)),
        (f"huggingface.co/datasets/{REPO}/tree/main", CorpusRef(REPO, "main")),
        (f"https://huggingface.co/datasets/{REPO}/tree/refs%2Fpr%2F3", CorpusRef(REPO, "refs/pr/3")),
        ("https://hf-mirror.com/datasets/org_1/my.data-set", CorpusRef("org_1/my.data-set")),
    ],
)
def test_names_and_urls(text: str, ref: CorpusRef) -> None:
    assert parse_corpus_name(text) == ref


def test_only_a_full_commit_is_pinned() -> None:
    assert parse_corpus_name(f"{REPO}@{COMMIT}").pinned
    assert not parse_corpus_name(f"{REPO}@{COMMIT[:7]}").pinned and not parse_corpus_name(REPO).pinned


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("cc-traces-weka-061526", "names no owner"),
        (f"{REPO}@", "names no revision after the @"),
        ("semianalysisai/bad--name", "is not a valid owner or name"),
        ("a/b/c", "is not a valid owner or name"),
        (f"{REPO}@two words", "names no valid revision"),
        (f"https://huggingface.co/{REPO}", "is not the URL of a dataset"),
        (f"https://huggingface.co/datasets/{REPO}/blob/main/traces.jsonl", "points into the dataset"),
        (f"ftp://huggingface.co/datasets/{REPO}", "is not the URL of a dataset"),
    ],
)
def test_anything_else_is_one_sentence(text: str, needle: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_corpus_name(text)
    assert needle in info.value.message and info.value.message.count(".") <= 3 and info.value.hint
