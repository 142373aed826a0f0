#!/usr/bin/env python3
"""Rewrite docs/metrics.md's table of report keys from the figures' declarations (snapshot/figures.py).

Run it after declaring, renaming or rewording a figure: `.venv/bin/python scripts/update-key-table.py`.
tests/test_docs.py fails while the page and the declarations disagree.
"""

from __future__ import annotations

from pathlib import Path

from agentx_tui.report import KEY_TABLE_END, KEY_TABLE_START, key_table

PAGE = Path(__file__).resolve().parent.parent / "docs" / "metrics.md"


def main() -> None:
    text = PAGE.read_text(encoding="utf-8")
    before, rest = text.split(KEY_TABLE_START, 1)
    _, after = rest.split(KEY_TABLE_END, 1)
    PAGE.write_text(f"{before}{KEY_TABLE_START}\n{key_table()}\n{KEY_TABLE_END}{after}", encoding="utf-8")


if __name__ == "__main__":
    main()
