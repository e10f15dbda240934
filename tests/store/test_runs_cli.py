"""``--save`` on evaluate and compare, then ``rankscope runs list/show/compare``, as a shell
user runs them (RANKSCOPE_HOME pointing at a fresh store)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from lists import random_lists


def rankscope(home, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "RANKSCOPE_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "metrics_core", *args], capture_output=True, text=True, timeout=120,
                          env=env)


@pytest.fixture
def files(tmp_path):
    recs = random_lists(80, 40, seed=1)
    better = recs.assign(item_id=np.where(recs["rank"] == 1, recs["user_id"] % 40, recs["item_id"]))
    truth = pd.DataFrame({"user_id": np.arange(80), "item_id": np.arange(80) % 40})
    paths = {"a": tmp_path / "model_a.csv", "b": tmp_path / "model_b.parquet", "truth": tmp_path / "truth.csv"}
    recs.to_csv(paths["a"], index=False)
    better.drop_duplicates(["user_id", "item_id"]).to_parquet(paths["b"])
    truth.to_csv(paths["truth"], index=False)
    return paths


def test_saved_runs_are_listed_shown_and_compared(tmp_path, files):
    home = tmp_path / "store"
    first = rankscope(home, "evaluate", "--recommendations", f"ranker={files['a']}", "--ground-truth",
                      str(files["truth"]), "--save", "shop", "--note", "baseline week 1")
    assert first.returncode == 0, first.stderr
    assert "saved run" in first.stderr and "'shop'" in first.stderr
    second = rankscope(home, "compare", "--recommendations", f"ranker={files['b']}", "--recommendations",
                       f"old={files['a']}", "--ground-truth", str(files["truth"]), "--save", "shop")
    assert second.returncode == 0, second.stderr
    listed = rankscope(home, "runs", "list", "--workspace", "shop", "--format", "json")
    rows = json.loads(listed.stdout)
    assert [(r["model"], r["note"]) for r in rows] == [("ranker", "baseline week 1"), ("ranker", ""), ("old", "")]
    first_id, second_id = rows[0]["run"], rows[1]["run"]
    evaluated = json.loads(rankscope(tmp_path, "evaluate", "--recommendations", f"ranker={files['a']}",
                                     "--ground-truth", str(files["truth"])).stdout)
    assert rows[0]["ndcg"] == pytest.approx(evaluated["models"]["ranker"]["metrics"]["ndcg"], abs=1e-12)
    assert rows[2]["ndcg"] == pytest.approx(rows[0]["ndcg"], abs=1e-12)  # the same file in the second run
    assert rows[0]["ndcg_low"] < rows[0]["ndcg"] < rows[0]["ndcg_high"]
    table = rankscope(home, "runs", "list", "--model", "ranker")
    assert table.returncode == 0 and first_id in table.stdout and "baseline week 1" in table.stdout
    shown = json.loads(rankscope(home, "runs", "show", first_id).stdout)
    assert shown["note"] == "baseline week 1" and shown["settings"]["k"] == 10 and shown["workspace_name"] == "shop"
    compared = rankscope(home, "runs", "compare", first_id, second_id, "--metrics", "ndcg,recall")
    assert compared.returncode == 0, compared.stderr
    rows = json.loads(compared.stdout)["ranker"]["rows"]
    assert {r["metric"] for r in rows} == {"ndcg", "recall"} and all(r["delta"] > 0 for r in rows)
    assert all(r["users"] == 80 for r in rows)
    # the same csv stored once though saved twice; the workspace holds the second call's files
    assert len(list((home / "tables").glob("*.parquet"))) == 3


def test_an_unknown_run_and_an_unwritable_store_exit_2_with_the_fix(tmp_path, files):
    missing = rankscope(tmp_path / "store", "runs", "show", "nope")
    assert missing.returncode == 2 and "no run has the id 'nope'" in missing.stderr and "runs list" in missing.stderr
    blocked = tmp_path / "a file"
    blocked.write_text("")
    unwritable = rankscope(blocked, "evaluate", "--recommendations", str(files["a"]), "--ground-truth",
                           str(files["truth"]), "--save", "x")
    assert unwritable.returncode == 2 and "RANKSCOPE_HOME" in unwritable.stderr and "Traceback" not in unwritable.stderr
    empty = rankscope(tmp_path / "fresh", "runs", "list")
    assert empty.returncode == 0 and "no saved runs" in empty.stdout
