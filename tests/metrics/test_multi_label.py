"""A multi-label item attribute ("Drama|War", as MovieLens' genres) counts by its labels: in item
bias (an item of two genres counts once for each) and in the cosine similarity of diversity (one
column per label, not per combination)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics_core import Dataset, Settings
from metrics_core.metrics.bias import compare_distributions


def test_bias_shares_are_of_labels_not_of_combinations():
    served = pd.Series(["Drama|War", "Drama", "War|Comedy", "Drama|War"])
    reference = pd.Series(["Comedy", "Drama", "War", "Comedy"])
    report = compare_distributions("genres", served, reference, ("recommendations", "catalog"))
    shares = report.distribution[report.distribution.group == "recommendations"].set_index("value")["share"]
    assert shares.to_dict() == pytest.approx({"Comedy": 1 / 7, "Drama": 3 / 7, "War": 3 / 7})
    assert "Drama|War" not in set(report.distribution["value"])


def test_diversity_of_multi_label_features_is_the_cosine_of_their_label_vectors():
    """Two items sharing one of two genres each: cosine 1/2, a distance of 1/2 (as one-hot of the
    combinations, 'Drama|War' and 'Drama|Comedy' would have nothing in common: a distance of 1)."""
    recs = pd.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "rank": [1, 2]})
    truth = pd.DataFrame({"user_id": [1], "item_id": ["a"]})
    items = pd.DataFrame({"item_id": ["a", "b"], "genres": ["Drama|War", "Drama|Comedy"]})
    data = Dataset.build(recs, truth, items=items, feature_columns=["genres"])
    result = data.evaluate(settings=Settings(k=2))
    assert result.per_user.loc[1, "diversity"] == pytest.approx(0.5)
    assert np.isclose(result.metrics["diversity"], 0.5)
