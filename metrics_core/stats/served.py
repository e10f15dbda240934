"""Who is served: a per-user metric by user group (activity, or any user attribute), and how far
apart the groups are; and on the item side, how well each group of items (the head, middle and
tail of training popularity, or the categories of an item column) is found (:func:`item_side`).

The gap is the largest group mean minus the smallest; the spread is the mean absolute deviation
of the group means around their own mean (every group weighing the same, however many users it
has). Their intervals come from resampling users within each group (a stratified bootstrap: every
group keeps its size), each group's resampled means drawn as :func:`~metrics_core.stats.compare.resampled_means`
draws them (users drawn with replacement up to 100,000 users in the group, the normal limit above).
A group without a value is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core._numeric.sums import column_sums
from metrics_core.errors import input_error
from metrics_core.intervals import LEVEL, mean_interval
from metrics_core.stats.compare import percentile_interval, resampled_means
from metrics_core.stats.segments import group_codes, labels_of


@dataclass(frozen=True)
class Served:
    """``groups``: one row per group (index: the group, in its natural order where it has one):
    ``users``, ``mean`` and its t interval ``low``, ``high``. ``gap`` and ``spread`` with their
    bootstrap intervals (``gap_low`` …), ``level`` and ``resamples``."""

    groups: pd.DataFrame
    gap: float
    gap_low: float
    gap_high: float
    spread: float
    spread_low: float
    spread_high: float
    level: float
    resamples: int

    def sentence(self, metric_label: str) -> str:
        """The gap in words, with its interval."""
        if len(self.groups) < 2:
            return f"Only one group has {metric_label}: there is no gap to measure."
        best, worst = self.groups["mean"].idxmax(), self.groups["mean"].idxmin()
        return (f"{metric_label} is {self.gap:.4f} higher for {best} than for {worst} ({self.level:.0%} interval "
                f"{self.gap_low:.4f} to {self.gap_high:.4f}); the group means lie {self.spread:.4f} from their "
                f"mean on average.")


def served(values: pd.Series, groups: pd.Series, resamples: int = 1000, seed: int = 0,
           level: float = LEVEL) -> Served:
    """How a per-user metric (``values``, indexed by user id; NaN: no value) differs between the
    user ``groups`` (a group per user id; users it does not name are in ``(unknown)``).

    >>> values = pd.Series([0.0, 0.2, 0.5, 0.7], index=[1, 2, 3, 4])
    >>> result = served(values, pd.Series(["a", "a", "b", "b"], index=[1, 2, 3, 4]), resamples=200)
    >>> round(result.gap, 4), round(result.spread, 4), result.groups["users"].tolist()
    (0.5, 0.25, [2, 2])
    """
    if resamples < 1:
        raise input_error("served", f"resamples = {resamples!r}.", "give at least 1 resample, e.g. 1000.")
    twice = groups.index[groups.index.duplicated()]
    if len(twice):
        raise input_error("served", f"{len(twice.unique()):,} users have more than one group, e.g. "
                          f"{', '.join(map(repr, twice.unique()[:3].tolist()))}.",
                          "give one group per user (drop the repeated rows of the user table).")
    kept = values.notna().to_numpy()
    present = values[kept]
    codes, names = group_codes(labels_of(groups, values.index)[kept])
    numbers = present.to_numpy(dtype=np.float64)
    rows, draws = [], []
    for number, (code, name) in enumerate(names):
        mine = numbers[codes == code]
        low, high = mean_interval(mine, level) if len(mine) > 1 else (np.nan, np.nan)
        rows.append({"group": name, "users": len(mine), "mean": float(mine.mean()), "low": low, "high": high})
        draws.append(resampled_means(mine[:, None], resamples, seed + number)[:, 0])
    table = pd.DataFrame(rows, columns=["group", "users", "mean", "low", "high"]).set_index("group")
    if not len(table):
        raise input_error("served", "no user has a value of this metric.", "choose a metric the users have.")
    means = table["mean"].to_numpy()
    resampled = np.column_stack(draws)
    gap_samples = resampled.max(axis=1) - resampled.min(axis=1)
    spread_samples = np.abs(resampled - resampled.mean(axis=1, keepdims=True)).mean(axis=1)
    (gap_low, gap_high), (spread_low, spread_high) = percentile_interval(
        np.column_stack([gap_samples, spread_samples]), level)
    return Served(table, float(means.max() - means.min()), float(gap_low), float(gap_high),
                  float(np.abs(means - means.mean()).mean()), float(spread_low), float(spread_high), level, resamples)


POPULARITY_GROUPS = ("head", "mid", "tail", "not in training")


def popularity_thirds(interactions_per_item: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Items x groups shares (one-hot): the items with training interactions ranked by them (most
    first, ties by code) and cut into thirds of as many items each (head, mid, tail; the first
    thirds take the remainder), and the items without any (not in training), with the groups' names.

    >>> shares, names = popularity_thirds(np.array([9, 0, 5, 1, 7]))
    >>> shares.argmax(axis=1).tolist(), names
    ([0, 3, 1, 2, 0], ['head', 'mid', 'tail', 'not in training'])
    """
    from metrics_core.metrics.popularity import popularity_order

    ranked = popularity_order(interactions_per_item)
    group = np.full(len(interactions_per_item), 3)
    group[ranked] = np.arange(len(ranked)) * 3 // max(len(ranked), 1)
    return np.eye(4)[group], list(POPULARITY_GROUPS)


def item_side(top_hit_user: np.ndarray, top_hit_item: np.ndarray, recommended_per_item: np.ndarray,
              relevant: np.ndarray, rows: np.ndarray, shares: np.ndarray, names: list[str]) -> pd.DataFrame:
    """How each group of items is served in the top K: ``shares`` (items x groups, each item's share
    of each group: one-hot, or split among an item's categories) weigh the hits (``top_hit_user``,
    ``top_hit_item``: the relevant items in the top K) and every recommendation (each item's
    count in the top K lists, ``recommended_per_item``), over the evaluated users ``rows``, whose
    relevant items by group are ``relevant`` (:func:`by_group` of the ground truth: the same for
    every model). One row per
    group: ``items`` (in the catalog), ``relevant`` (relevant items of the evaluated users),
    ``users`` (evaluated users with a relevant item in the group), ``hits`` (per evaluated user),
    ``recall`` (hits / relevant items of the group, averaged over the users with some) and
    ``recommended`` (its share of the top-K recommendations). Groups with neither items nor
    recommendations are left out."""
    hits = by_group(top_hit_user, top_hit_item, rows, shares)
    recommended = recommended_per_item @ shares
    some = relevant > 0
    users = column_sums(some, np.int64)  # (every group in one pass; numpy's sum down the rows is slower)
    recall = np.divide(column_sums(np.divide(hits, relevant, out=np.zeros_like(hits), where=some)), users,
                       out=np.full(len(names), np.nan), where=users > 0)
    table = pd.DataFrame({"group": names, "items": shares.sum(axis=0), "relevant": column_sums(relevant),
                          "users": users, "hits": column_sums(hits) / len(rows) if len(rows) else np.nan,
                          "recall": recall, "recommended": recommended / max(recommended.sum(), 1e-300)})
    return table[(table["items"] > 0) | (table["recommended"] > 0)].reset_index(drop=True)


def by_group(user: np.ndarray, item: np.ndarray, rows: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """Σ over the (``user``, ``item``) pairs of users ``rows`` of each item's ``shares``: rows x
    groups, one sparse product (a repeated pair counts each time).

    >>> by_group(np.array([0, 0, 2]), np.array([1, 0, 1]), np.array([0, 2]), np.array([[1.0, 0.0], [0.5, 0.5]]))
    array([[1.5, 0.5],
           [0.5, 0.5]])
    """
    import scipy.sparse as sp

    row_of = np.full(max(int(user.max(initial=-1)), int(rows.max(initial=-1))) + 1, -1, dtype=np.intp)
    row_of[rows] = np.arange(len(rows))
    kept = row_of[user] >= 0
    pairs = sp.csr_matrix((np.ones(int(kept.sum())), (row_of[user[kept]], item[kept])),
                          shape=(len(rows), len(shares)))
    return np.asarray(pairs @ shares, dtype=np.float64).reshape(len(rows), shares.shape[1])


def items_by_model(dataset, models: list[str], settings, by: str | None = None) -> dict[str, pd.DataFrame] | None:
    """The item side for several models at once, a row per model and a column per item group:
    ``recall`` and ``recommended`` (the group's share of the recommendations), as the report and
    the Compare page show them. The groups are the popularity thirds (head, mid, tail, not in
    training; None without training data), or the categories of the item table's column ``by``."""
    if by is None and dataset.training is None:
        return None
    tables = {name: dataset.served_items(name, settings, by).set_index("group") for name in models}
    return {measure: pd.DataFrame({name: table[measure] for name, table in tables.items()}).T.rename_axis("model")
            for measure in ("recall", "recommended")}


GAP_RESAMPLES = 200  # resamples behind the gap's interval where a page or the report states it


def gap_sentences(results: dict, metric: str, groups: pd.Series, resamples: int = GAP_RESAMPLES) -> dict[str, str]:
    """Each model's gap between the user ``groups`` on ``metric``, in words (:meth:`Served.sentence`),
    for the models with per-user values of it."""
    from metrics_core._numeric.parallel import map_threads
    from metrics_core.metrics import registry

    column = registry.per_user_columns()[metric]
    named = [(name, result) for name, result in results.items() if column in result.per_user.columns]
    sentences = map_threads(lambda pair: served(pair[1].per_user[column], groups, resamples).sentence(
        registry.label(metric, pair[1].k)), named)  # (the models side by side)
    return dict(zip([name for name, _ in named], sentences, strict=True))

