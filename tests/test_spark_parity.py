"""The Spark engine gives the in-memory engine's numbers, refusals and warnings on the same
awkward inputs (issue #42): an empty table, ids that cannot match, duplicate items, missing
ids, unusable scores and ranks, no order column, an empty ground truth. Each case is a
Parquet file (what the Spark engine reads) evaluated by both engines; refusals compare their
file, column and problem with its count of rows over the whole table (the rows shown are one
partition's), warnings compare exactly."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from corpus import CASES as FILES
from corpus import write

from metrics_core import Columns, InputError, Settings, evaluate

pytest.importorskip("pyspark")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("java") is None, reason="no Java for Spark")]

TRUTH = pd.DataFrame({"user_id": [1, 1, 2, 3], "item_id": [1, 3, 4, 5]})
RECS = pd.DataFrame({"user_id": [1, 1, 1, 2, 2, 3, 3], "item_id": [1, 2, 3, 1, 4, 2, 3], "rank": [1, 2, 3, 1, 2, 1, 2]})
SCORED = RECS.drop(columns="rank").assign(score=[0.9, 0.5, 0.4, 0.7, 0.2, 0.1, 0.05])
CASES = {
    "plain": (RECS, TRUTH),
    "fractional item ids": (RECS.assign(item_id=RECS.item_id + 0.5), TRUTH),
    "text ids against numbers": (RECS.assign(item_id="i" + RECS.item_id.astype(str)), TRUTH),
    "duplicate item in a list": (pd.concat([RECS, RECS.iloc[:1].assign(rank=4)]), TRUTH),
    "rank gaps": (RECS.assign(rank=RECS["rank"] * 2), TRUTH),
    "users without relevant items": (pd.concat([RECS, pd.DataFrame({"user_id": [9], "item_id": [1], "rank": [1]})]),
                                     TRUTH),
    "graded truth below the threshold": (RECS, TRUTH.assign(rating=[5, 1, 4, 5])),
    "duplicate truth rows": (RECS, pd.concat([TRUTH, TRUTH.iloc[:1]])),
    "duplicate rows": (pd.concat([RECS, RECS.iloc[:1]]), TRUTH),
    "missing item id": (RECS.assign(item_id=RECS.item_id.astype("Int64").where(RECS.index != 2)), TRUTH),
    "nan score": (SCORED.assign(score=SCORED.score.where(SCORED.index != 2)), TRUTH),
    "fractional rank": (RECS.assign(rank=RECS["rank"] + 0.5), TRUTH),
    "no rank or score": (RECS.drop(columns="rank"), TRUTH),
    "empty recommendations": (RECS.iloc[:0], TRUTH),
    "empty ground truth": (RECS, TRUTH.iloc[:0]),
    "no user in common": (RECS.assign(user_id=RECS.user_id + 100), TRUTH),
}


@pytest.fixture(scope="module")
def spark():
    from metrics_core.engines.spark.engine import local_session

    session = local_session("local[2]", quiet=True)
    yield session
    session.stop()


def _columns(truth: pd.DataFrame) -> Columns:
    return Columns(relevance="rating", threshold=3) if "rating" in truth.columns else Columns()


def _problem(error: InputError) -> tuple[str, str | None, str]:
    """The refusal's table, column and problem (its count included; the rows shown are left out:
    Spark shows one partition's)."""
    problem = error._problem.replace(" (the rows shown are one Spark partition's, numbered within it)", "").replace(
        "the file has", "the table has")
    return re.sub(r" '[^']*'", "", error.source.split(" (")[0]), error.column, problem


def _both_engines_agree(spark, recs_path, truth_path, columns: Columns) -> None:
    from metrics_core.engines.spark.engine import evaluate_spark

    try:
        memory = evaluate(recs_path, truth_path, k=3, columns=columns)
    except InputError as error:
        memory = error
    try:
        on_spark = evaluate_spark(spark.read.parquet(str(recs_path)), spark.read.parquet(str(truth_path)), k=3,
                                  columns=columns, bootstrap=0, per_user=False, model="recs", settings=Settings(k=3))
    except InputError as error:
        on_spark = error
    if isinstance(memory, InputError):
        assert isinstance(on_spark, InputError), f"memory refuses ({memory}), Spark gave numbers"
        assert _problem(on_spark) == _problem(memory)
        return
    assert not isinstance(on_spark, InputError), str(on_spark)
    for metric, value in memory.metrics.items():
        if metric in on_spark.metrics and np.isfinite(value):
            assert on_spark.metrics[metric] == pytest.approx(value, abs=1e-12), metric
    assert [n.message for n in on_spark.warnings] == [n.message for n in memory.warnings]


@pytest.mark.parametrize("partitions_read_the_files", [True, False])
@pytest.mark.parametrize("case", CASES)
def test_both_engines_give_the_same_numbers_refusals_and_warnings(tmp_path, spark, monkeypatch, case,
                                                                  partitions_read_the_files):
    """On both of the Spark engine's roads: the partitions reading the Parquet files themselves
    (every case that reaches the reading takes that road: none falls back to Spark's reader
    unseen), and Spark's own reader (tests/test_spark_files.py)."""
    from metrics_core.engines.spark import files

    monkeypatch.setattr(files, "READ_BY_PARTITIONS", partitions_read_the_files)
    roads = []
    by_files = files.rows_by_files
    monkeypatch.setattr(files, "rows_by_files", lambda *args: roads.append(by_files(*args)) or roads[-1])
    recs, truth = CASES[case]
    recs.to_parquet(tmp_path / "recs.parquet")
    truth.to_parquet(tmp_path / "truth.parquet")
    _both_engines_agree(spark, tmp_path / "recs.parquet", tmp_path / "truth.parquet", _columns(truth))
    assert all(road is not None for road in roads)


READABLE = [c for c in FILES if c.name not in ("xlsx", "binary garbage", "zip of two files", "empty file",
                                               "header only", "truncated parquet", "trec run with 7 fields")]


@pytest.mark.parametrize("case", READABLE, ids=[c.name for c in READABLE])
def test_the_bad_file_corpus_as_parquet_gives_the_same_answers_on_both_engines(tmp_path, spark, case):
    """tests/corpus.py's files, read as the command line reads them and written as Parquet (what
    the Spark engine reads; as the store keeps them), through both engines."""
    from metrics_core.inputs.read import read_table
    from metrics_core.store.files import write_parquet

    recs, truth = write(case, tmp_path / "files")
    parquet = {}
    for name, path in (("recs", recs), ("truth", truth)):
        try:
            frame = read_table(path, name)[0]
        except InputError:
            pytest.skip(f"the reader refuses {path.name}: no table to give either engine")
        parquet[name] = tmp_path / f"{name}.parquet"
        write_parquet(parquet[name], frame)
    _both_engines_agree(spark, parquet["recs"], parquet["truth"],
                        Columns(relevance="relevance") if truth.suffix == ".qrels" else Columns())


def _rankscope(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metrics_core", "evaluate", *args], capture_output=True, text=True,
                          timeout=300, env={k: v for k, v in os.environ.items() if k != "RANKSCOPE_DEBUG"})


@pytest.mark.parametrize("case", ["empty recommendations", "empty ground truth", "nan score", "fractional item ids",
                                  "no rank or score"])
def test_the_command_line_says_what_memory_says_naming_the_file_without_tracebacks(tmp_path, case):
    recs, truth = CASES[case]
    recs.to_parquet(tmp_path / "recs.parquet")
    truth.to_parquet(tmp_path / "truth.parquet")
    args = ["--recommendations", f"m={tmp_path / 'recs.parquet'}", "--ground-truth", str(tmp_path / "truth.parquet"),
            "--k", "3"]
    memory, on_spark = _rankscope(*args), _rankscope(*args, "--engine", "spark", "--bootstrap", "0")
    assert on_spark.returncode == memory.returncode, (memory.stderr, on_spark.stderr)
    assert "Traceback" not in on_spark.stderr and "Spark DataFrame" not in on_spark.stderr
    assert len(on_spark.stderr.splitlines()) <= len(memory.stderr.splitlines()) + 1, on_spark.stderr
    first = next(line for line in memory.stderr.splitlines() if line.startswith("rankscope:"))
    said = next(line for line in on_spark.stderr.splitlines() if line.startswith("rankscope:"))
    assert said.replace(" (the rows shown are one Spark partition's, numbered within it)", "") == first
    if memory.returncode == 0:
        assert json.loads(on_spark.stdout)["models"]["m"]["warnings"] == \
            json.loads(memory.stdout)["models"]["m"]["warnings"]
