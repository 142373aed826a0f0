"""The package rules of docs/architecture.md, as data: what each package may import, the load side's
layers, which modules are a package's way in, and which imports must stay lazy; no import cycles;
Textual only in ui/; no class name defined twice.

Every import counts: module-level, type-only (`if TYPE_CHECKING:`) and lazy ones inside functions —
they tie modules together just the same. Importing `a.b.c` also runs the `__init__` of `a.b`, so an
import reaches the packages around its target too, except the importer's own packages: they are
already being imported when a module of theirs is. Reading a name off one of them does reach it
(`from agentx_tui.sim import DEFAULT_PROFILE` in sim/server.py needs sim/__init__ to have run that
far), so a cycle inside a package is found as well.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import agentx_tui

ROOT = Path(agentx_tui.__file__).parent
UI = "agentx_tui.ui"

# What each package may import, besides the standard library, third parties and itself. The
# small leaves first, then the core (which never imports the UI), then what wires it all.
MAY_IMPORT: dict[str, frozenset[str]] = {
    name: frozenset(allowed.split())
    for name, allowed in {
        "(root)": "",  # agentx_tui/__init__: the version
        "errors": "",
        "redaction": "",
        "yamlfile": "",
        "themefiles": "yamlfile",
        "net": "",
        "units": "",
        "terminal": "",
        "procfs": "",
        "hardware": "",
        "args": "errors",
        "snapshot": "",
        "control": "snapshot",
        "telemetry": "snapshot errors redaction",
        "engine": "snapshot telemetry errors redaction procfs",
        "cost": "snapshot errors yamlfile hardware",
        "sim": "errors args hardware",
        "sessionfile": "errors",
        "corpus": "errors redaction",
        "measure": "snapshot",
        "proxy": "snapshot measure sessionfile errors net",
        "load": "snapshot measure engine sessionfile errors args net units yamlfile",
        "sweep": "snapshot measure units",
        "report": "snapshot sweep errors redaction args terminal units",
        "recording": "snapshot errors redaction",
        "ui": "snapshot control sweep redaction terminal units yamlfile themefiles",
        "run": "snapshot telemetry engine cost measure load sweep report recording sim corpus proxy ui "
        "errors redaction args net units",
        "web": "run errors redaction net procfs cli",
        "cli": "run report load sim telemetry corpus web errors redaction args terminal themefiles",
        "__main__": "cli",
    }.items()
}
# Imports that must happen inside a function, never when the module loads: the dashboard only when
# one is wanted, and everything heavy only after the command line is parsed (`--help` stays fast).
LAZY_ONLY: frozenset[tuple[str, str]] = frozenset(
    {
        ("run", "ui"),
        *(("cli", heavy) for heavy in ("run", "report", "load", "telemetry", "corpus")),
        ("web", "cli"),  # a page's program runs the dashboard's command line, which serves pages
    }
)
# The load side's layers (load/__init__.py): each may import only those below it.
LOAD_LAYERS: dict[str, frozenset[str]] = {
    "load.workload": frozenset(),
    "load.sending": frozenset({"load.workload"}),
    "load.spreading": frozenset({"load.sending", "load.workload"}),
    "load": frozenset({"load.workload", "load.sending", "load.spreading"}),  # its __init__
}
# A package is entered through its curated `__init__`; these modules are ways in too.
PUBLIC: dict[str, frozenset[str]] = {
    "snapshot": frozenset(
        {
            "snapshot.model",
            "snapshot.rates",
            "snapshot.stat",
            "snapshot.bottleneck",
            "snapshot.limits",
            "snapshot.unknown",  # why a figure is n/a: the report's Markdown and the panes
        }
    ),
    "engine": frozenset({"engine.info"}),  # ServerInfo, without the launcher's imports (load workers)
    # Its __init__ imports nothing: a page's run enters through `page` without the server's imports.
    "web": frozenset({"web.address", "web.serve", "web.page"}),
}


@dataclass(frozen=True)
class Import:
    target: str  # a module or `module.name`, absolute
    base: str  # the module named in the statement (what is entered)
    lazy: bool  # inside a function body, or only for type checking: not run when the module loads
    names: tuple[str, ...] = ()  # `from base import a, b`, on the import of `base` itself: a and b


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _lazy_nodes(tree: ast.Module) -> set[ast.AST]:
    """Import statements not run when the module loads: in a function, or under `if TYPE_CHECKING:`."""
    lazy: set[ast.AST] = set()
    for node in ast.walk(tree):
        deferred = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or (
            isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        )
        if deferred:
            lazy.update(n for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom))
    return lazy


def _imports(path: Path, name: str) -> Iterator[Import]:
    """Every module `path` imports, resolved to absolute names."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lazy = _lazy_nodes(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (Import(alias.name, alias.name, node in lazy) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield Import(base, base, node in lazy, tuple(alias.name for alias in node.names))
            yield from (Import(f"{base}.{alias.name}", base, node in lazy) for alias in node.names)


def _reached(name: str, imports: Iterable[Import], modules: Collection[str]) -> set[str]:
    """The modules of ours that `name`'s imports need to have run."""
    own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
    reached: set[str] = set()
    for imp in imports:
        target = imp.target
        if target not in modules or target == name:
            continue
        if target in own:
            # Already being imported: only a name read off its `__init__` (not a submodule) needs it.
            if any(f"{target}.{n}" not in modules for n in imp.names):
                reached.add(target)
            continue
        reached.add(target)
        parts = target.split(".")
        for i in range(2, len(parts)):
            parent = ".".join(parts[:i])
            if parent not in own and parent in modules:
                reached.add(parent)
    return reached


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _reached(name, _imports(path, name), modules) for name, path in modules.items()}


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


def _package(module: str) -> str:
    """`agentx_tui.load.sending.driver` → `load`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(root)"


def _layer(module: str) -> str:
    """The load side's layer of a module (`load.sending`), else its package."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "load":
        return ".".join(parts[1:3])
    return _package(module)


@dataclass(frozen=True)
class Edge:
    importer: str
    target: str
    lazy: bool


def _edges() -> Iterator[Edge]:
    """Every import of one of our modules by another of ours (a module imported by its own package's
    `__init__` aside), each with where it is imported from."""
    modules = _modules()
    for name, path in modules.items():
        for imp in _imports(path, name):
            if imp.target in modules:
                yield Edge(name, imp.target, imp.lazy)


def _table_breaches(edges: list[Edge]) -> list[str]:
    out = []
    for e in edges:
        a, b = _package(e.importer), _package(e.target)
        if a == b or b == "(root)":  # agentx_tui itself holds only the version
            continue
        if b not in MAY_IMPORT.get(a, frozenset()):
            out.append(f"{e.importer} imports {e.target}: {a} may not import {b}")
        elif (a, b) in LAZY_ONLY and not e.lazy:
            out.append(f"{e.importer} imports {e.target} when it loads: {a} may import {b} only lazily")
    return sorted(set(out))


def test_every_import_between_packages_is_in_the_table() -> None:
    assert set(MAY_IMPORT) >= {_package(m) for m in _modules()}, "a package the table does not know"
    assert _table_breaches(list(_edges())) == []


def test_the_table_check_finds_a_planted_edge() -> None:
    planted = [
        Edge("agentx_tui.telemetry.nvml", "agentx_tui.measure.stats", False),  # telemetry → measure: not in the table
        Edge("agentx_tui.run.execute", "agentx_tui.ui.app", False),  # run → ui, but not lazily
    ]
    assert len(_table_breaches(planted)) == 2


def test_the_load_layers_only_import_downwards() -> None:
    wrong = sorted(
        f"{e.importer} imports {e.target}"
        for e in _edges()
        if _package(e.importer) == "load"
        and _package(e.target) == "load"
        and _layer(e.importer) != _layer(e.target)
        and _layer(e.target) not in LOAD_LAYERS[_layer(e.importer)]
    )
    assert wrong == []


def test_packages_are_entered_through_their_public_modules() -> None:
    modules = _modules()
    wrong = set()
    for name, path in modules.items():
        for imp in _imports(path, name):
            base, a, b = imp.base, _package(name), _package(imp.base)
            if base not in modules or a == b or b == "(root)":
                continue
            public = {f"agentx_tui.{b}", *(f"agentx_tui.{m}" for m in PUBLIC.get(b, ()))}
            if base not in public:
                wrong.add(f"{name} enters {b} through {base}, not its __init__")
    assert sorted(wrong) == []


def test_core_packages_never_import_textual() -> None:
    offenders = [
        name
        for name, path in _modules().items()
        if not name.startswith(UI)
        and any(i.target == "textual" or i.target.startswith("textual.") for i in _imports(path, name))
    ]
    assert offenders == []


def test_no_import_cycle_of_any_length() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    graph = _graph()
    graph["agentx_tui.errors"].add("agentx_tui.cli")
    assert _cycle(graph) is not None


def _class_places() -> dict[str, list[str]]:
    """Every class defined in the package, top-level or nested, by name: where each one is (`path:line`)."""
    places: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                places.setdefault(node.name, []).append(f"{path.relative_to(ROOT.parent)}:{node.lineno}")
    return places


def _defined_twice(places: dict[str, list[str]]) -> list[str]:
    return sorted(f"{name}: {' and '.join(where)}" for name, where in places.items() if len(where) > 1)


def test_no_class_name_is_defined_twice() -> None:
    # Two things under one name read as one thing: each name says which it is.
    twice = _defined_twice(_class_places())
    assert twice == [], "class names defined in more than one place:\n" + "\n".join(twice)


def test_the_class_name_check_finds_a_planted_pair() -> None:
    places = _class_places()
    places.setdefault("Snapshot", []).append("agentx_tui/ui/planted.py:1")
    assert any(line.startswith("Snapshot: ") and "ui/planted.py:1" in line for line in _defined_twice(places))


def test_a_name_read_off_the_own_package_reaches_its_init() -> None:
    modules, server, sim = _modules(), "agentx_tui.sim.server", "agentx_tui.sim"
    reads = [Import(sim, sim, lazy=False, names=("DEFAULT_PROFILE",))]
    enters = [Import(sim, sim, lazy=False, names=("engine",)), Import(f"{sim}.engine", sim, lazy=False)]
    assert _reached(server, reads, modules) == {sim}
    assert _reached(server, enters, modules) == {f"{sim}.engine"}


def test_the_cycle_finder_finds_a_planted_cycle_inside_a_package() -> None:
    graph = _graph()
    assert "agentx_tui.sim.server" in graph["agentx_tui.sim"]  # named there for type checkers only
    graph["agentx_tui.sim.server"].add("agentx_tui.sim")
    assert _cycle(graph) is not None
