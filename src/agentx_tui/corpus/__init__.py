"""Published AgentX session corpora on the Hugging Face hub (docs/sessions.md): names, pulling them into
the hub's cache pinned to a commit, offline use of that cache, and copies for the user to keep.

Public:
    parse_corpus_name, CorpusRef, is_hub_workload   — `REPO[@REV]`, a dataset URL, `hf:REPO[@REV]`
    pull_corpus, PulledCorpus, HubSettings          — the files at one commit, in the cache
    HubUnreachableError                             — no hub and no cached copy (exit 3)
    keep_files                                      — `--to DIR`

`huggingface_hub` is imported only when a corpus is pulled. This package reads no session file: the
command line and the run's pre-flight load what it pulled like any other folder of sessions.
"""

from agentx_tui.corpus.hub import HubSettings, HubUnreachableError, PulledCorpus, pull_corpus
from agentx_tui.corpus.keep import keep_files
from agentx_tui.corpus.names import CorpusRef, is_hub_workload, parse_corpus_name

__all__ = [
    "CorpusRef",
    "HubSettings",
    "HubUnreachableError",
    "PulledCorpus",
    "is_hub_workload",
    "keep_files",
    "parse_corpus_name",
    "pull_corpus",
]
