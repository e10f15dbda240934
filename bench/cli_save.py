"""Large data's road into the app: ``rankscope evaluate --save`` on the files of
``bench/app_scale.py``'s workspace, then the link it prints opened in a fresh app (AppTest, an
empty cache), timed step by step (issue #43).

Usage: python bench/cli_save.py --store DIR [--users 1000000 --models 4 --length 100 --train-rows 40000000]

DIR is a store ``bench/app_scale.py --store DIR`` wrote with the same sizes. Prints one JSON line
per step: the command (reading, encoding, evaluating at every k, storing, keeping the evaluation
for the app), then the Summary and the Overview opened from the printed link.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--length", type=int, default=100)
    parser.add_argument("--train-rows", type=int, default=40_000_000)
    args = parser.parse_args()
    os.environ["RANKSCOPE_HOME"] = str(args.store)
    from metrics_core.store import Store

    marker = args.store / f"workspace-{args.users}-{args.models}-{args.length}-{args.train_rows}"
    saved = Store(args.store).workspace(marker.read_text())
    command = [sys.executable, "-m", "metrics_core", "evaluate", "--ground-truth", str(saved.ground_truth.path),
               "--train", str(saved.train.path), "--items", str(saved.items.path), "--relevance-column", "rating",
               "--relevance-threshold", "4", "--feature-columns", "genre", "--save", "from the command line",
               *[f"--recommendations={name}={table.path}" for name, table in saved.models.items()]]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "MALLOC_ARENA_MAX": "2"})
    if done.returncode != 0:
        sys.exit(done.stderr)
    print(json.dumps({"step": "rankscope evaluate --save (4 models, every k, stored, kept for the app)",
                      "wall_s": round(time.perf_counter() - started, 1)}), flush=True)
    link = re.search(r"open it in the app: (\S+)", done.stderr).group(1)
    query = dict(parse_qsl(urlparse(link).query))
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=3600)
    at.query_params.update(query)
    for name, action in (("the printed link: Summary", at.run),
                         ("then Overview", lambda: at.switch_page("views/overview.py").run())):
        started, cpu = time.perf_counter(), time.process_time()
        action()
        errors = [e.value for e in at.error] + [e.value for e in at.exception]
        print(json.dumps({"step": name, "wall_s": round(time.perf_counter() - started, 2),
                          "cpu_s": round(time.process_time() - cpu, 2), "errors": errors[:1]}), flush=True)


if __name__ == "__main__":
    main()
