"""The package rules of docs/architecture.md: the core never imports Textual, and no import cycles.

Every import counts: module-level, type-only (`if TYPE_CHECKING:`) and lazy ones inside functions —
they tie modules together just the same. Importing `a.b.c` also runs the `__init__` of `a.b`, so an
import reaches the packages around its target too (except the importer's own packages, which are
already being imported when a sibling is).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import agentx_tui

ROOT = Path(agentx_tui.__file__).parent
UI = "agentx_tui.ui"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _imports(path: Path, name: str) -> Iterator[str]:
    """Every module `path` imports, resolved to absolute names."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
        for target in _imports(path, name):
            if target not in modules or target in own:
                continue  # the importer's own packages are already being imported
            graph[name].add(target)
            parts = target.split(".")
            for i in range(2, len(parts)):
                parent = ".".join(parts[:i])
                if parent not in own and parent in modules:
                    graph[name].add(parent)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(graph, white)
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = grey
        stack.append(node)
        for nxt in sorted(graph[node]):
            if colour[nxt] == grey:
                return [*stack[stack.index(nxt) :], nxt]
            if colour[nxt] == white and (found := visit(nxt)):
                return found
        stack.pop()
        colour[node] = black
        return None

    for node in sorted(graph):
        if colour[node] == white and (found := visit(node)):
            return found
    return None


def test_core_packages_never_import_textual() -> None:
    offenders = [
        name
        for name, path in _modules().items()
        if not name.startswith(UI) and any(t == "textual" or t.startswith("textual.") for t in _imports(path, name))
    ]
    assert offenders == []


def test_no_import_cycle_of_any_length() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    graph = _graph()
    graph["agentx_tui.errors"].add("agentx_tui.cli")
    assert _cycle(graph) is not None
