"""User segments to slice metrics by: activity quartiles from the training data, or a user
attribute from the user table."""

from __future__ import annotations

import numpy as np
import pandas as pd

ACTIVITY = "activity (training interactions)"
ACTIVITY_LABELS = ["least active", "less active", "more active", "most active"]
UNKNOWN = "(unknown)"  # the segment of a user the attribute does not name


def natural_order(values) -> list[str] | None:
    """The order segments read in when they have one (activity: least to most active, an unknown
    last), else None (a user attribute: no order of its own).

    >>> natural_order(["more active", "least active", "(unknown)"])
    ['least active', 'more active', '(unknown)']
    >>> natural_order(["fr", "de"]) is None
    True
    """
    present = set(map(str, values))
    if not present or not present <= {*ACTIVITY_LABELS, UNKNOWN}:
        return None
    return [label for label in (*ACTIVITY_LABELS, UNKNOWN) if label in present]


def labels_of(groups: pd.Series, users: pd.Index) -> pd.Series:
    """The group of each of ``users`` (NaN for a user ``groups`` does not name): ``groups`` as they
    are when they are the same users in the same order, as the pages give them (looking up each of
    1M ids took 20 ms), else looked up.

    >>> labels_of(pd.Series(["a", "b"], index=[7, 9]), pd.Index([9, 5])).tolist()
    ['b', nan]
    """
    return groups if groups.index.equals(users) else groups.reindex(users)


def group_codes(labels: pd.Series) -> tuple[np.ndarray, list[tuple[int, str]]]:
    """Each user's group as a code, and (code, name) of each group in reading order: the labels as
    text (a missing one: ``(unknown)``), coded by hashing (sorting a million strings took 0.5 s).

    >>> group_codes(pd.Series(["b", None, "a", "b"]))
    (array([0, 2, 1, 0]), [(2, '(unknown)'), (1, 'a'), (0, 'b')])
    """
    codes, uniques = pd.factorize(labels, use_na_sentinel=True)
    text = [str(u) for u in uniques] + [UNKNOWN]
    merged, names = pd.factorize(np.array(text, dtype=object))  # (two labels with one text are one group)
    codes = merged[np.where(codes < 0, len(uniques), codes)]
    present = [str(names[c]) for c in np.flatnonzero(np.bincount(codes, minlength=len(names)))]  # (no sort of 1M codes)
    order = natural_order(present) or sorted(present)
    at = {str(name): code for code, name in enumerate(names)}
    return codes, [(at[name], name) for name in order]


def segment_choices(dataset) -> list[str]:
    """What users can be segmented by: activity (with training data) and every user attribute."""
    choices = [ACTIVITY] if dataset.training is not None else []
    if dataset.user_table is not None:
        choices += [c for c in dataset.user_table.columns if c != dataset.columns.user]
    return choices


def user_segments(dataset, choice: str) -> pd.Series | None:
    """The segment of every user id (a Series indexed by user id, named after the choice), or
    None when the dataset cannot segment by ``choice``.

    Activity: quartiles of the number of distinct training items, users ranked by it (ties
    by code order, so the four groups have equal sizes).
    """
    ids = pd.Index(dataset.users.ids)
    if choice == ACTIVITY:
        if dataset.training is None:
            return None
        counts = pd.Series(dataset.training.items_per_user, index=ids)
        return pd.qcut(counts.rank(method="first"), 4, labels=ACTIVITY_LABELS).astype(str).rename("activity")
    if dataset.user_table is None or choice not in dataset.user_table.columns:
        return None
    values = dataset.user_attribute(choice)
    return pd.Series(values.reindex(range(len(ids))).to_numpy(), index=ids).astype(str).rename(choice)
