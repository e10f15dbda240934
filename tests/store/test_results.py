"""Evaluations kept with a saved workspace (metrics_core/store/results.py): read back equal to
what was kept, for every kind of id; a damaged or half-written pair is absent; at most KEEP per
workspace; purged with their workspace. The app opens a saved workspace from them without
reading its tables, then reads the tables meanwhile for the pages that need them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics_core import Columns, Dataset, Settings
from metrics_core.settings import Encoding
from metrics_core.store import Store
from metrics_core.store import results as kept_results


def evaluated(user_ids) -> dict:
    rng = np.random.default_rng(0)
    n = len(user_ids)
    recs = pd.DataFrame({"user_id": np.repeat(user_ids, 5), "item_id": rng.integers(0, 30, n * 5),
                         "score": rng.random(n * 5)}).drop_duplicates(["user_id", "item_id"])
    truth = pd.DataFrame({"user_id": np.repeat(user_ids, 2), "item_id": rng.integers(0, 30, n * 2),
                          "grade": rng.integers(0, 3, n * 2)}).drop_duplicates(["user_id", "item_id"])
    train = pd.DataFrame({"user_id": np.repeat(user_ids, 3), "item_id": rng.integers(0, 30, n * 3)})
    data = Dataset.build({"a": recs, "b": recs.assign(score=rng.random(len(recs)))}, truth, train=train,
                         columns=Columns(relevance="grade", threshold=1))
    return (data.evaluate_all(Settings(k=3), beyond_curves=True),
            {name: lists.positions for name, lists in data.lists.items()})


@pytest.mark.parametrize("rows", ["as written", "interleaved"])
@pytest.mark.parametrize("ids", ["numbers", "text"])
def test_what_is_read_back_equals_what_was_kept(ids, rows, tmp_path):
    """Each model's rows are a slice of the kept table as it is written (no copy of a million
    rows), and are found wherever they are in a table written otherwise."""
    user_ids = np.arange(40) * 7 if ids == "numbers" else np.array([f"user {i}" for i in range(40)], dtype=object)
    results, positions = evaluated(user_ids)
    key = kept_results.results_key("f" * 64, Encoding(), Settings(k=3))
    kept_results.save_results(tmp_path, key, results, positions)
    if rows == "interleaved":  # (a, b, a, b, ...: each model's users still in their order)
        path = tmp_path / "results" / f"{key}.parquet"
        table = pd.read_parquet(path)
        place = table.groupby(kept_results.MODEL).cumcount().to_numpy()
        table.iloc[np.argsort(place, kind="stable")].to_parquet(path, index=False)
    back, back_positions = kept_results.load_results(tmp_path, key, Settings(k=3), Encoding())
    assert back_positions == positions and list(back) == list(results)
    for name, result in results.items():
        mine = back[name]
        assert mine.metrics == pytest.approx(result.metrics, rel=0, abs=0, nan_ok=True)
        assert list(mine.metrics) == list(result.metrics)
        # (evenly spaced ids come back as a RangeIndex: the same values)
        pd.testing.assert_frame_equal(mine.per_user, result.per_user, check_index_type=False)
        assert [str(u) for u in mine.per_user.index] == [str(u) for u in result.per_user.index]
        pd.testing.assert_frame_equal(mine.curves, result.curves)
        assert {"serendipity_primitive", "unexpectedness", "11pt_avg"} <= set(result.beyond_curves.sd.columns)
        for part in ("values", "users", "sd"):  # (the beyond-accuracy curves: another K is read from them)
            pd.testing.assert_frame_equal(getattr(mine.beyond_curves, part), getattr(result.beyond_curves, part))
        pd.testing.assert_series_equal(mine.beyond_curves.listed, result.beyond_curves.listed)
        assert (mine.users, mine.warnings, mine.skipped, mine.left_out) == \
            (result.users, result.warnings, result.skipped, result.left_out)
    assert kept_results.known_positions(tmp_path, "f" * 64) == positions


def test_a_damaged_or_half_written_evaluation_is_absent(tmp_path):
    results, positions = evaluated(np.arange(20))
    key = kept_results.results_key("e" * 64, Encoding(), Settings(k=3))
    kept_results.save_results(tmp_path, key, results, positions)
    (tmp_path / "results" / f"{key}.parquet").write_bytes(b"not parquet")
    assert kept_results.load_results(tmp_path, key, Settings(k=3), Encoding()) is None
    kept_results.save_results(tmp_path, key, results, positions)
    (tmp_path / "results" / f"{key}.json").unlink()  # (the JSON is written last: a write cut short)
    assert kept_results.load_results(tmp_path, key, Settings(k=3), Encoding()) is None
    kept_results.save_results(tmp_path, key, results, positions)
    (tmp_path / "results" / f"{key}.json").write_text('{"a": {"metrics": {}}}')  # (JSON, but not what was kept)
    assert kept_results.load_results(tmp_path, key, Settings(k=3), Encoding()) is None
    other = kept_results.results_key("e" * 64, Encoding(), Settings(k=4))
    assert other != key and kept_results.results_key("e" * 64, Encoding(order="score"), Settings(k=3)) != key


def test_at_most_keep_evaluations_per_workspace_and_none_after_a_purge(tmp_path):
    import os

    results, positions = evaluated(np.arange(20))
    keys = [kept_results.results_key("d" * 64, Encoding(), Settings(k=k)) for k in range(1, 6)]
    for age, key in enumerate(keys):
        kept_results.save_results(tmp_path, key, results, positions)
        os.utime(tmp_path / "results" / f"{key}.json", (age, age))  # (oldest first)
    kept_results.save_results(tmp_path, keys[-1], results, positions)
    left = sorted(path.stem for path in (tmp_path / "results").glob("*.json"))
    assert len(left) == kept_results.KEEP and keys[0] not in left and keys[-1] in left
    assert kept_results.forget_results(tmp_path, {"c" * 64}) == kept_results.KEEP
    assert not list((tmp_path / "results").iterdir())


def test_purging_a_workspace_deletes_its_kept_evaluations(tmp_path):
    store = Store(tmp_path)
    truth = store.put_table("truth.csv", b"user_id,item_id\n1,a\n2,b\n", "ground truth")
    recs = store.put_table("recs.csv", b"user_id,item_id,rank\n1,a,1\n2,a,1\n", "recommendations")
    saved = store.save_workspace("w", {"m": recs}, truth, columns=Columns())
    results, positions = evaluated(np.arange(20))
    kept_results.save_results(tmp_path, kept_results.results_key(saved.fingerprint, Encoding(), Settings()),
                              results, positions)
    store.delete_workspace(saved.id)
    store.purge_trash(older_than_days=0)
    assert not list((tmp_path / "results").glob("*.json"))
