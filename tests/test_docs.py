"""The README and the docs say what is true: every block marked ``<!-- runnable -->`` runs on the
demo data as written (shell blocks with bash, Python blocks with this interpreter), every
relative link and anchor points at something that exists, and the README stays short enough for
a newcomer to read (details live in docs/)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = "<!-- runnable -->"
BLOCK = re.compile(r"^" + re.escape(MARK) + r"\n```(\w+)\n(.*?)^```", re.M | re.S)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def runnable_blocks() -> list[tuple[str, str, str]]:
    return [(f"{page.relative_to(ROOT)}:{text[:match.start()].count(chr(10)) + 2}", language, code)
            for page in PAGES for text in [page.read_text(encoding="utf-8")] for match in BLOCK.finditer(text)
            for language, code in [match.groups()]]


def anchors(page: Path) -> set[str]:
    """The anchors GitHub makes of a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#{1,6} (.+)$", page.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def test_the_readme_is_short_and_marks_its_commands_runnable():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    assert "make run" in readme and "make test" in readme
    assert sum(where.startswith("README.md") for where, _, _ in runnable_blocks()) >= 3


@pytest.mark.parametrize(("where", "language", "code"), runnable_blocks(), ids=lambda v: v if ":" in v else "")
def test_a_runnable_block_runs_on_the_demo_data(where, language, code, tmp_path):
    (tmp_path / "data").symlink_to(ROOT / "data")
    environment = {**os.environ, "RANKSCOPE_HOME": str(tmp_path / "store"),
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = ["bash", "-euo", "pipefail", "-c", code] if language == "sh" else [sys.executable, "-c", code]
    assert language in ("sh", "python"), f"{where}: a runnable block must be sh or python"
    done = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{where} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_exists(page):
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)  # (code is not a link)
    broken = []
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in anchors(linked)):
            broken.append(target)
    assert broken == []
