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
