"""A large Parquet model's rank and score streamed into the cells (:mod:`metrics_core.inputs.stream`)
must encode exactly as the same rows held in a frame, and must hand every input it cannot place
exactly to the general read, whose checks name the offending rows."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import Encoding, Settings
from metrics_core.engines.memory import dataset as dataset_module
from metrics_core.errors import InputError
from metrics_core.inputs import encode, stream
from tests.compiled import compiled_loops
from tests.inputs.test_encoding_paths import assert_same_encoding, encoded, whole_lists


@pytest.fixture
def streaming(monkeypatch):
    """Every Parquet model large enough to stream, and a record of each streaming's outcome
    (``"streamed"``, or ``"declined"`` when it handed the file to the general read)."""
    outcomes: list[str] = []
    real = dataset_module.encode_streamed

    def spy(*args, **kwargs):
        lists = real(*args, **kwargs)
        outcomes.append("declined" if lists is None else "streamed")
        return lists

    compiled_loops(monkeypatch)
    monkeypatch.setattr(dataset_module, "encode_streamed", spy)
    return outcomes


def shuffled_lists(seed: int = 4):
    """Rows in random order with rank gaps, duplicate items, users without a list and a
    graded ground truth with users without a list."""
    recs, truth = whole_lists(n_users=70, length=14, item_space=50, seed=seed)  # few items: duplicates
    recs = recs[(recs["rank"] != 3) | (recs.user_id % 4 != 0)]  # gaps
    recs = recs[recs.user_id % 9 != 0]  # users without a list
    truth = pd.concat([truth, pd.DataFrame({"user_id": [99_999], "item_id": [1], "grade": [2]})])
    return recs.sample(frac=1.0, random_state=seed).reset_index(drop=True), truth


def assert_same_lists(streamed, general) -> None:
    assert_same_encoding(streamed, general)
    for name in streamed.models:
        left, right = streamed.lists[name], general.lists[name]
        np.testing.assert_array_equal(left.scores, right.scores)
        assert [(n.code, n.count) for n in left.notes] == [(n.code, n.count) for n in right.notes]
        assert left.ordered_by == right.ordered_by


@pytest.mark.parametrize("variant", ["as written", "int32 ranks, float32 scores", "no score", "scores of K + 1",
                                     "integer scores", "one row group per thread"])
def test_streamed_lists_encode_like_the_same_rows_in_a_frame(variant, tmp_path, streaming):
    recs, truth = shuffled_lists()
    options = {}
    if variant == "int32 ranks, float32 scores":
        recs = recs.astype({"rank": np.int32, "score": np.float32})
    if variant == "no score":
        recs = recs.drop(columns=["score"])
    if variant == "scores of K + 1":
        options["score_positions"] = Settings(k=5).score_positions
    if variant == "integer scores":
        recs = recs.assign(score=(recs.score * 10).astype(np.int64))
    path = tmp_path / "model.parquet"
    recs.to_parquet(path, row_group_size=97 if variant != "one row group per thread" else len(recs) // 2 + 1)
    streamed = encoded({"model": path}, truth, **options)
    assert streaming == ["streamed"]
    general = encoded({"model": recs}, truth, **options)
    assert_same_lists(streamed, general)
    notes = {n.code for n in streamed.lists["model"].notes}
    assert {"duplicate_items", "rank_gaps"} <= notes
    chosen = Settings(k=5)
    assert streamed.evaluate("model", chosen).metrics == pytest.approx(general.evaluate("model", chosen).metrics,
                                                                        nan_ok=True, rel=0, abs=0)


def test_several_models_each_stream_sorted_or_shuffled(tmp_path, streaming):
    """Whole lists in order stream too: their rank and score columns are never made whole."""
    a, truth = whole_lists(n_users=50, length=10, item_space=80, seed=6)
    b, _ = shuffled_lists(seed=7)
    files = {}
    for name, frame in {"a": a, "b": b}.items():
        frame.to_parquet(tmp_path / f"{name}.parquet", row_group_size=128)
        files[name] = tmp_path / f"{name}.parquet"
    streamed = encoded(files, truth)
    assert streaming == ["streamed", "streamed"]
    assert_same_lists(streamed, encoded({"a": a, "b": b}, truth))


def test_text_ids_stream_when_shuffled_and_when_sorted(tmp_path, streaming):
    """Text ids (coded as read, or stored as dictionary codes) stream like integer ids, whole
    lists in order too."""
    def as_text(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.assign(user_id="u" + frame.user_id.astype(str).str.zfill(5),
                            item_id="SKU-" + frame.item_id.astype(str))

    shuffled, truth = shuffled_lists(seed=8)
    whole, _ = whole_lists(n_users=70, length=14, item_space=50, seed=8)
    for name, recs in {"shuffled": as_text(shuffled), "sorted": as_text(whole)}.items():
        streaming.clear()
        recs.to_parquet(tmp_path / f"{name}.parquet", row_group_size=128)
        assert_same_lists(encoded({"model": tmp_path / f"{name}.parquet"}, as_text(truth)),
                          encoded({"model": recs}, as_text(truth)))
        assert streaming == ["streamed"]


def test_several_models_with_text_ids_each_stream(tmp_path, streaming):
    """Several Parquet models with text ids (one with ids the other lacks) are read in two
    steps and streamed like one, and encode as the same rows in frames."""
    def as_text(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.assign(user_id="u" + frame.user_id.astype(str).str.zfill(5),
                            item_id="SKU-" + frame.item_id.astype(str))

    a, truth = shuffled_lists(seed=9)
    b, _ = shuffled_lists(seed=10)
    frames = {"a": as_text(a), "b": as_text(b[b.user_id % 5 != 0]).assign(item_id=lambda f: f.item_id + "x")}
    for name, frame in frames.items():
        frame.to_parquet(tmp_path / f"{name}.parquet", row_group_size=128)
    streamed = encoded({name: tmp_path / f"{name}.parquet" for name in frames}, as_text(truth))
    assert streaming == ["streamed", "streamed"]
    assert_same_lists(streamed, encoded(frames, as_text(truth)))


def test_lists_ordered_by_score_are_not_streamed(tmp_path, streaming):
    recs, truth = shuffled_lists()
    recs.to_parquet(tmp_path / "model.parquet")
    by_score = Encoding(order="score")
    assert_same_lists(encoded({"model": tmp_path / "model.parquet"}, truth, encoding=by_score),
                      encoded({"model": recs}, truth, encoding=by_score))
    assert streaming == []


@pytest.mark.parametrize("bad", ["a NaN score", "an infinite score", "two rows with one rank"])
def test_rows_the_stream_cannot_place_are_named_by_the_general_read(bad, tmp_path, streaming):
    recs, truth = shuffled_lists()
    row = 17
    if bad == "a NaN score":
        recs.loc[row, "score"] = np.nan
    if bad == "an infinite score":
        recs.loc[row, "score"] = -np.inf
    if bad == "two rows with one rank":
        same_user = recs.index[(recs.user_id == recs.user_id[row]) & (recs.index != row)][0]
        recs.loc[row, "rank"] = recs["rank"][same_user]
    # (Arrow's own conversion: pandas would write NaN as a null, which the statistics count)
    pq.write_table(pa.table({name: pa.array(recs[name].to_numpy()) for name in recs}), tmp_path / "model.parquet",
                   row_group_size=97)
    with pytest.raises(InputError) as error:
        encoded({"model": tmp_path / "model.parquet"}, truth)
    assert streaming == ["declined"]
    assert row in error.value.rows.index
    with pytest.raises(InputError) as from_frame:
        encoded({"model": recs}, truth)
    assert str(error.value).replace("(model.parquet)", "") == str(from_frame.value).replace("(DataFrame)", "")


def test_a_row_group_arrow_cannot_decode_is_named_by_the_general_read_not_a_traceback(tmp_path, streaming,
                                                                                     monkeypatch):
    recs, truth = shuffled_lists()
    recs.to_parquet(tmp_path / "model.parquet", row_group_size=97)
    real = pq.ParquetFile.read_row_group

    def corrupt_ranks(self, group, columns=None, **options):
        if columns and "rank" in columns and group == 3:
            raise pa.ArrowInvalid("Corrupt snappy compressed data.")
        return real(self, group, columns=columns, **options)

    monkeypatch.setattr(pq.ParquetFile, "read_row_group", corrupt_ranks)
    with pytest.raises(InputError, match=r"could not be read \(ArrowInvalid: Corrupt snappy") as error:
        encoded({"model": tmp_path / "model.parquet"}, truth)
    assert streaming == ["declined"] and "model.parquet" in str(error.value)


def test_a_longest_list_shorter_than_the_statistics_said_is_read_the_general_way(tmp_path, streaming, monkeypatch):
    """The cells' width must be the longest list's, as the general path finds it."""
    recs, truth = shuffled_lists()
    recs.to_parquet(tmp_path / "model.parquet")
    real = stream.longest_list
    monkeypatch.setattr(dataset_module, "longest_list", lambda *args: real(*args) + 1)
    assert_same_lists(encoded({"model": tmp_path / "model.parquet"}, truth), encoded({"model": recs}, truth))
    assert streaming == ["declined"]


def test_the_longest_list_comes_from_the_rank_statistics_only_when_they_allow_streaming(tmp_path):
    from metrics_core import Columns

    recs, _ = shuffled_lists()
    columns = Columns()
    cases = {"ranks": (recs, 14), "no rank": (recs.drop(columns=["rank"]), None),
             "rank 0": (recs.assign(rank=recs["rank"] - 1), None),
             "float ranks": (recs.astype({"rank": np.float64}), None),
             "text scores": (recs.astype({"score": str}), None),
             "a missing score": (recs.assign(score=recs.score.where(recs.index != 3)), None),
             "a missing rank": (recs.assign(rank=recs["rank"].astype("Int64").where(recs.index != 3)), None)}
    for name, (frame, longest) in cases.items():
        frame.to_parquet(tmp_path / f"{name}.parquet", row_group_size=100)
        assert stream.longest_list(tmp_path / f"{name}.parquet", columns) == longest, name
    recs.to_parquet(tmp_path / "no statistics.parquet", write_statistics=False)
    assert stream.longest_list(tmp_path / "no statistics.parquet", columns) is None


def test_the_compiled_placing_counts_what_it_cannot_place():
    from metrics_core.inputs.kernels import place_ranked

    user = np.array([0, 1, 1, 0, 1], dtype=np.int32)
    item = np.array([5, 6, 7, 8, 9], dtype=np.int32)
    rank = np.array([1, 2, 0, 3, 4], dtype=np.int64)  # 0 and 4 (> 3 positions) cannot be placed
    score = np.array([0.5, np.nan, 1.0, 2.0, 3.0])  # the NaN is counted (its item is placed)
    items_at, scores = np.full(6, -1, np.int32), np.full(4, np.nan)
    assert place_ranked(user, item, rank, score, 3, 2, items_at, scores) == (3, 3)
    np.testing.assert_array_equal(items_at, [5, -1, 8, -1, 6, -1])
    np.testing.assert_array_equal(scores, [0.5, np.nan, np.nan, np.nan])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=24), st.integers(1, 5))
def test_user_blocks_are_found_as_a_slow_obvious_check_finds_them(users, length):
    ids = np.array(users, dtype=np.int64)
    blocks = [users[i:i + length] for i in range(0, len(users), length)]
    expected = bool(users) and len(users) % length == 0 and all(len(set(b)) == 1 for b in blocks) and all(
        a[0] < b[0] for a, b in itertools.pairwise(blocks))
    assert (encode._user_blocks(ids, length) is not None) == expected
