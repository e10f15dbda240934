"""``python -m dashboard.serve`` (what ``make run``, ``rankscope app`` and the browser tests start)
loads the code every session needs before the first one: a visit to every page of the demo
workspace, every Compare tab included, then imports none of the large libraries, so neither
its wait nor its memory includes them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LARGE = ("scipy", "numba", "llvmlite", "altair", "narwhals", "jsonschema", "jinja2", "pandas.io.formats.style")
VISIT = """
import json, sys
sys.path[:0] = [{root!r}, {tests!r}]
from dashboard import serve
serve.preload().join()
before = set(sys.modules)
from driving import open_tab, start
at = start(page=None)
for page in ["overview", "users", "popularity", "scores", "cases", "compare", "history", "data"]:
    at.switch_page(f"views/{{page}}.py").run()
    assert not at.exception, page
at.switch_page("views/compare.py").run()
for tab in ["Side by side", "Significance", "User by user"]:
    open_tab(at, tab)
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_a_first_visit_to_every_page_imports_no_large_library(tmp_path):
    script = VISIT.format(root=str(ROOT), tests=str(ROOT / "tests" / "app"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RANKSCOPE_HOME": str(tmp_path)}, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert "metrics_core.report.document" in imported  # (the visit ran the pages: a module only they import)
    late = [name for name in imported if any(name == large or name.startswith(f"{large}.") for large in LARGE)]
    assert late == [], f"imported by the first session, not by dashboard.serve: {late}"


def test_the_preloaded_modules_are_set_aside_from_the_collectors_full_passes():
    """After :func:`dashboard.serve.preload` the imported modules' objects are frozen, so a full
    collection in a page run no longer walks them (107 ms against 6 ms over three visits of every
    page, docs/benchmarks.md)."""
    script = (f"import gc, sys\nsys.path.insert(0, {str(ROOT)!r})\nfrom dashboard import serve\n"
              "serve.preload().join()\nprint(gc.get_freeze_count())")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.strip().splitlines()[-1]) > 100_000
