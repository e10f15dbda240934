"""The audit of the data before the numbers: leakage, training items recommended, lists much
shorter than K, sampled candidates, ties at the cut-off; counted in every result's notes, and
``--strict`` fails the command line on any of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd

from metrics_core import Dataset, Settings
from tests.compiled import compiled_loops

RECS = pd.DataFrame({"user_id": [1, 1, 1, 2, 2, 3], "item_id": [10, 11, 12, 10, 13, 14], "rank": [1, 2, 3, 1, 2, 1]})
TRUTH = pd.DataFrame({"user_id": [1, 2, 3], "item_id": [11, 13, 99]})
TRAIN = pd.DataFrame({"user_id": [1, 1, 1, 2, 3], "item_id": [10, 11, 11, 5, 6]})


def audit(settings: Settings, train=TRAIN) -> dict[str, int]:
    result = Dataset.build(RECS, TRUTH, train=train).evaluate(settings=settings)
    return {note.code: note.count for note in result.warnings}


def test_each_finding_is_counted():
    found = audit(Settings(k=4, candidates=3))
    assert found["truth_in_training"] == 1  # (user 1, item 11), however often training repeats it
    assert found["seen_in_training"] == 2  # user 1's items 10 and 11
    assert found["short_lists"] == 1  # user 3: one item, fewer than half of K = 4
    assert found["sampled_candidates"] == 1  # 3 candidates of a catalog of 4 training items
    assert "ties_at_cutoff" not in found


def test_a_clean_split_finds_nothing_and_k_decides_what_is_short_and_seen():
    clean = TRAIN.assign(item_id=[20, 21, 21, 22, 23])
    assert not {"truth_in_training", "seen_in_training"} & set(audit(Settings(k=4), train=clean))
    assert "short_lists" not in audit(Settings(k=2))
    assert audit(Settings(k=1))["seen_in_training"] == 1  # (only user 1's first item)
    assert "sampled_candidates" not in audit(Settings(k=4))


def rankscope(tmp_path, *args: str) -> subprocess.CompletedProcess:
    for name, frame in (("recs", RECS), ("truth", TRUTH), ("train", TRAIN)):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    files = ["--recommendations", f"a={tmp_path / 'recs.csv'}", "--ground-truth", str(tmp_path / "truth.csv"),
             "--train", str(tmp_path / "train.csv")]
    return subprocess.run([sys.executable, "-m", "metrics_core", *args[:1], *files, *args[1:]], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "RANKSCOPE_HOME": str(tmp_path / "store")})


def test_strict_fails_the_command_line_on_any_finding(tmp_path):
    loose = rankscope(tmp_path, "evaluate", "--k", "4")
    assert loose.returncode == 0 and "strict" not in loose.stderr
    codes = {note for note in json.loads(loose.stdout)["models"]["a"]["warnings"]}
    assert any("training data too" in message for message in codes)
    strict = rankscope(tmp_path, "evaluate", "--k", "4", "--strict")
    assert strict.returncode == 1 and json.loads(strict.stdout)["models"]["a"]["metrics"]
    assert "strict [a]: 1 relevant (user, item) pairs of the ground truth are in the training" in strict.stderr
    assert strict.stderr.count("rankscope: strict [a]") == 3
    compared = rankscope(tmp_path, "compare", "--k", "4", "--strict", "--recommendations", f"b={tmp_path / 'recs.csv'}",
                         "--bootstrap", "20")
    assert compared.returncode == 1 and "strict [b]" in compared.stderr


def test_training_items_in_the_lists_are_found_alike_by_the_compiled_pass_and_the_small_path(monkeypatch):
    """Large lists are marked by one compiled pass over the training matrix's rows; it finds the
    same cells as the small path's key look-up, repeats in training and users without training
    included."""
    import numpy as np


    rng = np.random.default_rng(7)
    users, length, items = 300, 12, 60
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(users), length), "item_id": np.concatenate(
        [rng.choice(items, length, replace=False) for _ in range(users)]), "rank": np.tile(np.arange(1, length + 1),
                                                                                            users)})
    train = pd.DataFrame({"user_id": rng.integers(0, users - 20, 4_000), "item_id": rng.integers(0, items, 4_000)})
    truth = pd.DataFrame({"user_id": np.arange(users), "item_id": rng.integers(0, items, users)})
    data = Dataset.build(recs, truth, train=train)
    lists = data.lists[data.models[0]]
    small = lists.seen_per_place(data.training)
    lists.__dict__.pop("_seen")
    compiled_loops(monkeypatch)
    compiled = lists.seen_per_place(data.training)
    assert np.array_equal(small, compiled) and 0 < small.sum() < users * length
    seen = set(zip(train.user_id, train.item_id, strict=True))
    by_place = np.bincount([rank - 1 for user, item, rank in zip(recs.user_id, recs.item_id, recs["rank"],
                                                                 strict=True) if (user, item) in seen],
                           minlength=length)
    assert small.tolist() == by_place.tolist()


def test_ground_truth_dated_before_its_users_training_is_found_on_every_path(tmp_path):
    """User 1's relevant item 11 is dated 5, before its last training row (9): the split is not by
    time. User 2's truth (dated 20) comes after its training (10); user 3 has no training row; a
    relevant row without a date, and tables without timestamps, count nothing. The count is the
    same read from Parquet (the timestamp read with the other columns) and fails --strict."""
    truth = TRUTH.assign(timestamp=[5, 20, None])
    train = TRAIN.assign(timestamp=[1, 9, 3, 10, 2])
    result = Dataset.build(RECS, truth, train=train).evaluate(settings=Settings(k=4))
    found = {note.code: note.count for note in result.warnings}
    assert found["truth_before_training"] == 1 and "truth_before_training" not in audit(Settings(k=4), train=TRAIN)
    late = truth.assign(timestamp=[50, 60, 70])
    assert "truth_before_training" not in {n.code for n in Dataset.build(RECS, late, train=train).evaluate().warnings}
    truth.to_parquet(tmp_path / "truth.parquet")
    train.to_parquet(tmp_path / "train.parquet")
    from_files = Dataset.build(RECS, tmp_path / "truth.parquet", train=tmp_path / "train.parquet").evaluate()
    assert {n.code: n.count for n in from_files.warnings}["truth_before_training"] == 1
