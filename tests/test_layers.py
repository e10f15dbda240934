"""Layers point one way: ``metrics_core`` (the library, the CLI, the report) never imports the
app (``dashboard``) or Streamlit, so it installs and runs without them."""

from __future__ import annotations

import ast
from pathlib import Path

LIBRARY = Path(__file__).resolve().parents[1] / "metrics_core"
FORBIDDEN = ("dashboard", "streamlit")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_the_library_never_imports_the_app():
    offending = {str(path.relative_to(LIBRARY)): sorted(name for name in imported_modules(path)
                                                        if name.split(".")[0] in FORBIDDEN)
                 for path in LIBRARY.rglob("*.py")}
    assert {file: names for file, names in offending.items() if names} == {}


def test_the_check_sees_imports_inside_functions(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from dashboard.report import x\n    import streamlit as st\n")
    assert imported_modules(sample) == {"dashboard.report", "streamlit"}


def part_of(module: str) -> str | None:
    """The sub-package (``inputs``, ``cli``, ``store``…) or top-level module of a library module."""
    names = module.split(".")
    return names[1] if names[0] == "metrics_core" and len(names) > 1 else None


def part_graph() -> dict[str, set[str]]:
    """Which part imports which (imports inside functions included: a cycle there still ties the
    parts together)."""
    graph: dict[str, set[str]] = {}
    for path in LIBRARY.rglob("*.py"):
        names = path.relative_to(LIBRARY.parent).with_suffix("").parts
        here = part_of(".".join(names[:-1] if names[-1] == "__init__" else names))
        for name in imported_modules(path):
            there = part_of(name)
            if here and there and there != here:
                graph.setdefault(here, set()).add(there)
    return graph


def parts_in_cycles(graph: dict[str, set[str]]) -> set[str]:
    def reachable(start: str) -> set[str]:
        seen, todo = set(), list(graph.get(start, ()))
        while todo:
            part = todo.pop()
            if part not in seen:
                seen.add(part)
                todo.extend(graph.get(part, ()))
        return seen

    return {part for part in graph if part in reachable(part)}


def test_the_library_s_parts_import_each_other_without_cycles():
    """``cli`` sits on top (it may import anything), the engines and ``store`` below it, and
    ``inputs`` → ``settings`` → ``errors`` at the bottom: no part imports one that imports it back."""
    assert parts_in_cycles(part_graph()) == set()


def test_the_cycle_check_finds_a_cycle():
    assert parts_in_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {"a", "b", "c"}


def module_of(path: Path) -> str:
    names = path.relative_to(LIBRARY.parent).with_suffix("").parts
    return ".".join(names[:-1] if names[-1] == "__init__" else names)


def runtime_imports(path: Path, modules: set[str], name: str | None = None) -> set[str]:
    """The library modules ``path`` imports when it runs (inside functions too; the imports under
    ``if TYPE_CHECKING:`` aside), ``from package import module`` read as the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(node) for branch in ast.walk(tree) if isinstance(branch, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(branch.test) for part in branch.body for node in ast.walk(part)}
    names = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.update(f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                         for alias in node.names)
    return (names & modules) - {name or module_of(path)}


def test_no_module_of_the_library_imports_one_that_imports_it_back():
    """Within a part too (``inputs/ids`` ↔ ``text_ids`` ↔ ``text_hash`` was such a cycle): the
    modules form layers, each importing only the ones below it."""
    modules = {module_of(path) for path in LIBRARY.rglob("*.py")}
    graph = {module_of(path): runtime_imports(path, modules) for path in LIBRARY.rglob("*.py")}
    assert parts_in_cycles(graph) == set()


def test_the_module_check_reads_package_imports_and_skips_typing_ones(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from typing import TYPE_CHECKING\nfrom metrics_core.inputs import ids\n"
                      "if TYPE_CHECKING:\n    from metrics_core.store import catalog\n"
                      "def f():\n    from metrics_core.stats import compare\n")
    modules = {"metrics_core.inputs.ids", "metrics_core.store.catalog", "metrics_core.stats.compare"}
    assert runtime_imports(sample, modules, "sample") == {"metrics_core.inputs.ids", "metrics_core.stats.compare"}
