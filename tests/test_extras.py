"""The library and the command install without the app's packages (issue #47): Streamlit, Altair
and vl-convert are the ``app`` extra (the report's two the ``report`` extra); without them
``evaluate`` and ``compare`` work and ``report`` says which extra to install, before any work."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP_ONLY = ("streamlit", "altair", "vl-convert-python")
BLOCKED = ("streamlit", "altair", "vl_convert")


def test_the_library_s_dependencies_hold_none_of_the_app_s():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.split(">")[0].split("<")[0].split("=")[0] in APP_ONLY]
    extras = project["optional-dependencies"]
    assert {d.split(">")[0] for d in extras["app"]} == set(APP_ONLY)
    assert {d.split(">")[0] for d in extras["report"]} == {"altair", "vl-convert-python"}


def run_without_app_packages(tmp_path, *args: str) -> subprocess.CompletedProcess:
    """``rankscope ARGS`` in a process where importing Streamlit, Altair or vl-convert fails."""
    probe = ("import sys\n"
             f"for name in {BLOCKED!r}:\n    sys.modules[name] = None  # (import fails: as if not installed)\n"
             "from metrics_core.cli import main\n"
             f"sys.exit(main({list(args)!r}))")
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "RANKSCOPE_HOME": str(tmp_path / "store")})


def test_evaluate_and_compare_work_and_report_names_its_extra(tmp_path):
    (tmp_path / "data").symlink_to(ROOT / "data")
    files = ["--recommendations", "a=data/recs_personalised.csv", "--recommendations", "b=data/recs_popularity.csv",
             "--ground-truth", "data/ground_truth.csv", "--relevance-column", "rating", "--relevance-threshold", "4"]
    evaluated = run_without_app_packages(tmp_path, "evaluate", *files, "--format", "table")
    assert evaluated.returncode == 0, evaluated.stderr
    compared = run_without_app_packages(tmp_path, "compare", *files, "--bootstrap", "50", "--format", "table")
    assert compared.returncode == 0 and "b trails a on ndcg@10" in compared.stdout, compared.stderr
    report = run_without_app_packages(tmp_path, "report", *files, "--output", "r.html")
    assert report.returncode == 2 and "pip install 'rankscope[report]'" in report.stderr
    assert "altair and vl-convert-python" in report.stderr and "Traceback" not in report.stderr
    assert not (tmp_path / "r.html").exists()
