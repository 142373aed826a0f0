"""What a user may call a published session corpus: `REPO`, `REPO@REV`, a dataset URL, or `hf:REPO[@REV]`
(the workload form), all naming a dataset repository on the Hugging Face hub and, optionally, a revision
(a branch, a tag or a commit)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from agentx_tui.errors import UsageError

WORKLOAD_PREFIX = "hf:"
EXAMPLE = "semianalysisai/cc-traces-weka-062126"
_HINT = (
    f"Name a Hugging Face dataset as OWNER/NAME[@REVISION] (e.g. {EXAMPLE}) or by its URL "
    f"(https://huggingface.co/datasets/{EXAMPLE}[/tree/REVISION])."
)
# The hub's own rule for repository names: letters, digits, `-`, `_`, `.`; no `--` or `..`; at most 96.
_PART = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?")
COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class CorpusRef:
    repo_id: str  # OWNER/NAME of a dataset repository
    revision: str | None = None  # a branch, a tag or a commit; None: the repository's default branch

    @property
    def label(self) -> str:
        return self.repo_id if self.revision is None else f"{self.repo_id}@{self.revision}"

    @property
    def pinned(self) -> bool:
        """A full commit hash: its files never change, so a cached copy is the copy."""
        return self.revision is not None and COMMIT.fullmatch(self.revision) is not None


def is_hub_workload(text: str) -> bool:
    return text.startswith(WORKLOAD_PREFIX)


def parse_corpus_name(text: str) -> CorpusRef:
    """`text` as a corpus reference, or one sentence (`UsageError`) saying what is wrong with it."""
    name = text.strip().removeprefix(WORKLOAD_PREFIX)
    if "://" in name or name.startswith("huggingface.co/"):
        return _from_url(text, name)
    repo, at, revision = name.partition("@")
    if at and not revision:
        raise UsageError(f"{text!r} names no revision after the @.", _HINT)
    return CorpusRef(_repo_id(text, repo), _revision(text, revision) if at else None)


def _from_url(text: str, url: str) -> CorpusRef:
    parts = urlsplit(url if "://" in url else "https://" + url)
    segments = [unquote(s) for s in parts.path.split("/") if s]
    if parts.scheme not in ("http", "https") or len(segments) < 3 or segments[0] != "datasets":
        raise UsageError(f"{text!r} is not the URL of a dataset on the Hugging Face hub.", _HINT)
    repo = _repo_id(text, "/".join(segments[1:3]))
    rest = segments[3:]
    if not rest:
        return CorpusRef(repo)
    if rest[0] == "tree" and len(rest) == 2:
        return CorpusRef(repo, _revision(text, rest[1]))
    raise UsageError(f"{text!r} points into the dataset, not at it or at one of its revisions.", _HINT)


def _repo_id(text: str, repo: str) -> str:
    owner, slash, name = repo.partition("/")
    if not slash:
        raise UsageError(f"{text!r} names no owner: a dataset is OWNER/NAME.", _HINT)
    for part in (owner, name):
        if _PART.fullmatch(part) is None or "--" in part or ".." in part or len(part) > 96:
            raise UsageError(f"{text!r} is not a dataset name ({part!r} is not a valid owner or name).", _HINT)
    return repo


def _revision(text: str, revision: str) -> str:
    if not revision or any(c.isspace() or not c.isprintable() for c in revision) or ".." in revision:
        raise UsageError(f"{text!r} names no valid revision.", _HINT)
    return revision
