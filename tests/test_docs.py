"""The docs agree with the code they describe, and cite only what the repository holds.

- The package table of docs/architecture.md is the table tests/test_architecture.py enforces
  (`MAY_IMPORT`): the same packages, each allowed the same imports.
- Nothing refers to a design document the repository does not contain: a reader who follows a
  citation must find it here (docs/*.md, workloads/README.md, themes/README.md).
- Every relative link of the README and the docs leads to a file, and CI runs the test command the
  README's quick start gives.
- docs/metrics.md's table of report keys is the one the figures' declarations write: every figure, with
  its unit.
- The simulator's options are those `agentx-tui sim --help` gives, in docs/sim.md and docs/usage.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentx_tui.cli import main
from agentx_tui.report import KEY_TABLE_END, KEY_TABLE_START, key_table
from agentx_tui.sim.cli import build_parser as build_sim_parser
from agentx_tui.snapshot import Figures, PointFigures, declared
from tests.helpers.paths import REPO
from tests.test_architecture import LAZY_ONLY, MAY_IMPORT

ARCHITECTURE = REPO / "docs" / "architecture.md"
TABLE_HEADING = "## Packages and what each may import"
ROOT_PACKAGE = "agentx_tui"  # the table's name for the package's own __init__, "(root)" in MAY_IMPORT
_NAME = re.compile(r"`([A-Za-z_][\w.]*)`")
_LONG_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")

# Built from parts so that this file does not name what it looks for.
_OUTSIDE_DOC = re.compile(rb"\b" + b"DES" + rb"IGN\b")
_SCANNED = ("src", "tests", "docs", "bench", "scripts", "workloads", "themes", "README.md", "pyproject.toml")


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _package_table(text: str) -> list[list[str]]:
    """The rows (package, job, may import) of the table under the heading, header and rule left out."""
    after = text.split(TABLE_HEADING, 1)[1].splitlines()
    start = next(i for i, line in enumerate(after) if line.startswith("|"))
    rows = []
    for line in after[start:]:
        if not line.startswith("|"):
            break
        rows.append(_cells(line))
    return [row for row in rows[2:] if len(row) == 3]  # past the header and the |---| rule


def _documented_rules(text: str) -> dict[str, tuple[frozenset[str], str]]:
    """Each package of the table → the packages its "may import" cell names, and the cell itself.

    The cell may say more in words ("only lazily", a module of the package, a third party): only
    the names in backticks whose first part is one of our packages count, the row's own aside."""
    known = {ROOT_PACKAGE, *MAY_IMPORT}
    rules: dict[str, tuple[frozenset[str], str]] = {}
    for packages, _job, may_import in _package_table(text):
        named = {name.split(".")[0] for name in _NAME.findall(may_import)} & known
        for package in _NAME.findall(re.sub(r"\([^)]*\)", "", packages)):  # a note in brackets is no name
            key = "(root)" if package == ROOT_PACKAGE else package
            assert key not in rules, f"{package} has two rows"
            rules[key] = (frozenset(named - {package}), may_import)
    return rules


def test_the_architecture_table_is_the_enforced_one() -> None:
    documented = _documented_rules(ARCHITECTURE.read_text(encoding="utf-8"))
    assert sorted(documented) == sorted(MAY_IMPORT), "packages in docs/architecture.md's table"
    wrong = {
        package: f"docs say {sorted(named)}, MAY_IMPORT says {sorted(MAY_IMPORT[package])}"
        for package, (named, _cell) in documented.items()
        if named != MAY_IMPORT[package]
    }
    assert wrong == {}
    not_said_lazy = sorted(f"{a} → {b}" for a, b in LAZY_ONLY if "lazily" not in documented[a][1])
    assert not_said_lazy == [], "an import allowed only lazily, not said so in the table"


def test_the_table_parser_sees_a_drifted_row() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    drifted = text.replace("| `args` |", "| `args`, `newpackage` |", 1)
    drifted = re.sub(r"(\| `sim` \|[^|]*\| )`errors`", r"\1`errors`, `net`", drifted, count=1)
    documented = _documented_rules(drifted)
    assert "newpackage" in documented
    assert documented["sim"][0] == MAY_IMPORT["sim"] | {"net"}


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


def test_relative_links_in_the_docs_lead_somewhere() -> None:
    pages = [
        REPO / "README.md",
        *(REPO / "docs").glob("*.md"),
        *(REPO / d / "README.md" for d in ("workloads", "themes")),
    ]
    broken = [
        f"{page.relative_to(REPO)} → {target}"
        for page in pages
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8"))
        if not target.startswith(("http://", "https://")) and not (page.parent / target).exists()
    ]
    assert broken == []


def test_ci_runs_the_readmes_test_command() -> None:
    # The README's quick start is two commands: the dashboard, then the whole suite, which CI runs.
    quick_start = (REPO / "README.md").read_text(encoding="utf-8").split("## Quick start", 1)[1]
    commands = quick_start.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert commands == ["./scripts/run.sh", "./scripts/test.sh"]
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert commands[1] in ci


METRICS = REPO / "docs" / "metrics.md"


def test_the_report_key_table_is_written_from_the_declarations() -> None:
    """docs/metrics.md's key table is the one `key_table` writes (scripts/update-key-table.py)."""
    text = METRICS.read_text(encoding="utf-8")
    table = text.split(KEY_TABLE_START, 1)[1].split(KEY_TABLE_END, 1)[0].strip()
    assert table == key_table(), "run `.venv/bin/python scripts/update-key-table.py` and commit docs/metrics.md"


def test_every_declared_figure_is_in_the_metrics_page_with_its_unit() -> None:
    text = METRICS.read_text(encoding="utf-8")
    rows = {
        _cells(line)[0].split(",")[0].strip("`"): _cells(line) for line in text.splitlines() if line.startswith("| `")
    }
    for declarations in (declared(Figures), declared(PointFigures)):
        for key, fig in declarations.items():
            assert key in rows, f"{key} is not in docs/metrics.md"
            assert rows[key][1] == (fig.unit or "—"), f"{key}: the page says {rows[key][1]!r}, its unit is {fig.unit!r}"


def _sim_options_in(page: str, start: str, end: str) -> set[str]:
    """The long options named in `page` between the first `start` and the next `end` after it."""
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    section = text.split(start, 1)[1].split(end, 1)[0]
    return set(_LONG_OPTION.findall(section))


def test_the_simulators_options_are_documented_as_its_help_gives_them(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["sim", "--help"])
    in_help = set(_LONG_OPTION.findall(capsys.readouterr().out)) - {"--help"}
    parsed = {o for action in build_sim_parser()._actions for o in action.option_strings if o.startswith("--")}
    in_sim_md = _sim_options_in("sim.md", "## Running it\n", "\n## ")
    in_usage_md = _sim_options_in("usage.md", "\nagentx-tui sim ", "\nagentx-tui ")
    assert {"--max-num-batched-tokens", "--time-scale"} <= in_help
    assert sorted(in_help - in_sim_md) == [], "in `agentx-tui sim --help`, not in docs/sim.md"
    assert sorted(in_sim_md - parsed) == [], "in docs/sim.md, not an option of the simulator"
    assert sorted(in_usage_md ^ in_help) == [], "docs/usage.md's `agentx-tui sim` line and --help differ"
