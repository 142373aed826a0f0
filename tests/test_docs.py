"""Nothing refers to a design document the repository does not contain: a reader who follows a
citation must find it here (docs/*.md, workloads/README.md, themes/README.md).
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.paths import REPO

# Built from parts so that this file does not name what it looks for.
_OUTSIDE_DOC = re.compile(rb"\b" + b"DES" + rb"IGN\b")
_SCANNED = ("src", "tests", "docs", "bench", "scripts", "workloads", "themes", "README.md", "pyproject.toml")


def _scanned_files() -> list[Path]:
    files = []
    for name in _SCANNED:
        path = REPO / name
        candidates = [path] if path.is_file() else path.rglob("*")
        files += [p for p in candidates if p.is_file() and "__pycache__" not in p.parts]
    return files


def test_nothing_cites_a_document_outside_the_repository() -> None:
    citing = [
        f"{path.relative_to(REPO)}:{number}"
        for path in _scanned_files()
        for number, line in enumerate(path.read_bytes().splitlines(), start=1)
        if _OUTSIDE_DOC.search(line)
    ]
    assert citing == [], "cite docs/*.md or workloads/README.md instead"


def test_the_citation_check_sees_one() -> None:
    assert _OUTSIDE_DOC.search(b"the replay rules (" + b"DES" + b"IGN \xc2\xa77)")
    assert not _OUTSIDE_DOC.search(b"the design notes; REDESIGNED")
