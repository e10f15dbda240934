"""Memory an upload costs the app: peak and held RSS of building and evaluating one uploaded
CSV workspace, for integer ids and for text ids (the basis of the app's upload limit).

    python bench/upload_memory.py [--users 400000] [--k 50]

Each case runs in a fresh process that reads the files' bytes (as an upload arrives), builds
the workspace's dataset and evaluates it with curves, as the Overview does.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

MEASURE = """
import resource, sys, time
from dashboard.workspace import Workspace
from metrics_core import Settings
from metrics_core.inputs.read import TableFile

def rss_mib():
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) / 1024

folder, kind = sys.argv[1], sys.argv[2]
idle = rss_mib()
recs, truth = (open(f"{folder}/{name}_{kind}.csv", "rb").read() for name in ("recs", "truth"))
upload = (len(recs) + len(truth)) / 2**20
start = time.perf_counter()
dataset = Workspace(label="bench", models={"m": TableFile("m.csv", recs)},
                    ground_truth=TableFile("t.csv", truth)).build()
dataset.evaluate_all(Settings(k=10), curves=True)
seconds = time.perf_counter() - start
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024 - idle
print(f"{kind:>4} ids: upload {upload:5.0f} MB, peak {peak:6.0f} MB above idle ({peak / upload:4.1f}x), "
      f"held {rss_mib() - idle:5.0f} MB, {seconds:5.1f} s")
"""


def write(folder: Path, kind: str, users: int, k: int) -> None:
    rng = np.random.default_rng(0)
    user = np.repeat(np.arange(users), k)
    item = rng.integers(0, 50_000, users * k)
    if kind == "text":
        user = np.char.add("user-0000-", user.astype(str))
        item = np.char.add("SKU-", item.astype(str))
    recs = pd.DataFrame({"user_id": user, "item_id": item, "rank": np.tile(np.arange(1, k + 1), users),
                         "score": rng.random(users * k).round(4)})
    recs.to_csv(folder / f"recs_{kind}.csv", index=False)
    recs.iloc[::7][["user_id", "item_id"]].to_csv(folder / f"truth_{kind}.csv", index=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=400_000)
    parser.add_argument("--k", type=int, default=50)
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as folder:
        for kind in ("int", "text"):
            write(Path(folder), kind, args.users, args.k)
            subprocess.run([sys.executable, "-c", MEASURE, folder, kind], check=True, cwd=root)


if __name__ == "__main__":
    main()
