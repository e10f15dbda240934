"""Two runs are compared from the per-user columns their comparison reads, not from every column
of the run (a run of 1M users x 4 models holds 57: 7 s to read whole). The rule: for every metric
a comparison accepts, the numbers equal those of the same comparison over the whole tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from lists import random_lists

from metrics_core import Columns, Dataset, InputError, Settings
from metrics_core.metrics import registry
from metrics_core.stats.compare import columns_read, compare
from metrics_core.store import Store, compare_runs, run_results, save_run

USERS, ITEMS = 90, 40


def _put(store: Store, name: str, frame: pd.DataFrame, role: str) -> str:
    return store.put_table(name, frame.to_csv(index=False).encode(), role)


def _two_runs(store: Store, second_users: int = USERS):
    """Runs of a workspace of two models with training data, then of a new version of one model
    (the second run's lists cover ``second_users`` users)."""
    rng = np.random.default_rng(5)
    truth = pd.DataFrame({"user_id": np.arange(USERS), "item_id": rng.integers(0, ITEMS, USERS)})
    train = pd.DataFrame({"user_id": rng.integers(0, USERS, 600), "item_id": rng.integers(0, ITEMS, 600)})
    models = {name: _put(store, f"{name}.csv", random_lists(USERS, ITEMS, 8, seed=seed), "recommendations")
              for name, seed in (("a", 1), ("b", 2))}
    saved = store.save_workspace("w", models, _put(store, "t.csv", truth, "ground truth"), columns=Columns(),
                                 train=_put(store, "train.csv", train.drop_duplicates(), "training"))
    first = save_run(store, saved, Dataset.from_recipe(saved).evaluate_all(Settings(k=5), curves=False))
    better = random_lists(second_users, ITEMS, 8, seed=3)
    newer = store.replace_model(saved.id, "b", _put(store, "b2.csv", better, "recommendations"))
    second = save_run(store, newer, Dataset.from_recipe(newer).evaluate_all(Settings(k=5), curves=False))
    return first.id, second.id


COMPARED = ["ndcg", "map", "recall", "precision", "mrr", "fbeta", "fbeta_of_means", "gm_map", "novelty", "arp",
            "arp_normalised", "diversity"]


@pytest.mark.parametrize("second_users", [USERS, USERS - 25])
def test_comparing_runs_from_their_compared_columns_gives_the_whole_tables_numbers(tmp_path, second_users):
    store = Store(tmp_path)
    first, second = _two_runs(store, second_users)
    whole_a, whole_b = run_results(store, first), run_results(store, second)
    for metric in COMPARED:
        if not all(metric in r.metrics for r in [*whole_a.values(), *whole_b.values()]):
            continue  # (not computed on these data)
        read = compare_runs(store, first, second, [metric])
        for model in ("a", "b"):
            expected = compare({f"{first} · {model}": whole_a[model], f"{second} · {model}": whole_b[model]},
                               f"{first} · {model}", [metric])
            pd.testing.assert_frame_equal(read[model].rows, expected.rows, obj=f"{metric} of {model}")


def test_a_run_read_for_some_metrics_holds_their_columns_only(tmp_path):
    store = Store(tmp_path)
    first, _ = _two_runs(store)
    columns = registry.per_user_columns()
    whole = run_results(store, first)
    for metrics, needed in ((["ndcg"], {"ndcg"}), (["fbeta_of_means"], {"precision", "recall"}),
                            (["gm_map"], {"map"}), (["arp_normalised"], {"arp"})):
        read = run_results(store, first, metrics)
        assert columns_read(metrics) == {columns[m] for m in needed} | {"evaluated"}
        for model, result in read.items():
            assert set(result.per_user.columns) == columns_read(metrics)
            pd.testing.assert_frame_equal(result.per_user, whole[model].per_user[result.per_user.columns])
            assert result.metrics == pytest.approx(whole[model].metrics, nan_ok=True)


def test_runs_without_a_shared_user_are_refused_whichever_columns_are_read(tmp_path):
    store = Store(tmp_path)
    first, second = _two_runs(store)
    path = store.home / "runs" / f"{second}.parquet"
    table = pd.read_parquet(path)
    table.assign(user=table["user"].astype(str) + "-elsewhere").to_parquet(path, index=False)
    with pytest.raises(InputError, match="share no users"):
        compare_runs(store, first, second, ["ndcg"])


@pytest.mark.parametrize("harm", ["missing", "damaged"])
def test_a_run_file_missing_or_damaged_is_named_when_read_for_some_metrics(tmp_path, harm):
    """Reading the columns of some metrics reads the file's schema first: a missing or damaged run
    file is still refused with the message naming it and the repair, never a traceback."""
    store = Store(tmp_path)
    first, second = _two_runs(store)
    path = tmp_path / "runs" / f"{second}.parquet"
    if harm == "missing":
        path.unlink()
    else:
        path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(InputError) as error:
        compare_runs(store, first, second, ["ndcg"])
    assert f"the per-user values of run {second}" in error.value.problem and harm in error.value.problem
    assert "rankscope store check" in error.value.fix
