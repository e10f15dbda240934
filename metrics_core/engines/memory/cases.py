"""Recommendation cases: what one user did, what each model served, and what it missed."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core.errors import input_error


@dataclass
class Case:
    """One user's story. ``recommendations`` and ``missed`` have a ``model`` column so that
    models can be shown side by side."""

    user: object
    history: pd.DataFrame
    recommendations: pd.DataFrame
    missed: pd.DataFrame


def sample_users(dataset, n: int = 5, seed: int = 0, evaluated_only: bool = True) -> list:
    """A reproducible random sample of user ids (users with relevant items by default)."""
    pool = np.flatnonzero(dataset.truth.relevant_count > 0) if evaluated_only else np.arange(len(dataset.users))
    chosen = np.random.default_rng(seed).choice(pool, size=min(n, len(pool)), replace=False)
    return [dataset.users.ids[c] for c in np.sort(chosen)]


def cases(dataset, users: list | None = None, k: int = 10, history: int = 10, item_columns: list[str] | None = None,
          models: list[str] | None = None, sample: int = 5, seed: int = 0) -> list[Case]:
    """Cases for ``users`` (ids), or a reproducible sample of ``sample`` users.

    history: the user's last ``history`` training interactions (by timestamp when there is
    one, else by row order), newest first. recommendations: each model's top K with rank,
    score, a relevance flag and grade, and ``item_columns`` from the item table. missed: the
    relevant items a model's top K does not contain.
    """
    if users is None:
        users = sample_users(dataset, sample, seed)
    models = models or dataset.models
    codes = dataset.users.codes(_as_ids(dataset, users))
    unknown = [u for u, c in zip(users, codes, strict=True) if c < 0]
    if unknown:
        raise input_error("cases", f"unknown user ids: {', '.join(map(str, unknown[:5]))}.",
                          "pick users that appear in the recommendations or the ground truth.")
    item_info = _item_info(dataset, item_columns)
    return [_case(dataset, user, int(code), k, history, item_info, models) for user, code in zip(users, codes,
                                                                                                   strict=True)]


def _as_ids(dataset, users: list) -> np.ndarray:
    values = np.asarray(users)
    if dataset.users.is_integer:
        return pd.to_numeric(pd.Series(values), errors="coerce").fillna(-(2**62)).to_numpy(np.int64)
    return values.astype(str).astype(object)


def _item_info(dataset, item_columns):
    if dataset.item_table is None or not item_columns:
        return None
    table = dataset.item_table
    missing = [c for c in item_columns if c not in table.columns]
    if missing:
        raise input_error("cases", f"the item table has no column {', '.join(map(repr, missing))}.",
                          "choose columns of the item table.")
    info = table[[c for c in item_columns if c != dataset.columns.item]].copy()
    info.index = dataset.item_table_codes
    return info[~info.index.duplicated()]


def _with_items(dataset, frame: pd.DataFrame, codes: np.ndarray, item_info) -> pd.DataFrame:
    frame.insert(0, "item_id", dataset.items.ids[codes] if len(codes) else [])
    if item_info is not None:
        extra = item_info.reindex(codes).reset_index(drop=True)
        frame = pd.concat([frame.reset_index(drop=True), extra], axis=1)
    return frame


def _case(dataset, user, code, k, history, item_info, models) -> Case:
    truth = dataset.truth
    start = int(np.sum(truth.relevant_count[:code]))
    relevant_items = truth.item[start:start + truth.relevant_count[code]]
    relevant_grades = dict(zip(relevant_items.tolist(), truth.grade[start:start + len(relevant_items)].tolist(),
                               strict=True))
    recs, missed = [], []
    for model in models:
        lists = dataset.lists[model]
        row = lists.items[code, :k]
        ranks = np.flatnonzero(row >= 0)
        items = row[ranks]
        frame = pd.DataFrame({"model": model, "rank": ranks + 1,
                              "score": lists.scores[code, ranks] if lists.scores is not None else np.nan,
                              "relevant": [i in relevant_grades for i in items.tolist()],
                              "grade": [relevant_grades.get(i, np.nan) for i in items.tolist()]})
        recs.append(_with_items(dataset, frame, items, item_info))
        not_found = np.array([i for i in relevant_items.tolist() if i not in set(items.tolist())], dtype=np.int64)
        missed.append(_with_items(dataset, pd.DataFrame({"model": model,
                                                         "grade": [relevant_grades[i] for i in not_found.tolist()]}),
                                  not_found, item_info))
    return Case(user, _history(dataset, code, history, item_info), pd.concat(recs, ignore_index=True),
                pd.concat(missed, ignore_index=True))


def _history(dataset, code: int, n: int, item_info) -> pd.DataFrame:
    training = dataset.training
    if training is None or n == 0:
        return pd.DataFrame(columns=["item_id"])
    rows = np.flatnonzero(training.user == code)
    if training.timestamp is not None:
        rows = rows[np.argsort(training.timestamp[rows], kind="stable")]
    rows = rows[::-1][:n]
    frame = pd.DataFrame({"timestamp": training.timestamp[rows]} if training.timestamp is not None else {})
    if training.timestamp is not None:
        frame["timestamp"] = pd.to_datetime(frame["timestamp"], unit="s", errors="coerce")
    return _with_items(dataset, frame, training.item[rows], item_info)
