"""Encoded datasets kept with a saved workspace: read back (arrays mapped read-only) they give every
number the freshly encoded dataset gives, with text or integer ids, grades, training rows, item
features and user attributes; a manifest naming a class that is not rankscope's is refused, and a
purged workspace takes its dataset with it (issue #43: a reopened large workspace maps its
arrays instead of reading its tables again)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dashboard.workspace import demo_workspace
from metrics_core import Columns, Dataset, Encoding, Settings
from metrics_core.store import encoded as encoded_module
from metrics_core.store.encoded import encoded_key, forget_datasets, load_dataset, save_dataset, worth_keeping


def text_id_dataset() -> Dataset:
    """Text ids, graded relevance with judged non-relevant rows, training with timestamps, item
    features and a user table."""
    rng = np.random.default_rng(7)
    users = [f"user-{u:03d}" for u in range(120)]
    items = [f"sku é{i}" for i in range(60)]
    recs = {name: pd.DataFrame({"user_id": np.repeat(users, 8), "item_id": rng.choice(items, 960),
                                "score": rng.random(960)}).drop_duplicates(["user_id", "item_id"]) for name in "ab"}
    truth = pd.DataFrame({"user_id": np.repeat(users, 4), "item_id": rng.choice(items, 480),
                          "rating": rng.integers(1, 6, 480)}).drop_duplicates(["user_id", "item_id"])
    train = pd.DataFrame({"user_id": rng.choice(users, 2000), "item_id": rng.choice(items, 2000),
                          "timestamp": rng.integers(1_600_000_000, 1_700_000_000, 2000)})
    table = pd.DataFrame({"item_id": items, "genre": rng.choice(["Drama|War", "Comedy", "Kids"], 60),
                          "length": rng.random(60)})
    people = pd.DataFrame({"user_id": users, "country": rng.choice(["FR", "ES"], 120)})
    return Dataset.build(recs, truth, train=train, items=table, users=people, feature_columns=["genre", "length"],
                         columns=Columns(relevance="rating", threshold=4), encoding=Encoding(order="score"))


@pytest.mark.parametrize("build", [lambda: demo_workspace().build(), text_id_dataset], ids=["demo", "text ids"])
def test_a_kept_dataset_gives_every_number_the_encoded_one_gives(build, tmp_path):
    dataset = build()
    assert save_dataset(tmp_path, "f00d-1", dataset)
    kept = load_dataset(tmp_path, "f00d-1")
    assert kept.models == dataset.models and kept.encoding == dataset.encoding
    np.testing.assert_array_equal(kept.users.ids, dataset.users.ids)
    np.testing.assert_array_equal(kept.items.ids, dataset.items.ids)
    lists = kept.lists[kept.models[0]]
    assert not lists.items.flags.writeable and not lists.hit.flags.writeable  # (mapped read-only)
    for k in (3, 10):
        settings = Settings(k=k, gain="exponential")
        fresh, again = dataset.evaluate_all(settings), kept.evaluate_all(settings)
        for name in fresh:
            pd.testing.assert_frame_equal(again[name].per_user, fresh[name].per_user)
            pd.testing.assert_frame_equal(again[name].curves, fresh[name].curves)
            assert json.dumps(again[name].metrics) == json.dumps(fresh[name].metrics)
            assert again[name].warnings == fresh[name].warnings
    pd.testing.assert_frame_equal(kept.item_table, dataset.item_table)
    attribute = "genre"
    model = dataset.models[-1]
    assert repr(kept.item_bias(model, attribute, k=5)) == repr(dataset.item_bias(model, attribute, k=5))
    user = dataset.users.ids[np.flatnonzero(dataset.truth.relevant_count > 0)[0]]
    case, again_case = dataset.cases([user], k=5)[0], kept.cases([user], k=5)[0]
    pd.testing.assert_frame_equal(again_case.recommendations, case.recommendations)
    pd.testing.assert_frame_equal(again_case.history, case.history)


def test_the_training_counts_are_kept_as_computed_and_only_those(tmp_path):
    """The training's per-item counts and the lists' lengths come back with the dataset (a reopened
    workspace reads them, not every mapped row), equal to what the rows give; a manifest giving the
    training any other value is refused."""
    dataset = demo_workspace().build()
    assert "users_per_item" not in vars(dataset.training)  # (not computed yet: keeping computes them)
    assert save_dataset(tmp_path, "f00d-3", dataset)
    kept = load_dataset(tmp_path, "f00d-3").training
    for name in ("users_per_item", "interactions_per_item"):
        assert name in vars(kept)
        np.testing.assert_array_equal(vars(kept)[name], getattr(dataset.training, name))
    for lists in load_dataset(tmp_path, "f00d-3").lists.values():  # (and the lists' lengths, and gapless or not)
        assert {"lengths", "gapless"} <= set(vars(lists))
    manifest = tmp_path / "encoded" / "f00d-3" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"interactions_per_item"', '"pair_keys"', 1))
    assert load_dataset(tmp_path, "f00d-3") is None


def test_score_counts_are_kept_when_counted_and_give_the_same_histograms(tmp_path, monkeypatch):
    """Each model's scores counted per position (the Scores page's histograms, at the app's bins or
    given edges) come back with the dataset when counted before it was kept, and only then; the
    histograms at every K from the kept counts equal a fresh count's, and reading them counts
    nothing."""
    from metrics_core.metrics import scores

    dataset = text_id_dataset()
    assert save_dataset(tmp_path, "f00d-6", dataset)  # (nothing counted: nothing kept, counted when asked)
    assert load_dataset(tmp_path, "f00d-6").scores_to_count() == dataset.models
    edges = np.array([0.0, 0.2, 0.5, 1.0])
    dataset.count_scores()
    dataset.score_distribution("a", 2, edges=edges)
    assert dataset.scores_to_count() == []
    assert save_dataset(tmp_path, "f00d-7", dataset)
    kept = load_dataset(tmp_path, "f00d-7")
    assert kept.scores_to_count() == []
    fresh = text_id_dataset()
    counts = []
    count = scores.place_histograms
    monkeypatch.setattr(scores, "place_histograms", lambda *args, **kwargs: counts.append(1) or count(*args, **kwargs))
    for k in (1, 3, 8):
        for model in kept.models:
            pd.testing.assert_frame_equal(kept.score_distribution(model, k, bins=scores.SCORE_BINS),
                                          fresh.score_distribution(model, k, bins=scores.SCORE_BINS))
        pd.testing.assert_frame_equal(kept.score_distribution("a", k, edges=edges),
                                      fresh.score_distribution("a", k, edges=edges))
    assert len(counts) == 3  # (the fresh dataset's three counts; none for the kept one)
    manifest = tmp_path / "encoded" / "f00d-7" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"_score_places"', '"_pooled"', 1))
    assert load_dataset(tmp_path, "f00d-7") is None  # (a value the lists do not keep: refused)


def test_only_rankscope_s_own_types_are_rebuilt(tmp_path):
    assert save_dataset(tmp_path, "f00d-2", demo_workspace().build())
    manifest = tmp_path / "encoded" / "f00d-2" / "manifest.json"
    text = manifest.read_text()
    manifest.write_text(text.replace('"metrics_core.engines.memory.dataset:Dataset"', '"subprocess:Popen"', 1))
    assert load_dataset(tmp_path, "f00d-2") is None
    manifest.write_text("{not json")
    assert load_dataset(tmp_path, "f00d-2") is None
    assert load_dataset(tmp_path, "absent-1") is None


def test_one_dataset_per_workspace_and_none_after_it_is_purged(tmp_path):
    dataset = demo_workspace().build()
    first, second = encoded_key("a" * 64, Encoding()), encoded_key("a" * 64, Encoding(order="score"))
    assert first != second and first.startswith("a" * 32)
    assert save_dataset(tmp_path, first, dataset) and not save_dataset(tmp_path, first, dataset)
    assert save_dataset(tmp_path, second, dataset)  # (the newest encoding replaces the older one)
    assert [p.name for p in (tmp_path / "encoded").iterdir()] == [second]
    assert save_dataset(tmp_path, encoded_key("b" * 64, Encoding()), dataset)
    assert forget_datasets(tmp_path, {"b" * 64}) == 1
    assert [p.name.split("-")[0] for p in (tmp_path / "encoded").iterdir()] == ["b" * 32]


def test_only_large_datasets_are_worth_keeping(monkeypatch):
    dataset = demo_workspace().build()
    cells = sum(lists.items.size for lists in dataset.lists.values())
    monkeypatch.setattr(encoded_module, "KEEP_MIN_CELLS", cells)
    assert worth_keeping(dataset)
    monkeypatch.setenv("RANKSCOPE_KEEP_ENCODED", "0")
    assert not worth_keeping(dataset)
    monkeypatch.delenv("RANKSCOPE_KEEP_ENCODED")
    monkeypatch.setattr(encoded_module, "KEEP_MIN_CELLS", cells + 1)
    assert not worth_keeping(dataset)


def test_a_crashed_writer_s_folder_is_removed_once_stale(tmp_path):
    from metrics_core.store.files import remove_stale_temporaries

    left = tmp_path / "encoded" / ".f00d-3.abcd1234.tmp"
    left.mkdir(parents=True)
    (left / "a1.npy").write_bytes(b"partial")
    fresh = tmp_path / "results" / ".f00d-4.json.abcd.tmp"
    fresh.parent.mkdir()
    fresh.write_text("{")
    assert remove_stale_temporaries(tmp_path, older_than=3600) == []
    assert set(remove_stale_temporaries(tmp_path, older_than=-1)) == {left, fresh}
    assert not left.exists() and not fresh.exists()


def test_store_check_names_a_kept_dataset_or_evaluation_that_cannot_be_read(tmp_path):
    """``rankscope store check`` reads what the app keeps beside the catalog: a damaged array of a
    kept dataset or a missing table of a kept evaluation is named, with the reassurance that
    nothing is lost."""
    from metrics_core.store import Store
    from metrics_core.store.check import check_store

    Store(tmp_path)  # (a catalog: the check starts from it)
    assert save_dataset(tmp_path, "f00d-5", demo_workspace().build())
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "f00d-6.json").write_text("{}")
    (problem,) = check_store(tmp_path)
    assert problem.startswith(f"{tmp_path / 'results' / 'f00d-6'}: a kept evaluation that cannot be read (")
    assert problem.endswith("); nothing is lost (the app reads the workspace's tables again); delete it to reclaim "
                            "the space") and "f00d-6.parquet" in problem
    (tmp_path / "results" / "f00d-6.json").unlink()
    assert check_store(tmp_path) == []
    array = next((tmp_path / "encoded" / "f00d-5").glob("a*.npy"))
    array.write_bytes(b"not numpy")
    (problem,) = check_store(tmp_path)
    assert problem.startswith(f"{tmp_path / 'encoded' / 'f00d-5'}: a kept encoded dataset that cannot be read")


def test_the_copy_of_the_first_places_is_kept_when_made_and_read_back_mapped(tmp_path, monkeypatch):
    """Each model's copies of its lists' first places, items and scores (Lists.top's and
    score_places'), come back with the dataset when made before it was kept (ready_to_keep, as
    every road that keeps one does), mapped from disk and read-only, and only then, with each
    list's first filled place; the metrics at a new K read from them are the same; a dataset
    kept without them makes them on first use."""
    from metrics_core.inputs import encoded

    monkeypatch.setattr(encoded, "HEAD_PLACES", 3)
    monkeypatch.setattr(encoded, "HEAD_MIN", 0)
    dataset = text_id_dataset()
    assert save_dataset(tmp_path, "f00d-8", dataset)  # (nothing made: nothing kept)
    older = load_dataset(tmp_path, "f00d-8")
    assert all("_head" not in vars(lists) for lists in older.lists.values())
    dataset.ready_to_keep()
    assert dataset.scores_to_count() == []
    assert save_dataset(tmp_path, "f00d-9", dataset)
    kept = load_dataset(tmp_path, "f00d-9")
    for name, lists in kept.lists.items():
        for copy, values in (("_head", dataset.lists[name].items), ("_score_head", dataset.lists[name].scores)):
            head = vars(lists)[copy]
            assert not head.flags.owndata and not head.flags.writeable  # (mapped, not read into memory)
            np.testing.assert_array_equal(head, values[:, :3])
        np.testing.assert_array_equal(vars(lists)["first_places"], dataset.lists[name].first_places)
    fresh = text_id_dataset()
    for k in (2, 3, 5):
        settings = Settings(k=k, category_column="genre")
        for model in kept.models:
            ours, theirs = kept.evaluate(model, settings, curves=False), fresh.evaluate(model, settings, curves=False)
            assert ours.metrics == theirs.metrics
            pd.testing.assert_frame_equal(ours.per_user, theirs.per_user)
    older.lists["a"].top(2)
    assert "_head" in vars(older.lists["a"])
