"""The app on a large saved workspace, page by page (issue #43's targets), timed on the server.

Usage: python bench/app_scale.py [--users 1000000] [--models 4] [--length 100] [--train-rows 40000000]
    [--store DIR] [--saved-by evaluate|store] [--prepared]

Writes files of USERS x MODELS x LENGTH recommendations (scores), a graded ground truth (10 rows
per user), TRAIN_ROWS training interactions and an item table (a genre, a number), and saves them
as a workspace in a fresh store the way a user with data this large does: ``rankscope evaluate
... --save scale`` in another process (``--saved-by evaluate``, the default: the road the app's
refusal of a large upload names; it keeps the evaluation and the encoded tables for the link it
prints), or through the store's Python API (``--saved-by store``: nothing kept, so the first
open reads, encodes and evaluates). Then drives the app with Streamlit's AppTest (the server's
work, without a browser) as a user opening the workspace's link does: the first open (the
Summary), each page's first visit, a page switch back, a new K, a K seen before, then the same
workspace reopened as after a server restart (from what the store keeps; with ``--prepared``,
from what ``rankscope workspaces prepare`` keeps in another process once the rest is removed, as
after an upgrade). For each step: wall time, the process's CPU time, and the most rows any chart
of the page holds. Ends with the process's resident memory: idle (with the code
``dashboard/serve.py`` loads before the first session, as ``make run``'s server has it), with the
workspace open, at its peak, 5 s after the session closed (``closed``: a first open's evaluation
and encoded tables may still be being written to the store on worker threads) and once they are
written (``after_close``: what the server holds idle from then on). Prints one JSON line per
step. ``--store DIR`` keeps the store and the written files in DIR for the next run with the
same sizes (writing 1M users x 4 models takes 2 minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PAGES = ["views/overview.py", "views/users.py", "views/popularity.py", "views/scores.py",
         "views/cases.py", "views/compare.py", "views/history.py", "views/data.py"]


def write_files(folder: Path, users: int, models: int, length: int, train_rows: int) -> dict[str, Path]:
    """The workspace's files, written into ``folder`` (once: kept there for the next run):
    ``model_0`` ... (recommendations), ``truth``, ``train`` and ``items``."""
    names = [f"model_{m}" for m in range(models)] + ["truth", "train", "items"]
    paths = {name: folder / f"{name}.parquet" for name in names}
    if (folder / "complete").exists():
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    items = max(10_000, users // 20)
    for m in range(models):
        # popular items more often (Zipf), nearly always distinct within a list (each position shifted by a prime)
        picked = (rng.zipf(1.2, users * length) + np.tile(np.arange(length) * 7919, users) + m * 13) % items
        frame = pd.DataFrame({"user_id": np.repeat(np.arange(users, dtype=np.int64), length), "item_id": picked,
                              "score": rng.random(users * length, dtype=np.float32)})
        frame.to_parquet(paths[f"model_{m}"], index=False)
        del frame, picked
    pd.DataFrame({"user_id": np.repeat(np.arange(users), 10), "item_id": rng.integers(0, items, users * 10),
                  "rating": rng.integers(1, 6, users * 10, dtype=np.int8)}).drop_duplicates(
        ["user_id", "item_id"]).to_parquet(paths["truth"], index=False)
    pd.DataFrame({"user_id": rng.integers(0, users, train_rows), "item_id": rng.zipf(1.2, train_rows) % items}
                 ).to_parquet(paths["train"], index=False)
    pd.DataFrame({"item_id": np.arange(items), "genre": rng.choice(["drama", "comedy", "news", "kids"], items),
                  "length": rng.random(items)}).to_parquet(paths["items"], index=False)
    (folder / "complete").touch()
    return paths


def saved_through_the_store(home: Path, paths: dict[str, Path], users: int) -> str:
    """The workspace saved through the store's Python API (nothing evaluated, nothing kept): its id."""
    from metrics_core import Columns
    from metrics_core.store import Store

    store = Store(home)
    keys = {name: store.put_table(path.name, path, "recommendations") for name, path in paths.items()
            if name.startswith("model_")}
    saved = store.save_workspace(
        "scale", keys, store.put_table(paths["truth"].name, paths["truth"], "ground truth"),
        columns=Columns(relevance="rating", threshold=4),
        train=store.put_table(paths["train"].name, paths["train"], "training"),
        items=store.put_table(paths["items"].name, paths["items"], "item features"), feature_columns=("genre",),
        user_count=users, if_exists="replace")
    return saved.id


def saved_by_evaluate(paths: dict[str, Path]) -> str:
    """The workspace saved by ``rankscope evaluate ... --save scale`` in another process, as the app's
    refusal of a large upload tells a user to: timed, and its id read from the link it prints."""
    command = [sys.executable, "-m", "metrics_core", "evaluate", "--ground-truth", str(paths["truth"]),
               "--train", str(paths["train"]), "--items", str(paths["items"]), "--relevance-column", "rating",
               "--relevance-threshold", "4", "--feature-columns", "genre", "--save", "scale"]
    for name, path in paths.items():
        if name.startswith("model_"):
            command += ["--recommendations", f"{name}={path}"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True,
                          env={**os.environ, "MALLOC_ARENA_MAX": "2"})
    link = re.search(r"\?ws=([0-9a-f]+)", done.stdout + done.stderr)
    if link is None:
        sys.exit(f"rankscope evaluate --save printed no link:\n{done.stderr[-2000:]}")
    print(json.dumps({"step": "rankscope evaluate ... --save scale (another process)",
                      "wall_s": round(time.perf_counter() - started, 1)}), flush=True)
    return link.group(1)


def chart_rows(at) -> int:
    rows = [0]
    for chart in [*at.get("arrow_vega_lite_chart"), *at.get("vega_lite_chart")]:
        rows += [pa.ipc.open_stream(d.data.data).read_all().num_rows for d in chart.proto.datasets]
    return max(rows)


def rss_mib() -> tuple[float, float]:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            current = int(line.split()[1]) / 1024
    return current, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


MAX_CHART_ROWS = 5_000
most_rows_seen = [0]


def step(name: str, action) -> None:
    started, cpu = time.perf_counter(), time.process_time()
    at = action()
    errors = [e.value for e in at.error] + [e.value for e in at.exception]
    rows = chart_rows(at)
    most_rows_seen[0] = max(most_rows_seen[0], rows)
    print(json.dumps({"step": name, "wall_s": round(time.perf_counter() - started, 2),
                      "cpu_s": round(time.process_time() - cpu, 2), "most_chart_rows": rows,
                      "errors": errors[:1]}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--length", type=int, default=100)
    parser.add_argument("--train-rows", type=int, default=40_000_000)
    parser.add_argument("--store", type=Path, help="keep the store here and reuse its workspace of these sizes")
    parser.add_argument("--saved-by", choices=["evaluate", "store"], default="evaluate",
                        help="save the workspace with 'rankscope evaluate --save' (the road the app names for "
                             "large data; it keeps the evaluation), or through the store's Python API (nothing "
                             "kept: the first open evaluates)")
    parser.add_argument("--prepared", action="store_true",
                        help="reopen from what 'rankscope workspaces prepare' keeps (what the first open kept "
                             "removed first, as after an upgrade of rankscope)")
    args = parser.parse_args()
    home = args.store or Path(tempfile.mkdtemp(prefix="rankscope-scale-store-"))
    os.environ["RANKSCOPE_HOME"] = str(home)
    started = time.perf_counter()
    shutil.rmtree(home / "results", ignore_errors=True)  # (nothing kept from an earlier run)
    shutil.rmtree(home / "encoded", ignore_errors=True)
    paths = write_files(home / f"files-{args.users}-{args.models}-{args.length}-{args.train_rows}", args.users,
                        args.models, args.length, args.train_rows)
    print(json.dumps({"users": args.users, "models": args.models, "length": args.length,
                      "train_rows": args.train_rows, "saved_by": args.saved_by,
                      "files_written_s": round(time.perf_counter() - started, 1), "cores": os.cpu_count()}),
          flush=True)
    workspace_id = saved_by_evaluate(paths) if args.saved_by == "evaluate" else \
        saved_through_the_store(home, paths, args.users)
    from streamlit.testing.v1 import AppTest

    from dashboard import serve, state

    serve.preload().join()  # (before the idle reading: make run's server loads this code before its first session)

    idle, _ = rss_mib()
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=3600)
    at.query_params["ws"] = workspace_id
    step("first open: Summary (" + ("the evaluation 'evaluate --save' kept)" if args.saved_by == "evaluate"
                                    else "nothing kept: read, encode, evaluate)"), at.run)
    for page in PAGES:
        step(f"first visit {page.split('/')[1][:-3]}", lambda page=page: at.switch_page(page).run())
    step("back to Overview", lambda: at.switch_page("views/overview.py").run())
    step("K = 5 (new)", lambda: at.slider(key="k").set_value(5).run())
    step("K = 10 (seen)", lambda: at.slider(key="k").set_value(10).run())
    step("Users at K = 10 (seen)", lambda: at.switch_page("views/users.py").run())
    step("Scores at K = 10 (seen)", lambda: at.switch_page("views/scores.py").run())
    step("Compare at K = 10 (seen)", lambda: at.switch_page("views/compare.py").run())
    time.sleep(3)  # (a reader on the page: the memory its run freed is given back meanwhile)
    current, peak = rss_mib()
    cached = state.CACHE.nbytes / 2**20  # (what the cache holds, of that memory)
    at = None  # the session closes; its cache entries age out (as the orphan sweep drops them) and memory is given back
    state.CACHE.clear()
    time.sleep(5)
    closed, _ = rss_mib()  # (the evaluation and the encoded tables may still be being kept, on worker threads)
    kept = list((home / "results").glob("*.json"))
    deadline = time.monotonic() + 600
    while not kept and time.monotonic() < deadline:  # (the first evaluation is kept on a worker thread)
        time.sleep(1)
        kept = list((home / "results").glob("*.json"))
    from metrics_core.store.encoded import KEEP_MIN_CELLS

    encoded = list((home / "encoded").glob("*/manifest.json"))
    large = args.users * args.models * args.length >= KEEP_MIN_CELLS  # (a smaller one's encoded tables are not kept)
    while large and not encoded and time.monotonic() < deadline:  # (the encoded dataset, on a worker thread too)
        time.sleep(1)
        encoded = list((home / "encoded").glob("*/manifest.json"))
    time.sleep(5)
    after, _ = rss_mib()  # (once they are kept: what an idle server holds)
    print(json.dumps({"kept_evaluations": len(kept), "kept_mib": round(sum(
        p.stat().st_size for p in (home / "results").iterdir()) / 2**20) if kept else 0,
        "kept_encoded_mib": round(sum(p.stat().st_size for p in encoded[0].parent.iterdir()) / 2**20)
        if encoded else 0}), flush=True)
    if args.prepared:  # (as after an upgrade: nothing kept applies; `workspaces prepare` keeps it anew)
        shutil.rmtree(home / "results")
        shutil.rmtree(home / "encoded")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "metrics_core", "workspaces", "prepare", workspace_id], check=True,
                       env={**os.environ, "MALLOC_ARENA_MAX": "2"})
        print(json.dumps({"step": "rankscope workspaces prepare (another process)",
                          "wall_s": round(time.perf_counter() - started, 1)}), flush=True)
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=3600)  # a restarted server
    at.query_params["ws"] = workspace_id
    step("reopened after a restart: Summary (the kept evaluation)", at.run)
    step("reopened: Overview", lambda: at.switch_page("views/overview.py").run())
    step("reopened: Users", lambda: at.switch_page("views/users.py").run())
    step("reopened: Popularity (waits for the tables, read meanwhile)", lambda: at.switch_page(
        "views/popularity.py").run())
    step("reopened: K = 5 on Popularity (read from the kept curves)", lambda: at.slider(key="k").set_value(5).run())
    step("reopened: Overview at K = 5", lambda: at.switch_page("views/overview.py").run())
    step("reopened: K = 7 on the Overview (read)", lambda: at.slider(key="k").set_value(7).run())
    step("reopened: Users at K = 7 (its metric per user at K, computed alone)", lambda: at.switch_page(
        "views/users.py").run())
    step("reopened: Scores at K = 7 (score entropy per user at K, alone)", lambda: at.switch_page(
        "views/scores.py").run())
    step("reopened: Compare at K = 7 (the tested metrics per user at K, alone)", lambda: at.switch_page(
        "views/compare.py").run())
    step("reopened: Summary at K = 7 (its verdict metrics per user at K, alone)", lambda: at.switch_page(
        "views/summary.py").run())
    step("reopened: K = 8 on the Summary (new)", lambda: at.slider(key="k").set_value(8).run())
    step("reopened: Compare at K = 8 (its first tab, the table)", lambda: at.switch_page("views/compare.py").run())
    for k, tab in ((9, "Is the difference real?"), (11, "Who gains, who loses"), (12, "Who is served"),
                   (13, "User by user"), (14, "Side by side")):  # (the table at a K no page computed before)
        def opened(k=k, tab=tab):
            at.session_state["compare_tab"] = tab
            return at.slider(key="k").set_value(k).run()
        step(f"reopened: Compare's {tab!r} tab at K = {k} (new)", opened)
    at.switch_page("views/summary.py").run()  # (not timed: the next steps change K on a page already open)
    step("reopened: K = 25 on the Summary (new, deeper: the work at a new K grows with K)",
         lambda: at.slider(key="k").set_value(25).run())
    at.switch_page("views/compare.py").run()
    step("reopened: K = 26 on Compare's 'Side by side' tab (new, deeper)",
         lambda: at.slider(key="k").set_value(26).run())
    print(json.dumps({"idle_rss_mib": round(idle), "open_rss_mib": round(current), "cached_mib": round(cached),
                      "peak_rss_mib": round(peak),
                      "closed_rss_mib": round(closed), "after_close_rss_mib": round(after),
                      "most_chart_rows": most_rows_seen[0]}), flush=True)
    if most_rows_seen[0] > MAX_CHART_ROWS:
        sys.exit(f"a chart held {most_rows_seen[0]:,} rows (at most {MAX_CHART_ROWS:,} may reach the browser)")


if __name__ == "__main__":
    main()
