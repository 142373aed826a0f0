"""The Hugging Face hub, for published session corpora: a dataset's files at one commit, in the hub's
own cache (`huggingface_hub`, the same cache its other tools use), offline when they are cached, and one
sentence when neither the hub nor the cache has them. The one module that imports `huggingface_hub`,
and only when a corpus is asked for.

What is asked of the hub, in order:
1. nothing, when the revision is a full commit hash already in the cache (its files cannot change);
2. the revision's commit (`/api/datasets/REPO/revision/REV`): a name the hub does not know is a usage
   error (exit 2), a hub that does not answer (or `HF_HUB_OFFLINE`) means the cached copy of that
   revision is used, said in one line, or, with nothing cached, `HubUnreachableError` (exit 3);
3. `snapshot_download` at that revision: the file list, then each file the cache lacks.

Settings come from the environment when a pull starts (not when `huggingface_hub` was imported), so a
test or a wrapper can point them elsewhere: `HF_ENDPOINT` (a mirror, or a test's local hub), `HF_HOME` /
`HF_HUB_CACHE` (the cache), `HF_HUB_OFFLINE`, and `HF_TOKEN` for a private dataset (never printed: every
sentence from here is masked with it).
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentx_tui.corpus.names import CorpusRef
from agentx_tui.errors import AgentXError, TargetError, UsageError
from agentx_tui.redaction import redact

if TYPE_CHECKING:
    from huggingface_hub import HfApi

DEFAULT_ENDPOINT = "https://huggingface.co"
REPO_TYPE = "dataset"
# How long the first question may wait for an answer (the library's own client has no timeout: a network
# that drops packets would hold a pull for minutes before it could fall back to the cache).
ASK_TIMEOUT_S = 10.0
_TRUE = {"1", "true", "yes", "on"}


class HubUnreachableError(TargetError):
    """The hub could not be reached (or may not be: `HF_HUB_OFFLINE`) and nothing is cached: exit 3."""


@dataclass(frozen=True)
class HubSettings:
    endpoint: str
    cache_dir: Path
    offline: bool  # HF_HUB_OFFLINE: the hub is never asked
    secrets: tuple[str, ...]  # the user's hub token(s), masked in every message

    @classmethod
    def from_env(cls) -> HubSettings:
        env = os.environ
        home = Path(env.get("HF_HOME") or Path(env.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface")
        cache = Path(env.get("HF_HUB_CACHE") or home / "hub").expanduser()
        offline = any(env.get(name, "").strip().lower() in _TRUE for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
        endpoint = (env.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        return cls(endpoint=endpoint, cache_dir=cache, offline=offline, secrets=_tokens())


@dataclass(frozen=True)
class PulledCorpus:
    ref: CorpusRef
    commit: str  # the full commit hash the files are at
    folder: Path  # the snapshot in the cache (read it, never write it)
    files: tuple[str, ...]  # paths relative to `folder`
    size_bytes: int
    endpoint: str
    offline_reason: str | None = None  # why the hub was not asked: the copy is the one cached earlier

    @property
    def short_commit(self) -> str:
        return self.commit[:7]

    @property
    def workload_name(self) -> str:
        """How a run names the workload: the dataset and the commit it replayed, not a cache path."""
        return f"hf:{self.ref.repo_id}@{self.short_commit}"

    @property
    def pinned_label(self) -> str:
        return f"{self.ref.repo_id}@{self.commit}"

    def notice(self) -> str | None:
        """One line for stderr when the copy is a cached one because the hub was not asked."""
        if self.offline_reason is None:
            return None
        return f"offline: {self.offline_reason}; using the cached copy of {self.ref.label} (commit {self.short_commit})"

    def summary(self) -> str:
        size = _size(self.size_bytes)
        return f"{self.pinned_label}: {len(self.files)} file(s), {size}"


def pull_corpus(ref: CorpusRef, *, progress: bool = False, settings: HubSettings | None = None) -> PulledCorpus:
    """The dataset's files at `ref`'s revision, in the hub's cache (downloaded when they are not there)."""
    hub = settings or HubSettings.from_env()
    try:
        with _library_quiet(progress):
            folder, reason = _snapshot(ref, hub)
        files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        size = sum((folder / f).stat().st_size for f in files)
    except AgentXError as exc:
        raise type(exc)(redact(exc.message, hub.secrets), exc.hint) from exc.__cause__
    except OSError as exc:  # the cache's disk: full, read-only, gone
        raise UsageError(
            redact(f"Cannot keep {ref.label} in the cache {hub.cache_dir} ({exc.strerror or exc}).", hub.secrets),
            "Set HF_HOME (or HF_HUB_CACHE) to a folder with room.",
        ) from exc
    return PulledCorpus(
        ref=ref,
        commit=folder.name,  # the cache keeps each commit's files under snapshots/<commit hash>
        folder=folder,
        files=tuple(files),
        size_bytes=size,
        endpoint=hub.endpoint,
        offline_reason=None if reason is None else redact(reason, hub.secrets),  # it names the endpoint
    )


def _snapshot(ref: CorpusRef, hub: HubSettings) -> tuple[Path, str | None]:
    """The snapshot folder, and why the hub was not asked (None: it was, or did not need to be)."""
    if ref.pinned and (cached := _cached(ref, hub)) is not None:
        return cached, None  # a commit's files never change: nothing to ask
    if hub.offline:
        return _cached_or_raise(ref, hub, "HF_HUB_OFFLINE is set"), "HF_HUB_OFFLINE is set"
    api = _api(hub)
    try:
        # The revision's commit first: fails fast (no retries) when the hub is down, and tells a name the
        # hub does not know (exit 2) from a hub that does not answer (the cache, or exit 3).
        api.repo_info(ref.repo_id, repo_type=REPO_TYPE, revision=ref.revision, timeout=ASK_TIMEOUT_S)
        from huggingface_hub import snapshot_download

        return Path(_download(snapshot_download, ref, hub)), None
    except Exception as exc:
        reason = _unreachable(exc, hub)
        if reason is not None:
            return _cached_or_raise(ref, hub, reason, exc), reason
        if _disk_error(exc):
            raise  # the cache's disk, not the hub: said by pull_corpus
        raise _hub_error(exc, ref, hub) from exc


def _download(snapshot_download: Any, ref: CorpusRef, hub: HubSettings, *, cached_only: bool = False) -> str:
    folder: str = snapshot_download(
        ref.repo_id,
        repo_type=REPO_TYPE,
        revision=ref.revision,
        cache_dir=hub.cache_dir,
        endpoint=hub.endpoint,
        local_files_only=cached_only,
    )
    return folder


def _cached(ref: CorpusRef, hub: HubSettings) -> Path | None:
    """The complete cached snapshot of `ref`'s revision (a branch as it was when last pulled), if any."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(_download(snapshot_download, ref, hub, cached_only=True))
    except LocalEntryNotFoundError:  # also IncompleteSnapshotError: a download cut short
        return None


def _cached_or_raise(ref: CorpusRef, hub: HubSettings, reason: str, cause: BaseException | None = None) -> Path:
    cached = _cached(ref, hub)
    if cached is None:
        raise HubUnreachableError(
            f"{reason[0].upper()}{reason[1:]} and no complete copy of {ref.label} is cached in {hub.cache_dir}.",
            "Pull it once where the hub can be reached (the cache is HF_HOME, by default ~/.cache/huggingface), "
            "or set HF_ENDPOINT to a mirror.",
        ) from cause
    return cached


def _unreachable(exc: Exception, hub: HubSettings) -> str | None:
    """Why the hub could not be asked, or None when it answered (the error is then the hub's word)."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, OfflineModeIsEnabled

    if isinstance(exc, OfflineModeIsEnabled):
        return "HF_HUB_OFFLINE is set"
    if isinstance(exc, httpx2.TransportError | LocalEntryNotFoundError):
        detail = type(exc.__cause__ or exc).__name__
        return f"the Hugging Face hub at {hub.endpoint} could not be reached ({detail})"
    if isinstance(exc, HfHubHTTPError) and exc.response is not None and exc.response.status_code >= 500:
        return f"the Hugging Face hub at {hub.endpoint} answered HTTP {exc.response.status_code}"
    return None


def _disk_error(exc: Exception) -> bool:
    from huggingface_hub.errors import FileMetadataError, HfHubHTTPError

    # The library's HTTP errors are OSErrors too; so is its "this server is not a hub" error.
    return isinstance(exc, OSError) and not isinstance(exc, HfHubHTTPError | FileMetadataError)


def _hub_error(exc: Exception, ref: CorpusRef, hub: HubSettings) -> AgentXError:
    """The hub's answer as one sentence: a name it does not know, or a refusal (exit 2)."""
    from huggingface_hub.errors import (
        FileMetadataError,
        GatedRepoError,
        HfHubHTTPError,
        HFValidationError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    where = f"the Hugging Face hub at {hub.endpoint}"
    if isinstance(exc, GatedRepoError):
        return UsageError(
            f"The dataset {ref.repo_id} on {where} is gated: its terms must be accepted first.",
            "Accept them on the dataset's page, then set HF_TOKEN to a token of that account.",
        )
    if isinstance(exc, RevisionNotFoundError):
        return UsageError(
            f"The dataset {ref.repo_id} on {where} has no revision {ref.revision!r}.",
            "Give a branch, a tag or a full commit hash, or leave it out for the default branch.",
        )
    if isinstance(exc, RepositoryNotFoundError):  # also a gated or private one the token cannot open
        return UsageError(
            f"There is no dataset {ref.repo_id} on {where} (or it is private and HF_TOKEN cannot open it).",
            "Check the name, e.g. semianalysisai/cc-traces-weka-062126.",
        )
    if isinstance(exc, HfHubHTTPError) and exc.response is not None:
        return UsageError(f"{where[0].upper()}{where[1:]} refused {ref.label} (HTTP {exc.response.status_code}).")
    if isinstance(exc, HFValidationError):
        return UsageError(f"{ref.label!r} is not a dataset name the hub accepts.")
    if isinstance(exc, FileMetadataError):
        return UsageError(
            f"The server at {hub.endpoint} does not answer as a Hugging Face hub does (no file metadata).",
            "Check HF_ENDPOINT.",
        )
    return UsageError(f"Could not pull {ref.label} from {where} ({type(exc).__name__}).")


def _api(hub: HubSettings) -> HfApi:
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub.endpoint)


def _tokens() -> tuple[str, ...]:
    found = [os.environ.get(name, "") for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")]
    try:
        from huggingface_hub import get_token

        found.append(get_token() or "")
    except Exception:  # an unreadable token file is the hub's problem, not a reason to fail here
        pass
    return tuple(t for t in found if t)


@contextmanager
def _library_quiet(progress: bool) -> Iterator[None]:
    """No retry chatter or warnings from the library (its failures become our one sentence); its progress
    bars only when asked (a terminal)."""
    from huggingface_hub.utils.tqdm import disable_progress_bars

    logger = logging.getLogger("huggingface_hub")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if progress:
                yield
            else:
                with disable_progress_bars():
                    yield
    finally:
        logger.setLevel(level)


def _size(n: int) -> str:
    for size, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"
