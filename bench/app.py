"""App responsiveness with 1M recommendation rows (server time, measured with AppTest).

Usage: python bench/app.py DATA_DIR   (a make_synthetic.py directory with >= 100k users)
Builds a workspace of two models x 100k users x top 10 (2M rows, 1M per model) with the
training data and item table, then times the first run of the Overview page, a K change,
and the CLI on the same files.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
from streamlit.testing.v1 import AppTest

from dashboard.workspace import Workspace
from metrics_core import Columns
from metrics_core.inputs.read import TableFile

ROOT = Path(__file__).resolve().parents[1]
data = Path(sys.argv[1])
out = Path(tempfile.mkdtemp())
recs = pq.read_table(data / "recs.parquet", filters=[("rank", "<=", 20)]).to_pandas()
first = recs[recs["rank"] <= 10]
second = recs[recs["rank"] > 10].assign(rank=lambda f: f["rank"] - 10)
first.to_parquet(out / "top.parquet")
second.to_parquet(out / "next.parquet")
for name in ("ground_truth", "train", "items"):
    pq.write_table(pq.read_table(data / f"{name}.parquet"), out / f"{name}.parquet")
workspace = Workspace(
    label="benchmark", models={name: TableFile(f"{name}.parquet", (out / f"{name}.parquet").read_bytes())
                               for name in ("top", "next")},
    ground_truth=TableFile("ground_truth.parquet", (out / "ground_truth.parquet").read_bytes()),
    columns=Columns(relevance="relevance", threshold=1),
    train=TableFile("train.parquet", (out / "train.parquet").read_bytes()),
    items=TableFile("items.parquet", (out / "items.parquet").read_bytes()),
    feature_columns=("genre",),
)
at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=600)
at.session_state["workspace"] = workspace
start = time.perf_counter()
at.run()
first_run = time.perf_counter() - start
assert not at.exception, at.exception
changes = []
for k in (5, 7, 10):
    start = time.perf_counter()
    at.slider(key="k").set_value(k).run()
    changes.append(time.perf_counter() - start)
    assert not at.exception
start = time.perf_counter()
at.slider(key="k").set_value(5).run()
repeat = time.perf_counter() - start
cli = [sys.executable, "-m", "metrics_core", "evaluate", "--recommendations", str(out / "top.parquet"),
       "--recommendations", str(out / "next.parquet"), "--ground-truth", str(out / "ground_truth.parquet"),
       "--train", str(out / "train.parquet"), "--items", str(out / "items.parquet"), "--feature-columns", "genre",
       "--relevance-column", "relevance"]
start = time.perf_counter()
subprocess.run(cli, check=True, capture_output=True)
cli_s = time.perf_counter() - start
print(json.dumps({"rows_per_model": len(first), "first_overview_s": round(first_run, 2),
                  "k_change_s": [round(c, 2) for c in changes], "k_back_to_cached_s": round(repeat, 2),
                  "cli_s": round(cli_s, 2)}, indent=1))
