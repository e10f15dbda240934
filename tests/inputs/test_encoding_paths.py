"""The encoder's fast paths (whole sorted lists used in place, 32- or 64-bit join keys, coded
ids through a lookup table) must give exactly what the general path gives."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import Columns, Dataset, Encoding, Settings
from metrics_core.engines.memory import dataset as dataset_module
from metrics_core.inputs import encode
from tests.compiled import compiled_loops
from tests.reference import relevant_grades, user_metrics


def whole_lists(n_users: int, length: int, item_space: int, seed: int):
    """Every user has a full list, rows sorted by user then rank; a few duplicate items."""
    rng = np.random.default_rng(seed)
    users = np.repeat(np.arange(1, n_users + 1) * 7, length)  # sparse ids: the lookup table has holes
    items = rng.integers(0, item_space, n_users * length)
    items[5] = items[3]  # a duplicate in the first list
    ranks = np.tile(np.arange(1, length + 1), n_users)
    recs = pd.DataFrame({"user_id": users, "item_id": items, "rank": ranks.astype(np.int32),
                         "score": -ranks.astype(np.float64)})
    pairs = [(u, int(i), int(rng.integers(1, 4))) for u in np.unique(users)
             for i in rng.choice(recs.item_id[recs.user_id == u].to_numpy(), 4, replace=False)]
    pairs += [(u, int(rng.integers(0, item_space)), 1) for u in np.unique(users)]
    return recs, pd.DataFrame(pairs, columns=["user_id", "item_id", "grade"])


def encoded(recs: pd.DataFrame, truth: pd.DataFrame, **options) -> Dataset:
    return Dataset.build(recs, truth, columns=Columns(relevance="grade", threshold=1), **options)


def assert_same_encoding(a: Dataset, b: Dataset) -> None:
    np.testing.assert_array_equal(a.users.ids, b.users.ids)
    np.testing.assert_array_equal(a.items.ids, b.items.ids)
    for name in a.models:
        left, right = a.lists[name], b.lists[name]
        np.testing.assert_array_equal(left.items, right.items)
        np.testing.assert_array_equal(left.hit, right.hit)
        np.testing.assert_array_equal(left.grade, right.grade)
        np.testing.assert_array_equal(left.listed, right.listed)
        np.testing.assert_array_equal(left.lengths, right.lengths)  # (from the compiled join, or counted)
        assert [n.code for n in left.notes] == [n.code for n in right.notes]


@pytest.mark.parametrize("as_text", [False, True])
@pytest.mark.parametrize("order", ["rank", "score"])
def test_whole_sorted_lists_encode_like_shuffled_rows(as_text, order, monkeypatch):
    recs, truth = whole_lists(n_users=60, length=12, item_space=200, seed=1)
    if as_text:
        def text(ids: pd.Series, prefix: str) -> pd.Series:  # padded: text order = number order
            return prefix + ids.astype(str).str.zfill(6)

        recs = recs.assign(user_id=text(recs.user_id, "u"), item_id=text(recs.item_id, "i"))
        truth = truth.assign(user_id=text(truth.user_id, "u"), item_id=text(truth.item_id, "i"))
    if order == "score":
        recs = recs.drop(columns=["rank"])
    shuffled = recs.sample(frac=1.0, random_state=3)
    found = []
    detect = encode.whole_list_heads
    for module in (encode, dataset_module):
        monkeypatch.setattr(module, "whole_list_heads", lambda *args: found.append(detect(*args)) or found[-1])
    fast, general = (encoded(frame, truth, encoding=Encoding(order=order)) for frame in (recs, shuffled))
    assert found[0] is not None and found[1] is None  # the sorted input took the whole-list path
    assert_same_encoding(fast, general)
    assert any(n.code == "duplicate_items" for n in fast.lists["model"].notes)


@pytest.mark.parametrize("shape", ["whole lists", "shuffled with gaps", "score order"])
@pytest.mark.parametrize("graded", [False, True])
def test_compiled_loops_place_and_join_like_numpy(shape, graded, monkeypatch):
    """Above ``KERNEL_MIN`` cells numba places rows and joins them to the ground truth; the
    arrays, the duplicate and rank-gap counts must be numpy's, on read-only whole lists too."""
    recs, truth = whole_lists(n_users=80, length=15, item_space=60, seed=4)  # few items: many duplicates
    recs.loc[recs.user_id == 14, "item_id"] = 3  # one list of a single repeated item
    if shape != "whole lists":
        recs = recs[(recs["rank"] != 2) | (recs.user_id % 3 != 0)].sample(frac=1.0, random_state=5)  # one gap
    if shape == "score order":
        recs = recs.drop(columns=["rank"])
    truth = pd.concat([truth, pd.DataFrame({"user_id": [99_999], "item_id": [1], "grade": [2]})])  # no list
    if not graded:
        truth = truth.assign(grade=1)
    numpy_built = encoded(recs, truth)
    compiled_loops(monkeypatch)
    compiled = encoded(recs, truth)
    assert_same_encoding(compiled, numpy_built)
    notes = {n.code: n.count for n in compiled.lists["model"].notes}
    assert notes == {n.code: n.count for n in numpy_built.lists["model"].notes}
    assert notes["duplicate_items"] > 14 and ("rank_gaps" in notes) == (shape == "shuffled with gaps")
    np.testing.assert_array_equal(compiled.lists["model"].listed, np.isin(compiled.users.ids, recs.user_id))
    assert "lengths" in vars(compiled.lists["model"])  # the join counted them: no pass over the cells later
    np.testing.assert_array_equal(compiled.lists["model"].scores, numpy_built.lists["model"].scores)


@pytest.mark.parametrize("limit, value", [("KERNEL_ITEMS_MAX", 100), ("KERNEL_USERS_MAX", 30)])
def test_a_catalog_or_user_count_beyond_the_compiled_joins_limits_is_joined_by_numpy(limit, value, monkeypatch):
    """The compiled join's tables grow with the catalog, and its marks with the user codes; above
    ``KERNEL_ITEMS_MAX`` items, or from ``KERNEL_USERS_MAX`` users, numpy joins (rows are still
    placed by the compiled loop)."""
    from metrics_core.inputs import kernels

    recs, truth = whole_lists(n_users=30, length=10, item_space=500, seed=6)
    recs = recs.sample(frac=1.0, random_state=7)
    numpy_built = encoded(recs, truth)
    compiled_loops(monkeypatch)
    monkeypatch.setattr(encode, limit, value)

    def refuse(*args):
        raise AssertionError("the compiled join ran on a catalog above the limit")

    monkeypatch.setattr(kernels, "join_users", refuse)
    assert_same_encoding(encoded(recs, truth), numpy_built)


@pytest.mark.parametrize("score_type", [np.float16, np.uint64, np.int8])
def test_scores_of_any_number_type_are_placed_by_the_compiled_loop(score_type, monkeypatch):
    """numba has no float16: such scores (and integer ones) are placed as float64."""
    recs, truth = whole_lists(n_users=20, length=8, item_space=300, seed=8)
    recs = recs.drop(columns=["rank"]).assign(score=lambda f: (f.score + 8).astype(score_type)).sample(
        frac=1.0, random_state=9)
    numpy_built = encoded(recs, truth)
    compiled_loops(monkeypatch)
    compiled = encoded(recs, truth)
    assert_same_encoding(compiled, numpy_built)
    np.testing.assert_array_equal(compiled.lists["model"].scores, numpy_built.lists["model"].scores)


@pytest.mark.parametrize("compiled_join", [True, False])
def test_two_rows_with_one_rank_are_named_when_the_compiled_loop_placed_them(compiled_join, monkeypatch):
    """The join counts the filled cells; fewer than the rows placed raises, whichever joined."""
    from metrics_core.errors import InputError

    compiled_loops(monkeypatch)
    if not compiled_join:
        monkeypatch.setattr(encode, "KERNEL_ITEMS_MAX", 1)
    recs = pd.DataFrame({"user_id": [2, 1, 1, 2], "item_id": [5, 6, 7, 8], "rank": [1, 1, 2, 1]})
    with pytest.raises(InputError, match="share a rank") as error:
        encoded(recs, pd.DataFrame({"user_id": [1], "item_id": [6], "grade": [1]}))
    assert sorted(error.value.rows.index) == [0, 3]


def test_blocks_of_equal_length_holding_two_users_are_not_taken_for_whole_lists():
    # user 1 has ranks 1-4; users 2 and 3 share the second block of four rows (ranks 1, 2 and 3, 4)
    recs = pd.DataFrame({"user_id": [1, 1, 1, 1, 2, 2, 3, 3], "item_id": [10, 11, 12, 13, 10, 11, 12, 13],
                         "rank": [1, 2, 3, 4, 1, 2, 3, 4]})
    truth = pd.DataFrame({"user_id": [1, 2, 3], "item_id": [13, 11, 12], "grade": [1, 1, 1]})
    dataset = encoded(recs, truth)
    items = dataset.lists["model"].items
    np.testing.assert_array_equal(items, [[0, 1, 2, 3], [0, 1, -1, -1], [-1, -1, 2, 3]])
    np.testing.assert_array_equal(dataset.lists["model"].hit, [[0, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0]])
    assert any(n.code == "rank_gaps" for n in dataset.lists["model"].notes)


def test_catalog_too_large_for_32_bit_join_keys_matches_the_definitions():
    # 300k distinct items: a chunk's packed keys no longer fit 32 bits, the join uses int64
    recs, truth = whole_lists(n_users=3_000, length=100, item_space=10_000_000, seed=2)
    assert recs.item_id.nunique() > 262_144
    dataset = encoded(recs, truth)
    shuffled = encoded(recs.sample(frac=1.0, random_state=5), truth)
    assert_same_encoding(dataset, shuffled)
    result = dataset.evaluate(settings=Settings(k=20))
    grades = relevant_grades(list(truth.itertuples(index=False, name=None)), threshold=1)
    for user in list(grades)[:40]:
        ranked = recs[recs.user_id == user].sort_values("rank").item_id.tolist()
        seen: set = set()
        listed = [i for i in ranked if not (i in seen or seen.add(i))]
        want = user_metrics(listed, grades[user], 20)
        got = result.per_user.loc[user]
        for metric in ("precision", "recall", "ap", "ndcg", "rr"):
            assert got[metric] == pytest.approx(want[metric], abs=1e-12), (user, metric)


@pytest.mark.parametrize("graded", [False, True])
def test_truth_grouped_by_user_encodes_like_shuffled_truth(graded):
    rng = np.random.default_rng(7)
    users = np.repeat(np.arange(3_000), rng.integers(1, 30, 3_000))  # grouped, ascending
    truth = pd.DataFrame({"user_id": users, "item_id": rng.integers(0, 50, len(users)),  # many duplicates
                          "grade": rng.integers(1, 4, len(users))})
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(3_000), 5), "item_id": np.tile(np.arange(5), 3_000),
                         "rank": np.tile(np.arange(1, 6), 3_000)})
    columns = Columns(relevance="grade" if graded else None, threshold=1)
    grouped = Dataset.build(recs, truth, columns=columns).truth
    shuffled = Dataset.build(recs, truth.sample(frac=1.0, random_state=1), columns=columns).truth
    for name in ("user", "item", "grade", "relevant_count"):
        np.testing.assert_array_equal(getattr(grouped, name), getattr(shuffled, name), err_msg=name)
    pairs = truth.drop_duplicates(["user_id", "item_id"])
    np.testing.assert_array_equal(grouped.relevant_count, pairs.groupby("user_id").size().to_numpy())
    assert any(n.code == "duplicate_truth" for n in grouped.notes)


@pytest.mark.parametrize(("seen_early", "tail"), [(1002, [5, 1001]), (999, [999, 1001]), (999, [1001, 999])])
def test_id_index_stops_marking_only_once_every_id_in_range_is_seen(seen_early, tail):
    """Marking presence may stop once a block has set every flag of the id range (the first
    case: the tail adds nothing). Ids first seen after that block (999 and 1001 in the others,
    with 1000 never seen) are still found, and the hole is still a hole."""
    from metrics_core.inputs.ids import IdIndex

    block = 1 << 22  # more than one marking block (2**20 values x threads x 2 at most)
    head = np.tile(np.arange(seen_early), block // seen_early + 1)
    values = np.concatenate([head, tail]).astype(np.int32)
    index = IdIndex.union([values])
    expected = np.unique(values)
    np.testing.assert_array_equal(index.ids, expected)
    np.testing.assert_array_equal(index.codes(np.array([0, *tail], dtype=np.int32)),
                                  np.searchsorted(expected, [0, *tail]))


def test_several_parquet_models_read_ids_first_then_rows_model_by_model_encode_like_frames(tmp_path, monkeypatch):
    """Several models in Parquet with integer ids: only their id columns are read first, then
    each model's rank and score in turn (the ids are not read again); the encoding equals the
    one from the same frames held together, also when another model's text ids turn every
    table's ids into text."""
    from metrics_core.inputs.text_ids import TextIds

    a, truth = whole_lists(40, 12, 90, seed=1)
    b = a.sample(frac=1.0, random_state=2).reset_index(drop=True).assign(item_id=lambda f: (f.item_id * 3) % 97)
    b = b[b.index % 5 != 0]  # gaps, other users' lists
    c = a.assign(user_id=a.user_id.astype(str), item_id=a.item_id.astype(str))  # text ids
    for name, frame in {"a": a, "b": b}.items():
        frame.to_parquet(tmp_path / f"{name}.parquet")
    later, asked = [], []
    real, real_read = dataset_module._LaterLists.read, dataset_module._read
    monkeypatch.setattr(dataset_module._LaterLists, "read",
                        lambda self, *args: later.append(self.name) or real(self, *args))
    monkeypatch.setattr(dataset_module, "_read", lambda source, role, notes, ids, wanted=None: asked.append(
        (getattr(source, "stem", None), wanted)) or real_read(source, role, notes, ids, wanted))
    files = {"a": tmp_path / "a.parquet", "b": tmp_path / "b.parquet"}
    assert_same_encoding(encoded(files, truth), encoded({"a": a, "b": b}, truth))
    assert later == ["a", "b"]
    ids, rest = ["user_id", "item_id"], ["rank", "score"]
    assert [(stem, wanted) for stem, wanted in asked if stem in files] == [
        ("a", ids), ("b", ids), ("a", rest), ("b", rest)]
    later.clear()
    with_text = encoded({**files, "c": c}, truth)
    assert later == ["a", "b"] and isinstance(with_text.users.ids[0], str)
    assert_same_encoding(with_text, encoded({"a": a, "b": b, "c": c}, truth))
    assert isinstance(dataset_module._distinct(TextIds(np.array([1, 1, 0]), np.array(["x", "y"], dtype=object))),
                      TextIds)


def test_a_model_read_later_reports_bad_rows_like_any_other(tmp_path):
    from metrics_core.errors import InputError

    recs, truth = whole_lists(5, 4, 20, seed=3)
    recs.to_parquet(tmp_path / "good.parquet")
    recs.drop(columns=["rank", "score"]).to_parquet(tmp_path / "unranked.parquet")
    with pytest.raises(InputError, match="neither a rank column") as error:
        encoded({"good": tmp_path / "good.parquet", "unranked": tmp_path / "unranked.parquet"}, truth)
    assert "recommendations 'unranked'" in str(error.value)
    recs.assign(rank=recs["rank"].where(recs.index != 6)).to_parquet(tmp_path / "gap.parquet")
    with pytest.raises(InputError, match="rank") as error:
        encoded({"good": tmp_path / "good.parquet", "gap": tmp_path / "gap.parquet"}, truth)
    assert error.value.rows.index.tolist() == [6]
    assert {"user_id", "item_id", "rank"} <= set(error.value.rows.columns)  # ids read first, shown too


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.integers(1, 40), st.lists(st.floats(-2, 5, allow_nan=False), min_size=1, max_size=6),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_truth_sorted_by_one_key_equals_the_pair_sort_and_lexsort_and_a_plain_reference(
        n_rows, n_items, grade_values, grouped, seed):
    """The graded truth's one-key sort (:func:`encode._in_grade_order`) against the general
    path (argsort by pair, maximum of repeated pairs, lexsort by grade) and against pandas: the
    same pairs, each once with its highest grade, ordered by user, grade descending, item."""
    from metrics_core.inputs.encoded import RawTruth
    from metrics_core.inputs.ids import IdIndex

    rng = np.random.default_rng(seed)
    user = rng.integers(0, 12, n_rows)
    if grouped:
        user.sort()
    item = rng.integers(0, n_items, n_rows)  # (repeated pairs are likely)
    grade = rng.choice(np.array(grade_values), n_rows)
    frame = pd.DataFrame({"user_id": user, "item_id": item, "grade": grade})
    raw = RawTruth("t", frame, user, item, grade)
    users, items = IdIndex.union([user]), IdIndex.union([item])
    one_key = encode.encode_truth(raw, users, items, 0.5)
    general = encode._in_grade_order
    try:
        encode._in_grade_order = lambda *args: None
        by_pairs = encode.encode_truth(raw, users, items, 0.5)
    finally:
        encode._in_grade_order = general
    for name in ("user", "item", "grade", "relevant_count", "judged"):
        np.testing.assert_array_equal(getattr(one_key, name), getattr(by_pairs, name), err_msg=name)
    assert one_key.graded == by_pairs.graded
    assert [(n.code, n.count) for n in one_key.notes] == [(n.code, n.count) for n in by_pairs.notes]
    best = (frame[frame.grade >= 0.5].groupby(["user_id", "item_id"], as_index=False).grade.max()
            .sort_values(["user_id", "grade", "item_id"], ascending=[True, False, True]))
    np.testing.assert_array_equal(users.ids[one_key.user], best.user_id)
    np.testing.assert_array_equal(items.ids[one_key.item], best.item_id)
    np.testing.assert_array_equal(one_key.grade, best.grade)


LOADED_THEN_ENCODED = """
import sys
import tempfile
from pathlib import Path
import numpy as np
from metrics_core.inputs import encoded as encoded_module
from metrics_core.inputs import kernels
from tests.inputs.test_encoding_paths import encoded, whole_lists
recs, truth = whole_lists(n_users=50, length=10, item_space=40, seed=2)
recs = recs.astype({"user_id": np.int32, "item_id": np.int32})
if sys.argv[1] != "whole lists":
    recs = recs.sample(frac=1.0, random_state=3)
kernels.load_usual()
names = ("place_ranked", "join_users") if sys.argv[1] == "streamed" else ("scatter_rows", "join_users")
loaded = {name: list(getattr(kernels, name).signatures) for name in names}
encoded_module.KERNEL_MIN = encoded_module.LOAD_MIN = 0
with tempfile.TemporaryDirectory() as folder:
    if sys.argv[1] == "streamed":  # (a Parquet file's int64 ranks and float64 scores, as Arrow decodes them)
        recs.astype({"rank": np.int64}).to_parquet(Path(folder) / "recs.parquet")
        recs = {"model": Path(folder) / "recs.parquet"}
    encoded(recs, truth.assign(grade=1))  # (binary relevance: no grades are written)
used = {name: list(getattr(kernels, name).signatures) for name in loaded}
assert used == loaded, (loaded, used)
assert all(used.values()) or sys.argv[1] == "whole lists"
"""


@pytest.mark.parametrize("shape", ["whole lists", "shuffled", "streamed"])
def test_the_loops_loaded_meanwhile_are_the_ones_the_encoding_calls(shape, monkeypatch):
    """Large lists start loading the compiled loops before the ground truth is encoded; for the
    types a Parquet file usually gives (32-bit ids and ranks, 64-bit scores; 64-bit ranks
    streamed as Arrow decodes them) the encoding then
    needs no signature that was not loaded already (checked in a fresh process, where nothing
    else has loaded any). Small lists load nothing."""
    import subprocess
    import sys
    from pathlib import Path

    recs, truth = whole_lists(n_users=50, length=10, item_space=40, seed=2)
    started = []
    monkeypatch.setattr(dataset_module, "load_kernels_meanwhile", lambda: started.append(True))
    encoded(recs, truth)
    assert started == []  # too few rows
    compiled_loops(monkeypatch)
    encoded(recs, truth)
    assert started == [True]
    subprocess.run([sys.executable, "-c", LOADED_THEN_ENCODED, shape], check=True,
                   cwd=Path(__file__).resolve().parents[2])


def test_the_loops_start_loading_once_per_process(monkeypatch):
    """load_kernels_meanwhile starts one loading thread per process: a build's second call, and
    every later build, start nothing (a text-id column that imported numba first does not stop
    the first one)."""
    started = []
    monkeypatch.setattr(encode, "_KERNELS_STARTED", [])
    monkeypatch.setattr(encode, "meanwhile", lambda work: started.append(work) or "future")
    for _ in range(3):
        encode.load_kernels_meanwhile()
    assert len(started) == 1 and encode._KERNELS_STARTED == ["future"]


@pytest.mark.parametrize("stored", [True, False])
def test_parquet_models_start_loading_the_loops_before_they_are_read(stored, monkeypatch, tmp_path):
    """A Parquet file's metadata counts its rows: with models that need the compiled loops,
    their loading starts before the first model is read (frames in memory: once they are)."""
    recs, truth = whole_lists(n_users=50, length=10, item_space=40, seed=3)
    models = {"a": recs, "b": recs}
    if stored:
        for name in models:
            recs.to_parquet(tmp_path / f"{name}.parquet")
            models[name] = tmp_path / f"{name}.parquet"
    events = []
    monkeypatch.setattr(dataset_module, "load_kernels_meanwhile", lambda: events.append("load"))
    real_read = dataset_module._read
    monkeypatch.setattr(dataset_module, "_read", lambda source, role, *rest: events.append(role) or real_read(
        source, role, *rest))
    compiled_loops(monkeypatch)
    Dataset.build(models, truth)
    assert "load" in events
    first_model = events.index("recommendations 'a'")
    assert (events.index("load") < first_model) == stored, events


def test_the_compiled_loops_do_a_step_once_loaded_and_load_only_for_a_large_one(monkeypatch):
    """compiled_for: from KERNEL_MIN cells once the loops are loaded; before, only from LOAD_MIN
    cells (KERNEL_MIN in a library user's process; the command's is higher); never for an empty
    step."""
    from metrics_core.inputs import encoded as encoded_module

    assert encoded_module.LOAD_MIN == encoded_module.KERNEL_MIN  # (a library user's process: loaded once, kept)
    monkeypatch.setattr(encoded_module, "KERNEL_MIN", 10)
    monkeypatch.setattr(encoded_module, "LOAD_MIN", 100)
    for loaded, expected in ((True, [False, True, True, True]), (False, [False, False, False, True])):
        monkeypatch.setattr(encoded_module, "compiled_loaded", lambda loaded=loaded: loaded)
        assert [encoded_module.compiled_for(cells) for cells in (9, 10, 99, 100)] == expected
    monkeypatch.setattr(encoded_module, "compiled_loaded", lambda: False)
    # (models worth loading for: one large enough for the loops, and all of them together past LOAD_MIN)
    assert [encoded_module.compiled_for_lists(rows) for rows in ([60, 60], [9] * 12, [50], [])] == \
        [True, False, False, False]
    monkeypatch.setattr(encoded_module, "KERNEL_MIN", 0)
    assert not encoded_module.compiled_for(0)


CHOSEN_LOAD = """
import json, os, sys
from metrics_core.cli import entry
from metrics_core.inputs import encoded
encoded.KERNEL_MIN, encoded.ONE_RUN_LOAD_MIN = 100, int(sys.argv[3])
end, leave = os._exit, sys.exit
def said(code):  # (say whether the command imported numba, as it ends)
    print(json.dumps([code, "numba" in sys.modules, encoded.LOAD_MIN]), file=sys.stderr, flush=True)
def ended(code):  # (the command ends its process at once)
    said(code)
    end(code)
def left(code=None):  # (or, with the loops still loading on their thread, as Python ends, which waits for it)
    said(code)
    leave(code)
os._exit, sys.exit = ended, left
sys.argv = ["rankscope", "evaluate", "--recommendations", sys.argv[1], "--ground-truth", sys.argv[2], "--k", "5"]
entry()
"""


def test_a_command_below_its_load_threshold_gives_the_same_numbers_without_numba(tmp_path):
    """The ``rankscope`` process evaluates once: the rows of its models together decide whether
    it loads numba (issue #49: at 100,000 users loading it cost more than it saved). Below
    ONE_RUN_LOAD_MIN cells it is never imported, at ONE_RUN_LOAD_MIN it is, and the numbers are
    the same (to 1e-13: the compiled softmax of score entropy sums in another order)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    recs, truth = whole_lists(n_users=300, length=20, item_space=500, seed=5)
    recs.sample(frac=1.0, random_state=6).to_parquet(tmp_path / "recs.parquet")  # (6,000 rows, shuffled)
    truth.to_parquet(tmp_path / "truth.parquet")
    runs = {load: subprocess.run([sys.executable, "-c", CHOSEN_LOAD, str(tmp_path / "recs.parquet"),
                                  str(tmp_path / "truth.parquet"), str(load)], capture_output=True, text=True,
                                 timeout=120, cwd=Path(__file__).resolve().parents[2])
            for load in (10**6, 1000)}
    ends = [json.loads(run.stderr.strip().splitlines()[-1]) for run in runs.values()]
    assert ends == [[0, False, 10**6], [0, True, 1000]], runs
    numpy_path, compiled = (json.loads(run.stdout)["models"]["recs"] for run in runs.values())
    assert compiled["metrics"] == pytest.approx(numpy_path["metrics"], rel=1e-13, nan_ok=True)  # (score entropy's
    assert {**compiled, "metrics": None} == {**numpy_path, "metrics": None}  # last digit: its sums' order)


def test_loading_the_loops_meanwhile_fails_quietly_and_leaves_the_error_to_the_encoding(monkeypatch):
    """A failed import on the loading thread prints nothing; the encoding's own import raises it."""
    import sys
    import threading

    monkeypatch.setitem(sys.modules, "metrics_core.inputs.kernels", None)  # importing it raises ImportError
    failures = []
    monkeypatch.setattr(threading, "excepthook", failures.append)
    encode.load_kernels_meanwhile()
    for thread in threading.enumerate():
        if thread.name == "load compiled loops":
            thread.join()
    assert failures == []
    recs, truth = whole_lists(n_users=50, length=10, item_space=40, seed=2)
    compiled_loops(monkeypatch)
    with pytest.raises(ImportError):
        encoded(recs.sample(frac=1.0, random_state=3), truth)


@pytest.mark.parametrize("shape", ["whole lists", "some users without a list", "shuffled", "score order"])
@pytest.mark.parametrize("compiled", [False, True])
def test_scores_of_the_first_positions_only_give_the_same_metrics_at_k(shape, compiled, monkeypatch):
    """``score_positions=K + 1`` keeps the scores the metrics at K read (score entropy, the
    primitive model's min-max scaling, ties at the cut-off): every number equals the full
    build's, on every placing path; what reads more scores raises instead of guessing."""
    from metrics_core.errors import InputError

    recs, truth = whole_lists(n_users=40, length=12, item_space=90, seed=11)
    recs["score"] = np.round(recs["score"] + np.random.default_rng(3).random(len(recs)), 1)  # ties
    if shape == "some users without a list":
        recs = recs[recs.user_id % 3 != 0]
        truth = truth[truth.user_id % 5 != 0]  # (and some lists without relevant items)
    if shape in ("shuffled", "score order"):
        recs = recs[(recs["rank"] != 4) | (recs.user_id % 2 == 0)].sample(frac=1.0, random_state=12)
    if shape == "score order":
        recs = recs.drop(columns=["rank"])
    if compiled:
        compiled_loops(monkeypatch)
    models = {"a": recs, "b": recs.assign(score=lambda f: f.score[::-1].to_numpy())}
    chosen = Settings(k=5, primitive_scale="minmax")
    full = encoded(models, truth).evaluate_all(chosen, curves=False)
    assert chosen.score_positions == 6 and Settings(k=5, score_threshold=0.5).score_positions is None
    kept = encoded(models, truth, score_positions=chosen.score_positions)
    assert kept.lists["a"].scores.shape[1] == 6
    for name, result in kept.evaluate_all(chosen, curves=False).items():
        assert result.metrics == pytest.approx(full[name].metrics, nan_ok=True, rel=0, abs=0)
        pd.testing.assert_frame_equal(result.per_user, full[name].per_user)
        assert [(n.code, n.count) for n in result.warnings] == [(n.code, n.count) for n in full[name].warnings]
    np.testing.assert_array_equal(kept.lists["a"].scores, encoded(models, truth).lists["a"].scores[:, :6])
    for wanted in (lambda: kept.evaluate("a", Settings(k=6)), lambda: kept.evaluate("a", Settings(score_threshold=0)),
                   lambda: kept.score_distribution("a"), lambda: kept.cases()):
        with pytest.raises(InputError, match="score_positions"):
            wanted()


@contextmanager
def small_blocks(**values):
    """The id index's and the gathers' block sizes (``INDEX_CHUNK``, ``PARALLEL_MIN``,
    ``RUN_PIECE``) set small in every module that reads them, for the body of the block."""
    from metrics_core.inputs import gather, ids

    saved = [(module, name, getattr(module, name)) for module in (gather, ids) for name in values
             if hasattr(module, name)]
    try:
        for module, name, _ in saved:
            setattr(module, name, values[name])
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-2**31, 2**31 - 1), min_size=1, max_size=60), st.integers(1, 7), st.integers(1, 9))
def test_the_extremes_of_ids_read_in_blocks_on_threads_are_numpy_s(values, block, parallel_min):
    """The id index's minimum and maximum (shares per thread, blocks within a share)."""
    from metrics_core.inputs.ids import extremes_of

    array = np.array(values, dtype=np.int64)
    with small_blocks(INDEX_CHUNK=block, PARALLEL_MIN=parallel_min):
        assert extremes_of(array) == (array.min(), array.max())


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 9)), min_size=1, max_size=30), st.integers(1, 7),
       st.integers(1, 9))
def test_ids_in_runs_are_indexed_by_each_pieces_runs_as_every_value_would_be(runs, block, parallel_min):
    """Ids sorted by user come in runs; the index reads the first id of each run of each piece
    (runs cross piece and thread borders, and an id may come back in a later run): the same
    ids as every value, and the codes of the rows given their bounds are the same."""
    from metrics_core.inputs.ids import IdIndex, run_heads

    values = np.repeat([value for value, _ in runs], [length for _, length in runs]).astype(np.int32)
    with small_blocks(RUN_PIECE=block, PARALLEL_MIN=parallel_min):
        np.testing.assert_array_equal(np.unique(run_heads(values)), np.unique(values))
        index = IdIndex.union([values])
        np.testing.assert_array_equal(index.ids, np.unique(values))
        bounds = (int(values.min()), int(values.max()))
        np.testing.assert_array_equal(index.codes(values, bounds), np.searchsorted(index.ids, values))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(3, 12), min_size=1, max_size=60), st.integers(1, 7), st.integers(1, 9))
def test_a_lookup_written_over_its_own_values_is_numpy_s_gather(values, block, parallel_min):
    """``lookup(table, values, low, out=values)`` (the text table maps its codes so): each chunk of
    indices is copied before it is written, on any chunk size and thread split."""
    from metrics_core.inputs.gather import lookup

    table = np.random.default_rng(len(values)).permutation(10).astype(np.int32)
    codes = np.array(values, dtype=np.int32)
    expected = table[codes - 3]
    with small_blocks(INDEX_CHUNK=block, PARALLEL_MIN=parallel_min):
        assert lookup(table, codes, 3, out=codes) is codes
    np.testing.assert_array_equal(codes, expected)


@settings(max_examples=80, deadline=None)
@given(lengths=st.lists(st.integers(1, 12), min_size=1, max_size=30), data=st.data())
def test_score_positions_in_user_blocks_equal_one_sort_of_every_row(lengths, data):
    """Rows in one block per user are ordered block by block (a matrix sorted along its rows);
    the positions equal those of one stable sort by user and descending score, ties included."""
    from metrics_core.inputs.encode import _positions_by_score

    user = np.repeat(np.arange(len(lengths)), lengths)
    score = np.array(data.draw(st.lists(st.integers(0, 4), min_size=len(user), max_size=len(user))), dtype=float)
    order = np.lexsort((-score, user))
    starts = np.flatnonzero(np.concatenate([[True], user[1:] != user[:-1]]))
    expected = np.empty(len(user), dtype=np.int64)
    expected[order] = np.arange(len(user)) - np.repeat(starts, np.diff(np.append(starts, len(user))))
    assert (_positions_by_score(user, score, None) == expected).all()


@pytest.mark.parametrize("item_type", [np.int32, np.int64])
def test_judged_cells_are_found_by_the_compiled_pass_as_by_numpy(item_type, monkeypatch):
    """From ``KERNEL_MIN`` cells the judged non-relevant cells (bpref, infAP) are marked by a
    compiled pass over each row; the same cells as numpy's ``isin`` of (user, item) keys, with
    users that have no judged item, an item judged for one user and listed for another, and
    duplicates blanked; the metrics that read them agree too."""

    recs, truth = whole_lists(n_users=70, length=12, item_space=40, seed=8)
    truth.loc[truth.user_id % 5 == 0, "grade"] = 3  # users with nothing judged
    built = Dataset.build(recs, truth, columns=Columns(relevance="grade", threshold=2))
    lists, ground_truth = built.lists["model"], built.truth
    lists.items = lists.items.astype(item_type)
    expected = lists.judged_cells(ground_truth).copy()
    assert 0 < expected.sum() < (lists.items >= 0).sum() and not (expected & lists.hit).any()
    numpy_values = built.evaluate(settings=Settings(k=5)).per_user[["bpref", "infap"]]
    lists._judged = None
    compiled_loops(monkeypatch)
    np.testing.assert_array_equal(lists.judged_cells(ground_truth), expected)
    pd.testing.assert_frame_equal(built.evaluate(settings=Settings(k=5)).per_user[["bpref", "infap"]], numpy_values)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_score_positions_of_equal_lists_by_the_compiled_sort_equal_numpys(dtype, monkeypatch):
    """From ``KERNEL_MIN`` rows, lists of one length are ordered by a compiled stable sort per
    list: the positions of numpy's sort, with ties, infinities and signed zeros."""
    from metrics_core.inputs import encode as module

    rng = np.random.default_rng(9)
    users, width = 3_000, 17
    score = rng.integers(0, 6, users * width).astype(dtype)  # (many ties)
    score[::7] = rng.random(len(score[::7]))
    score[5], score[6], score[40], score[41] = np.inf, -np.inf, 0.0, -0.0
    user = np.repeat(np.arange(users), width)
    expected = module._positions_by_score(user, score, None)
    compiled_loops(monkeypatch)
    taken = []
    kernel = module._positions_in_rows_compiled
    monkeypatch.setattr(module, "_positions_in_rows_compiled", lambda *args: taken.append(1) or kernel(*args))
    compiled = module._positions_by_score(user, score, None)
    assert taken and compiled.dtype == expected.dtype and (compiled == expected).all()


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize(("grades", "cell_type"), [((1, 2, 3), np.uint8), ((1, 2.5, 4.5), np.float32),
                                                   ((1, 3, 300), np.float32)])
def test_grade_cells_take_a_byte_when_every_grade_is_a_small_whole_number(monkeypatch, compiled, grades, cell_type):
    """Lists' grade cells are uint8 for whole grades from 0 to 255 (1 byte instead of 4), float32
    otherwise, on the numpy and the compiled join; the cells and every metric equal those of
    float32 cells."""
    compiled_loops(monkeypatch, compiled)
    recs, truth = whole_lists(60, 8, 30, seed=4)
    truth["grade"] = np.array(grades)[np.arange(len(truth)) % 3]
    small = encoded(recs, truth)
    lists = small.lists[small.models[0]]
    assert lists.grade.dtype == cell_type
    monkeypatch.setattr(type(small.truth), "cell_grade_type", property(lambda self: np.dtype(np.float32)))
    wide = encoded(recs, truth)
    assert wide.lists[wide.models[0]].grade.dtype == np.float32
    np.testing.assert_array_equal(lists.grade, wide.lists[wide.models[0]].grade)
    settings_ = Settings(k=5, gain="exponential")
    a, b = small.evaluate(settings=settings_), wide.evaluate(settings=settings_)
    assert a.metrics == b.metrics


@pytest.mark.parametrize("graded", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_the_ground_truth_sorted_user_by_user_on_the_compiled_loops_is_numpys(seed, graded, monkeypatch):
    """Ground-truth rows grouped by user, items in no order (a few users with more than 32 items,
    duplicate pairs, grades): sorted by one compiled pass over the users or by numpy's sorts of
    the pieces, the encoded truth is the same."""
    rng = np.random.default_rng(seed)
    sizes = np.where(rng.random(300) < 0.05, rng.integers(33, 80, 300), rng.integers(0, 12, 300))
    user = np.repeat(np.arange(300), sizes)
    truth = pd.DataFrame({"user_id": user, "item_id": rng.integers(0, 200, len(user)),
                          "grade": rng.integers(1, 4, len(user))})
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(300), 5), "item_id": rng.integers(0, 200, 1500),
                         "rank": np.tile(np.arange(1, 6), 300)})
    kept = truth if graded else truth.drop(columns="grade")
    columns = Columns(relevance="grade", threshold=1) if graded else Columns()
    monkeypatch.setattr(encode, "SEGMENT_SORT_MIN", 1 << 40)
    compiled_loops(monkeypatch, False)
    by_numpy = Dataset.build(recs, kept, columns=columns).truth
    compiled_loops(monkeypatch)
    compiled = Dataset.build(recs, kept, columns=columns).truth
    for field in ("item", "grade", "relevant_count"):
        np.testing.assert_array_equal(getattr(compiled, field), getattr(by_numpy, field), err_msg=field)
    assert any(note.code == "duplicate_truth" for note in by_numpy.notes) and sizes.max() > 32


@pytest.mark.parametrize("id_type", [np.int32, np.int64])
@pytest.mark.parametrize("compiled", [True, False])
def test_ids_marked_by_the_compiled_loop_or_numpy_give_the_same_index(id_type, compiled, monkeypatch):
    """The id index marks the ids in use by a compiled pass on flags of each thread's own (from
    ``KERNEL_MIN`` ids, for a range of at most ``OWN_FLAGS_MAX``) or by numpy: the same ids and
    codes, over many blocks, for popular ids with holes between them, negative ids, read-only
    columns, a dense range that stops early and a range too wide for the compiled pass."""
    from metrics_core.inputs import ids as ids_module
    from metrics_core.inputs.ids import IdIndex

    compiled_loops(monkeypatch, on=compiled)
    marked, mark = [], ids_module._mark_compiled
    monkeypatch.setattr(ids_module, "_mark_compiled", lambda *args: marked.append(len(args[1])) or mark(*args))
    rng = np.random.default_rng(5)
    popular = rng.zipf(1.3, 50_000) % 3_000 * 7 - 900  # holes between ids, negative ones
    cases = {"popular": popular, "each once": rng.permutation(20_000) * 3 - 5, "dense": np.tile(np.arange(500), 300),
             "wide": np.array([0, 1 << 23, 5] * 9)}
    with small_blocks(PARALLEL_MIN=1 << 10):  # blocks of 2**10 x threads x 2: many of them
        for name, values in cases.items():
            column = values.astype(id_type)
            column.flags.writeable = False  # (as pandas hands out a column)
            index = IdIndex.union([column])
            np.testing.assert_array_equal(index.ids, np.unique(values), err_msg=name)
            np.testing.assert_array_equal(index.codes(column), np.searchsorted(index.ids, values), err_msg=name)
    assert bool(marked) == compiled and sum(marked) < len(popular) + 20_000 + len(cases["dense"])  # (dense: stopped)
