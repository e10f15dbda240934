"""Rating-prediction mode: RMSE and MAE, overall and per user."""

import math

import pandas as pd
import pytest

from metrics_core import InputError, rating_errors


def test_rmse_and_mae_by_hand():
    predicted = pd.DataFrame({"user_id": [1, 1, 2, 3], "item_id": [1, 2, 1, 9], "score": [4.0, 2.0, 5.0, 1.0]})
    true = pd.DataFrame({"user_id": [1, 1, 2, 2], "item_id": [1, 2, 1, 2], "rating": [5, 2, 3, 4]})
    errors = rating_errors(predicted, true)
    assert errors.rmse == pytest.approx(math.sqrt((1 + 0 + 4) / 3))
    assert errors.mae == pytest.approx((1 + 0 + 2) / 3)
    assert errors.pairs == 3
    assert errors.per_user.loc[1, "rmse"] == pytest.approx(math.sqrt(0.5))
    assert errors.per_user.loc[2, "mae"] == pytest.approx(2.0)
    assert errors.unmatched == {"predictions_without_rating": 1, "ratings_without_prediction": 1}


def test_no_matching_pairs_is_a_clear_error():
    with pytest.raises(InputError, match="no \\(user, item\\) pair"):
        rating_errors(pd.DataFrame({"user_id": [1], "item_id": [1], "score": [1.0]}),
                      pd.DataFrame({"user_id": [2], "item_id": [1], "rating": [1.0]}))
