"""The package as a user gets it (issue #47): the wheel and sdist built by ``python -m build``, the
wheel installed into a fresh venv. The library alone installs without Streamlit, Altair or a
browser renderer and evaluates the demo data from the command line; with the ``app`` extra,
``rankscope app`` serves the demo workspace's Summary to a browser."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from browsing import CHROMIUM, ROOT, free_port, summary_in_chromium, wait_until_serving

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no system Chromium")]


def run(*args, **options) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=900, **options)
    assert done.returncode == 0, (done.stdout[-1500:], done.stderr[-3000:])
    return done


def test_the_built_wheel_installs_and_runs_in_a_fresh_venv(tmp_path):
    dist = tmp_path / "dist"
    run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", dist, ROOT)
    (wheel,) = dist.glob("rankscope-*.whl")
    assert len(list(dist.glob("rankscope-*.tar.gz"))) == 1
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    python, rankscope = venv / "bin" / "python", venv / "bin" / "rankscope"
    run(python, "-m", "pip", "install", "--quiet", wheel)
    installed = {line.split("==")[0].lower() for line in run(python, "-m", "pip", "freeze").stdout.splitlines()}
    assert not installed & {"streamlit", "altair", "vl-convert-python"}  # (the library alone)
    work = tmp_path / "work"
    work.mkdir()
    evaluated = run(rankscope, "evaluate", "--recommendations", ROOT / "data" / "recs_personalised.csv",
                    "--ground-truth", ROOT / "data" / "ground_truth.csv", "--relevance-column", "rating",
                    "--relevance-threshold", "4", cwd=work, env={**os.environ, "RANKSCOPE_HOME": str(work / "store")})
    assert 0 < json.loads(evaluated.stdout)["models"]["recs_personalised"]["metrics"]["ndcg"] < 1
    run(python, "-m", "pip", "install", "--quiet", f"{wheel}[app]")
    port = free_port()
    server = subprocess.Popen([rankscope, "app", "--port", str(port), "--home", work / "store"], cwd=work,
                              env={**os.environ, "RANKSCOPE_DEMO_DIR": str(work / "demo")},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_serving(url, server)
        summary_in_chromium(url, timeout_ms=90_000)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(20)
    demo = work / "demo"
    again = run(rankscope, "evaluate", "--recommendations", demo / "recs_popularity.csv", "--ground-truth",
                demo / "ground_truth.csv", "--relevance-column", "rating", "--relevance-threshold", "4", cwd=work)
    assert json.loads(again.stdout)["models"]["recs_popularity"]["users"]["evaluated"] > 0
