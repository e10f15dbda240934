"""Rating prediction: RMSE and MAE over the (user, item) pairs that have both a predicted
and a true rating, overall and per user."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core.errors import input_error
from metrics_core.inputs import validate
from metrics_core.inputs.columns import Columns
from metrics_core.inputs.read import read_table
from metrics_core.inputs.text_ids import is_text


@dataclass
class RatingErrors:
    """``rmse`` = sqrt(mean((r − r̂)²)), ``mae`` = mean(|r − r̂|) over matched pairs;
    ``per_user`` has columns rmse, mae, pairs; ``unmatched`` counts pairs on one side only."""

    rmse: float
    mae: float
    pairs: int
    per_user: pd.DataFrame
    unmatched: dict[str, int]


def rating_errors(predictions, ratings, prediction_column: str = "score", rating_column: str = "rating",
                  columns: Columns | None = None) -> RatingErrors:
    """RMSE and MAE of predicted ratings against true ratings (paths or DataFrames).

    >>> p = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [1, 2, 1], "score": [4.0, 2.0, 5.0]})
    >>> t = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [1, 2, 1], "rating": [5, 2, 3]})
    >>> e = rating_errors(p, t)
    >>> round(e.rmse, 4), round(e.mae, 4)
    (1.291, 1.0)
    """
    columns = columns or Columns()
    keys = [columns.user, columns.item]
    frames = []
    for source, value_column, role in ((predictions, prediction_column, "predictions"),
                                       (ratings, rating_column, "ratings")):
        frame, label = read_table(source, role)
        validate.require_columns(frame, [*keys, value_column], label)
        user = validate.ids(frame, columns.user, label, keys)
        item = validate.ids(frame, columns.item, label, keys)
        values = validate.numbers(frame, value_column, label, [*keys, value_column], "rating",
                                  "every pair needs a finite rating; fill or drop these rows.")
        frames.append((user, item, values))
    (pu, pi, pv), (tu, ti, tv) = frames
    pu, tu = (ids.texts() if is_text(ids) else ids for ids in validate.unify_ids([pu, tu]))
    pi, ti = (ids.texts() if is_text(ids) else ids for ids in validate.unify_ids([pi, ti]))
    left = pd.DataFrame({"user": pu, "item": pi, "predicted": pv}).drop_duplicates(["user", "item"], keep="last")
    right = pd.DataFrame({"user": tu, "item": ti, "true": tv}).drop_duplicates(["user", "item"], keep="last")
    both = left.merge(right, on=["user", "item"], how="inner")
    if both.empty:
        raise input_error("ratings", "no (user, item) pair has both a predicted and a true rating.",
                          "check that the user and item ids of the two tables match.")
    error = both["predicted"].to_numpy() - both["true"].to_numpy()
    both["squared"], both["absolute"] = error**2, np.abs(error)
    grouped = both.groupby("user")
    per_user = pd.DataFrame({"rmse": np.sqrt(grouped["squared"].mean()), "mae": grouped["absolute"].mean(),
                             "pairs": grouped.size()})
    per_user.index.name = columns.user
    return RatingErrors(float(np.sqrt(both["squared"].mean())), float(both["absolute"].mean()), len(both), per_user,
                        {"predictions_without_rating": len(left) - len(both),
                         "ratings_without_prediction": len(right) - len(both)})
