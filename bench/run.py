"""Benchmark: rankscope against reading the data and against peers, in one run.

Data: directories written by ``../shared/tools/make_synthetic.py --n-users N --top-k 100``
(recs.parquet, ground_truth.parquet). Every measurement runs in a fresh process so that
peak memory is its own. Each timed step is repeated ``--repeat`` times (fresh processes for
the read and the CLI, the in-memory steps in one process) and the table shows the median, with
the range. The read and the CLI run in rounds, one right after the other, and their ratio is
the median of the rounds' ratios. Peers are timed in rounds, each a fresh process for rankscope and one for the peer,
one after the other, both timing their second call (the first warms caches and JIT): the
ratio is the median of the rounds' ratios, so both sides of a ratio see the same state of the
machine (timings on a VM drift). Both compute the same six metrics at K = 10 (precision,
recall, NDCG, MAP, MRR, hit rate): rankscope's ``Dataset.build`` and ``Dataset.metrics_at``. Usage::

    python bench/run.py --data /tmp/syn100k --data /tmp/syn1m [--repeat 5] \\
        [--peers-python .venv/bin/python] [--rectools-python /path/to/venv/bin/python]

Prints a Markdown table (the README's benchmark table) and writes bench/results/latest.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent

READ = """
import pyarrow.parquet as pq
recs = pq.read_table('{d}/recs.parquet').to_pandas()
truth = pq.read_table('{d}/ground_truth.parquet').to_pandas()
"""

IN_MEMORY = """
import json, time, pyarrow.parquet as pq
import numpy as np
from metrics_core import Dataset, Settings
from metrics_core.metrics import accuracy
def peak():
    return int(dict(l.split(':', 1) for l in open('/proc/self/status'))['VmHWM'].split()[0]) * 1024
def reset():
    open('/proc/self/clear_refs', 'w').write('5')
recs = pq.read_table('{d}/recs.parquet').to_pandas()
truth = pq.read_table('{d}/ground_truth.parquet').to_pandas()
out = {{"build": [], "metrics": [], "k10": []}}
for run in range({repeat}):
    reset(); base = peak()
    t = time.perf_counter(); ds = Dataset.build(recs, truth); out["build"].append(time.perf_counter() - t)
    out["build_mem"] = peak() - base
    t = time.perf_counter(); ds.evaluate(ds.models[0], Settings(k=10), curves=False, beyond=False)
    out["k10"].append(time.perf_counter() - t)
    lists = ds.lists[ds.models[0]]; rows = np.flatnonzero(ds.truth.relevant_count > 0)
    reset(); base = peak()
    t = time.perf_counter()
    result = accuracy.accuracy_pass(lists, ds.truth, rows, Settings(k=100), None, curves=True)
    out["metrics"].append(time.perf_counter() - t)
    out["metrics_mem"] = peak() - base
    assert len(result.sums["ndcg"]) == 100
    del ds, lists, result
print(json.dumps(out))
"""


OURS_ONCE = """
import time, pyarrow.parquet as pq
from metrics_core import Dataset, Settings
recs = pq.read_table('{d}/recs.parquet').to_pandas()
truth = pq.read_table('{d}/ground_truth.parquet').to_pandas()
six = ["precision", "recall", "ndcg", "map", "mrr", "hit_rate"]  # (what the peers compute)
for call in range(2):  # the second call is timed, as the peers' is
    t = time.perf_counter()
    ds = Dataset.build(recs, truth)
    ds.metrics_at(ds.models[0], Settings(k=10), six)
    seconds = time.perf_counter() - t
    del ds
print(seconds)
"""


class Timed(NamedTuple):
    """One fresh process's run: wall seconds, peak RSS bytes, its stdout, and its CPU seconds
    (user + system, all its threads: on two cores a run's wall time is at least its
    single-threaded part plus half the rest)."""

    seconds: float
    peak: int
    out: str
    cpu: float


def timed(command: list[str]) -> Timed:
    """``command`` run in a fresh process, timed (see :class:`Timed`)."""
    wrapper = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "out = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=True).stdout\n"
        "used = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(time.perf_counter() - t, used.ru_maxrss * 1024, used.ru_utime + used.ru_stime)\n"
        "print(out, end='')\n"
    )
    done = subprocess.run([sys.executable, "-c", wrapper, *command], capture_output=True, text=True, check=True)
    first, _, rest = done.stdout.partition("\n")
    seconds, peak, cpu = first.split()
    return Timed(float(seconds), int(peak), rest, float(cpu))


def median(values: list[float]) -> float:
    return statistics.median(values)


def spread(values: list[float], unit: str = " s", digits: int = 2) -> str:
    """The median, with the range when the runs differ."""
    low, mid, high = min(values), median(values), max(values)
    if len(values) == 1 or f"{low:.{digits}f}" == f"{high:.{digits}f}":
        return f"{mid:.{digits}f}{unit}"
    return f"{mid:.{digits}f}{unit} ({low:.{digits}f}–{high:.{digits}f})"


def measure(data: Path, repeat: int, peers_python: str | None, rectools_python: str | None) -> dict:
    meta = json.loads((data / "meta.json").read_text())
    row: dict = {"data": data.name, "users": meta.get("n_users") or meta.get("params", {}).get("n_users")}
    cli = [sys.executable, "-m", "metrics_core", "evaluate", "--recommendations", str(data / "recs.parquet"),
           "--ground-truth", str(data / "ground_truth.parquet"), "--k", "10"]
    reads, runs = [], []
    for _ in range(repeat):  # rounds: the read, then the CLI right after it
        reads.append(timed([sys.executable, "-c", READ.format(d=data)]))
        runs.append(timed(cli))
    row["read_s"], row["read_mem"] = [r.seconds for r in reads], max(r.peak for r in reads)
    row["cli_s"], row["cli_mem"] = [r.seconds for r in runs], max(r.peak for r in runs)
    row["cli_ratios"] = [c.seconds / r.seconds for r, c in zip(reads, runs, strict=True)]
    row["ndcg@10"] = json.loads(runs[0].out)["models"]["recs"]["metrics"]["ndcg"]
    out = timed([sys.executable, "-c", IN_MEMORY.format(d=data, repeat=repeat)]).out
    row.update(json.loads(out))
    row["ours"] = [b + k for b, k in zip(row["build"], row["k10"], strict=True)]
    for peer, python in (("ranx", peers_python), ("pytrec_eval", peers_python), ("rectools", rectools_python)):
        if python and (row["users"] or 0) <= 200_000:
            try:
                row[peer] = paired_rounds(data, peer, python, repeat)
            except subprocess.CalledProcessError as error:
                row[peer] = f"failed: {error.stderr.strip().splitlines()[-1][:80]}"
    return row


def paired_rounds(data: Path, peer: str, python: str, rounds: int) -> dict:
    """Per round: rankscope's and the peer's second call, each in a fresh process."""
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(float(timed([sys.executable, "-c", OURS_ONCE.format(d=data)]).out))
        out = timed([python, str(HERE / "peers.py"), peer, str(data), "10", "1", "1"]).out
        theirs.append(json.loads(out)["seconds"][0])
    return {"ours": ours, "seconds": theirs, "ratios": [t / o for o, t in zip(ours, theirs, strict=True)]}


def table(rows: list[dict]) -> str:
    gib = 2**30
    lines = [
        "| data | users x list | pyarrow read | `rankscope evaluate` (CLI, end to end) | encode once "
        "| every accuracy metric at every k <= 100 | ours for the peers (encode + K = 10) | ranx | pytrec_eval "
        "| rectools |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:

        def peer(name: str, r: dict = r) -> str:
            value = r.get(name)
            if value is None:
                return "not run"
            if isinstance(value, str):
                return value
            low, high = min(value["ratios"]), max(value["ratios"])
            return (f"{spread(value['seconds'], digits=1)} vs ours {spread(value['ours'])}: "
                    f"**{median(value['ratios']):.0f}×** ({low:.0f}–{high:.0f}×)")

        lines.append(
            f"| {r['data']} | {r['users']:,} x 100 | {spread(r['read_s'], digits=1)}, {r['read_mem'] / gib:.1f} GiB "
            f"| {spread(r['cli_s'], digits=1)}: **{median(r['cli_ratios']):.2f}×** the read "
            f"({min(r['cli_ratios']):.2f}–{max(r['cli_ratios']):.2f}×), "
            f"{r['cli_mem'] / gib:.1f} GiB "
            f"| {spread(r['build'])}, +{r['build_mem'] / gib:.1f} GiB "
            f"| {spread(r['metrics'])}, +{r['metrics_mem'] / gib:.2f} GiB | {spread(r['ours'])} "
            f"| {peer('ranx')} | {peer('pytrec_eval')} | {peer('rectools')} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", action="append", required=True, type=Path)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each timed step (median reported)")
    parser.add_argument("--peers-python", help="interpreter with ranx and pytrec-eval-terrier")
    parser.add_argument("--rectools-python", help="interpreter with rectools (numpy < 2)")
    args = parser.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M")
    rows = [measure(d, args.repeat, args.peers_python, args.rectools_python) for d in args.data]
    text = f"Measured {started} on this machine (2 cores).\n\n{table(rows)}\n\n```\n{json.dumps(rows, indent=1)}\n```\n"
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "latest.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
