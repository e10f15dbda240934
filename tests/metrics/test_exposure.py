"""Exposure across item groups: the reference ranking, the targets, the browsing models, and what
it needs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon

from metrics_core import Dataset, Settings
from metrics_core.errors import InputError
from metrics_core.metrics import exposure

ITEMS = pd.DataFrame({"item_id": range(8), "genre": ["A", "A", "B", "B", "A", "A", "A|B", "C"]})


def distance(listed: list[list[int]], items=ITEMS, train=None, **options) -> float:
    recs = pd.DataFrame([(u, item, r + 1) for u, items_ in enumerate(listed) for r, item in enumerate(items_)],
                        columns=["user_id", "item_id", "rank"])
    truth = recs.groupby("user_id").head(1)[["user_id", "item_id"]]
    result = Dataset.build(recs, truth, items=items, train=train).evaluate(settings=Settings(k=4, **options))
    return result.metrics.get("exposure_distance", result.skipped.get("exposure_distance"))


def test_the_reference_ranking_a_a_b_b():
    weights = exposure.position_weights(4, "log2", 0.8)
    assert weights[:2].sum() / weights.sum() == pytest.approx(0.63668, abs=5e-6)
    assert distance([[0, 1, 2, 3]], items=ITEMS.iloc[:4], exposure_target="uniform") == pytest.approx(0.11739,
                                                                                                       abs=5e-6)


def test_the_catalog_and_training_targets_and_the_rbp_reader():
    a_share = (1 + 1 / math.log2(3)) / sum(1 / math.log2(i + 1) for i in range(1, 5))
    # the catalog: A on 4.5 of 8 items, B on 2.5, C on 1
    catalog = np.array([4.5, 2.5, 1.0]) / 8
    assert distance([[0, 1, 2, 3]]) == pytest.approx(jensenshannon([a_share, 1 - a_share, 0], catalog, base=2),
                                                     rel=1e-12)
    train = pd.DataFrame({"user_id": [9, 9, 9, 8], "item_id": [7, 7, 2, 7]})  # training: C 3 of 4, B 1 of 4
    assert distance([[0, 1, 2, 3]], train=train, exposure_target="training") == pytest.approx(
        jensenshannon([a_share, 1 - a_share, 0], [0, 0.25, 0.75], base=2), rel=1e-12)
    p = 0.5  # rbp: 1, 1/2, 1/4, 1/8
    shares = np.array([1.5, 0.375]) / 1.875
    assert distance([[0, 1, 2, 3]], items=ITEMS.iloc[:4], exposure_target="uniform", exposure_browsing="rbp",
                    rbp_p=p) == pytest.approx(jensenshannon(shares, [0.5, 0.5], base=2), rel=1e-12)


def test_several_lists_pool_their_exposure_and_multi_labels_split_it():
    # two lists: [A, B] and [B, A] share exposure evenly between A and B
    assert distance([[0, 2], [3, 1]], items=ITEMS.iloc[:4], exposure_target="uniform") == pytest.approx(0.0,
                                                                                                         abs=1e-12)
    # an item of A and B at the top splits its exposure: [A|B] alone is half and half
    assert distance([[6]], items=ITEMS.iloc[[0, 2, 6]], exposure_target="uniform",
                    category_column="genre") == pytest.approx(0.0, abs=1e-12)


def test_what_exposure_needs():
    assert "item table" in distance([[0, 1]], items=None)
    assert "training interactions" in distance([[0, 1]], exposure_target="training")
    assert "category" in distance([[0, 1]], items=ITEMS.assign(genre=range(8)))
    recs = pd.DataFrame({"user_id": [1], "item_id": [0], "rank": [1]})
    dataset = Dataset.build(recs, recs[["user_id", "item_id"]], items=ITEMS)
    assert dataset.exposure("model", Settings(k=1))["exposure"].tolist() == [1.0, 0.0, 0.0]
    with pytest.raises(InputError, match="no model named 'other'"):
        dataset.exposure("other")
    with pytest.raises(InputError, match="category"):
        Dataset.build(recs, recs[["user_id", "item_id"]], items=ITEMS[["item_id"]]).exposure("model")
