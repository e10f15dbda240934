"""Arrow tables and polars DataFrames are accepted wherever a pandas DataFrame is (issue #47):
every number equals the Parquet path's, and number columns are used in Arrow's memory (no copy
through pandas)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from metrics_core import Columns, Dataset, Settings
from metrics_core.inputs.read import read_table

COLUMNS = Columns(relevance="rating", threshold=4)


def tables() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(4)
    users = [f"u{u}" for u in range(150)]
    items = [f"sku-{i}" for i in range(80)]
    recs = pd.DataFrame({"user_id": np.repeat(users, 10), "item_id": rng.choice(items, 1500),
                         "score": rng.random(1500)}).drop_duplicates(["user_id", "item_id"], ignore_index=True)
    truth = pd.DataFrame({"user_id": np.repeat(users, 4), "item_id": rng.choice(items, 600),
                          "rating": rng.integers(1, 6, 600)}).drop_duplicates(["user_id", "item_id"], ignore_index=True)
    train = pd.DataFrame({"user_id": rng.choice(users, 3000), "item_id": rng.choice(items, 3000)})
    catalog = pd.DataFrame({"item_id": items, "length": rng.random(80), "genre": rng.choice(["a", "b"], 80)})
    return {"recs": recs, "truth": truth, "train": train, "items": catalog}


def evaluated(convert, folder=None) -> dict:
    frames = tables()
    if folder is not None:
        for name, frame in frames.items():
            frame.to_parquet(folder / f"{name}.parquet", index=False)
        sources = {name: folder / f"{name}.parquet" for name in frames}
    else:
        sources = {name: convert(frame) for name, frame in frames.items()}
    dataset = Dataset.build({"m": sources["recs"]}, sources["truth"], train=sources["train"], items=sources["items"],
                            columns=COLUMNS)
    return dataset.evaluate_all(Settings(k=5))


def as_polars(frame: pd.DataFrame):
    polars = pytest.importorskip("polars")
    return polars.from_pandas(frame)


@pytest.mark.parametrize("convert", [
    lambda frame: pa.Table.from_pandas(frame, preserve_index=False),
    lambda frame: pa.RecordBatch.from_pandas(frame, preserve_index=False),
    as_polars,
], ids=["pyarrow Table", "pyarrow RecordBatch", "polars DataFrame"])
def test_every_number_equals_the_parquet_path(convert, tmp_path):
    want, got = evaluated(None, tmp_path)["m"], evaluated(convert)["m"]
    assert got.metrics == pytest.approx(want.metrics, nan_ok=True, abs=0)
    pd.testing.assert_frame_equal(got.per_user, want.per_user)
    assert [n.message for n in got.warnings] == [n.message for n in want.warnings]


def test_number_columns_are_used_in_arrow_s_memory():
    table = pa.Table.from_pandas(tables()["recs"], preserve_index=False)
    frame, label = read_table(table, "recommendations")
    assert label == "recommendations (pyarrow Table)"
    assert np.shares_memory(frame["score"].to_numpy(), table.column("score").chunk(0).to_numpy())
