"""`rankscope evaluate` against pyarrow's read of the same files, for each data shape written by
``bench/shapes.py`` (and the generator's own sorted directory), in paired rounds.

Each round runs, in fresh processes one right after the other, pyarrow's read of every input
file into pandas (``pq.read_table(...).to_pandas()``, or ``pyarrow.csv.read_csv(...)`` for CSV)
and the command on the same files (for CSV also Arrow's read given the column types its first
block has, as the command's own read is); the ratio is the median of the rounds' ratios, with their
range, then the ratio of each side's fastest run (the read of one file has a slow mode, 2-4x its
usual time and CPU, mostly system time, in some rounds: its median can hide it), each side's
median CPU seconds (user + system, every thread), and each process's own peak memory. The
rounds alternate which of the two runs first (the read first in odd rounds, the command first in
even ones), so neither side always meets a warmer page cache, and each round is listed with the
one-minute load average at its start: a noisy round shows as such. Usage::

    python bench/any_shape.py --data /tmp/syn1m --data /tmp/shapes1m/shuffled --data /tmp/shapes1m/text \\
        [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from run import median, spread, timed

READ = """
import pyarrow.csv as pacsv, pyarrow.parquet as pq
for path in {paths!r}:
    (pacsv.read_csv(path) if path.endswith('.csv') else pq.read_table(path)).to_pandas()
"""
TYPED_CSV_READ = """
import pyarrow.csv as pacsv
for path in {paths!r}:
    with pacsv.open_csv(path) as first_block:
        types = {{field.name: field.type for field in first_block.schema}}
    pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(column_types=types)).to_pandas()
"""


def inputs(data: Path) -> tuple[list[Path], Path]:
    """The recommendation files (one per model) and the ground truth of a shape directory."""
    recs = sorted(p for p in data.iterdir() if p.name.startswith("recs") and p.suffix in {".parquet", ".csv"})
    truth = next(p for p in data.iterdir() if p.stem == "ground_truth" and p.suffix == recs[0].suffix)
    return recs, truth


def measure(data: Path, repeat: int) -> dict:
    recs, truth = inputs(data)
    command = [sys.executable, "-m", "metrics_core", "evaluate", "--ground-truth", str(truth), "--k", "10"]
    for path in recs:
        command += ["--recommendations", f"{path.stem}={path}"]
    read = [sys.executable, "-c", READ.format(paths=[str(p) for p in [*recs, truth]])]
    typed = [sys.executable, "-c", TYPED_CSV_READ.format(paths=[str(p) for p in [*recs, truth]])]
    csv = recs[0].suffix == ".csv"
    reads, runs, typed_reads, loads = [], [], [], []
    for round_ in range(repeat):
        loads.append(os.getloadavg()[0])
        if round_ % 2 == 0:
            reads.append(timed(read))
            runs.append(timed(command))
        else:
            runs.append(timed(command))
            reads.append(timed(read))
        if csv:  # (the command gives Arrow the first block's types: the read it is also compared with)
            typed_reads.append(timed(typed))
    metrics = json.loads(runs[0].out)["models"]
    row = {"data": f"{data.parent.name}/{data.name}", "models": len(recs), "format": recs[0].suffix[1:],
           "read_s": [r.seconds for r in reads], "read_mem": max(r.peak for r in reads),
           "read_cpu": [r.cpu for r in reads], "cli_cpu": [r.cpu for r in runs],
           "cli_s": [r.seconds for r in runs], "cli_mem": max(r.peak for r in runs),
           "ratios": [c.seconds / r.seconds for r, c in zip(reads, runs, strict=True)], "load": loads,
           "ndcg@10": {name: values["metrics"]["ndcg"] for name, values in metrics.items()}}
    if csv:
        row["typed_read_s"] = [r.seconds for r in typed_reads]
        row["typed_read_cpu"] = [r.cpu for r in typed_reads]
        row["typed_ratios"] = [c.seconds / r.seconds for r, c in zip(typed_reads, runs, strict=True)]
    return row


def table(rows: list[dict]) -> str:
    gib = 2**30
    lines = ["| shape | models | pyarrow read into pandas | `rankscope evaluate` | ratio (rounds) "
             "| fastest / fastest | CPU, user + system (read / CLI) | memory (read / CLI) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['data']} ({r['format']}) | {r['models']} | {spread(r['read_s'], digits=1)} "
                     f"| {spread(r['cli_s'], digits=1)} | **{median(r['ratios']):.2f}×** "
                     f"({min(r['ratios']):.2f}–{max(r['ratios']):.2f}×) | {min(r['cli_s']) / min(r['read_s']):.2f}× "
                     f"| {median(r['read_cpu']):.2f} / {median(r['cli_cpu']):.2f} s "
                     f"| {r['read_mem'] / gib:.1f} / {r['cli_mem'] / gib:.1f} GiB |")
        if "typed_read_s" in r:
            lines.append(f"| {r['data']} against a read given the first block's types | {r['models']} "
                         f"| {spread(r['typed_read_s'], digits=1)} | {spread(r['cli_s'], digits=1)} "
                         f"| **{median(r['typed_ratios']):.2f}×** ({min(r['typed_ratios']):.2f}–"
                         f"{max(r['typed_ratios']):.2f}×) | {min(r['cli_s']) / min(r['typed_read_s']):.2f}× "
                         f"| {median(r['typed_read_cpu']):.2f} / "
                         f"{median(r['cli_cpu']):.2f} s | |")
    return "\n".join(lines)


def rounds_table(rows: list[dict]) -> str:
    """Every round of every shape: the load average at its start, both times (with their CPU
    seconds) and their ratio."""
    lines = ["| shape | round (first) | load average | read (CPU) | command (CPU) | ratio |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        for i, (load, read, read_cpu, run, run_cpu, ratio) in enumerate(zip(
                r["load"], r["read_s"], r["read_cpu"], r["cli_s"], r["cli_cpu"], r["ratios"], strict=True)):
            lines.append(f"| {r['data']} | {i + 1} ({'read' if i % 2 == 0 else 'command'}) | {load:.2f} "
                         f"| {read:.2f} s ({read_cpu:.2f} s) | {run:.2f} s ({run_cpu:.2f} s) | {ratio:.2f}× |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", action="append", required=True, type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M")
    rows = []
    for data in args.data:
        rows.append(measure(data, args.repeat))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    text = (f"Measured {started} on this machine ({os.cpu_count()} cores).\n\n{table(rows)}\n\nEvery round:\n\n"
            f"{rounds_table(rows)}\n\n```\n{json.dumps(rows, indent=1)}\n```\n")
    (Path(__file__).parent / "results").mkdir(exist_ok=True)
    (Path(__file__).parent / "results" / "shapes.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
