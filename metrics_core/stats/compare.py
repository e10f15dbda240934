"""Is model B really better than model A, and for whom?

Per-user paired tests between each model and a baseline over the same users, a
multiple-comparison correction across everything tested at once, percentile bootstrap
confidence intervals (resampling users, vectorised as resample-count matrices times the
per-user values), win/tie/loss counts, and the same comparison per user segment.

Users are paired by id. Accuracy metrics cover the same evaluated users in every model (a
user without a list in one model has an empty list there and scores 0, never dropped);
beyond-accuracy per-user metrics are compared over users that have a value in both.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from metrics_core._numeric.parallel import map_threads, meanwhile
from metrics_core.errors import input_error
from metrics_core.metrics import registry
from metrics_core.result import Evaluation
from metrics_core.stats.choices import CORRECTIONS, TESTS
from metrics_core.stats.segments import group_codes, labels_of

RESAMPLE_BATCH_CELLS = 1 << 24
CACHED_RESAMPLE_CELLS = 1 << 25  # ~256 MB of float64 counts at most
NORMAL_LIMIT_USERS = 100_000  # above: the resampled means' normal limit (normal_limit_means)
NORMAL_LIMIT_BLOCK = 1 << 14  # (rows per block: a block of 20 columns, 2.6 MB, stays in cache)
WILCOXON_EXACT_UP_TO = 50  # pairs; above, scipy's normal approximation (signed_rank_test)
DEFAULT_METRICS = ("ndcg", "map", "recall", "precision")  # compared when none are named


def paired_test(b: np.ndarray, a: np.ndarray, test: str = "wilcoxon") -> tuple[float, float]:
    """p-value and effect size of the per-user differences ``b - a``.

    ``t``: :func:`scipy.stats.ttest_rel`, effect size Cohen's d_z = mean(d) / sd(d).
    ``wilcoxon``: :func:`scipy.stats.wilcoxon` with scipy's defaults, effect size the
    matched-pairs rank-biserial correlation (sum of positive minus negative signed ranks over
    their total, zero differences left out). When every difference is 0 there is no evidence
    of a difference: p = 1 and the effect is 0.
    """
    from scipy import stats  # imported on use: it costs half a second at start-up

    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if len(d) == 0 or np.all(d == 0):
        return 1.0, 0.0
    if test == "t":
        sd = d.std(ddof=1) if len(d) > 1 else 0.0
        if sd == 0:
            return 0.0, float(np.sign(d.mean()) * np.inf)
        return float(stats.ttest_rel(b, a).pvalue), float(d.mean() / sd)
    nonzero = d[d != 0]
    if len(d) > WILCOXON_EXACT_UP_TO:
        return signed_rank_test(nonzero)
    ranks = stats.rankdata(np.abs(nonzero))
    effect = float((ranks[nonzero > 0].sum() - ranks[nonzero < 0].sum()) / ranks.sum())
    return float(stats.wilcoxon(b, a).pvalue), effect


def signed_rank_test(nonzero: np.ndarray) -> tuple[float, float]:
    """Wilcoxon's signed-rank test of non-zero differences by the normal approximation, as
    :func:`scipy.stats.wilcoxon` computes it for more than 50 pairs (zeros dropped, no continuity
    correction, two-sided): with n differences ranked by size (ties: their average rank, t of them
    to a tie), z = (R⁺ − n(n+1)/4) / √((n(n+1)(2n+1) − Σ(t³ − t)/2) / 24) and p = 2·P(Z > |z|);
    and the rank-biserial effect (R⁺ − R⁻) / (R⁺ + R⁻). ``nonzero`` holds no NaN.

    One sort serves both (scipy and the effect each ranked them: 0.85 s at 1M users), and it sorts
    numbers, not an order: a size's IEEE-754 bits read as an unsigned integer order as the sizes
    do (a size is never negative), and its sign bit is always 0, so shifting the bits left by one
    loses nothing and frees the lowest bit for the difference's sign. Sorted, equal sizes are
    neighbours whatever their signs (an argsort and two gathers took twice as long)."""
    from scipy.special import ndtr

    n = len(nonzero)
    if n == 0:
        return 1.0, 0.0
    keys = (np.abs(nonzero).view(np.uint64) << np.uint64(1)) | (nonzero > 0)
    keys.sort()
    sizes = keys >> np.uint64(1)
    starts = np.flatnonzero(np.r_[True, sizes[1:] != sizes[:-1]])
    ties = np.diff(np.r_[starts, n]).astype(np.float64)
    average_rank = starts + (ties + 1) / 2  # (ranks from 1)
    positive = np.add.reduceat((keys & np.uint64(1)).astype(np.float64), starts)
    r_plus = float(positive @ average_rank)
    total = n * (n + 1) / 2
    spread = np.sqrt((n * (n + 1.0) * (2.0 * n + 1.0) - float((ties ** 3 - ties).sum()) / 2) / 24)
    z = (r_plus - total / 2) / spread if spread > 0 else 0.0
    return float(2 * ndtr(-abs(z))), float((2 * r_plus - total) / total)


def adjust(p_values: np.ndarray, method: str = "holm") -> np.ndarray:
    """p-values corrected for testing several hypotheses at once.

    ``bonferroni``: min(1, m·p). ``holm``: with p sorted ascending, the i-th (1-based) becomes
    max over j ≤ i of min(1, (m − j + 1)·p_(j)) (step-down, never below Bonferroni's power).
    ``none``: unchanged.

    >>> adjust(np.array([0.01, 0.04, 0.03]), "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, m * p)
    if method != "holm":
        raise input_error("settings", f"correction {method!r} is unknown.",
                          f"choose one of: {', '.join(CORRECTIONS)}.")
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(stepped)
    return out


def bootstrap_means(values: np.ndarray, resamples: int = 1000, seed: int = 0, level: float = 0.95) -> np.ndarray:
    """Percentile bootstrap interval of the mean of each column of ``values`` (users x columns).

    All columns share the same resampled users (so paired differences stay paired); NaN
    cells are users without a value, left out of that column's mean in every resample. Each
    batch of resamples is a matrix of how often each user was drawn, multiplied by the
    values; above 100,000 users, the resampled means are drawn from their normal limit instead
    (:func:`resampled_means`). Returns an array (columns x 2) of the lower and upper bounds.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    return bootstrap_means_of(lambda start, stop: values[start:stop], *values.shape, resamples, seed, level)


def bootstrap_means_of(rows: Callable[[int, int], np.ndarray], n: int, columns: int, resamples: int = 1000,
                       seed: int = 0, level: float = 0.95) -> np.ndarray:
    """:func:`bootstrap_means` of the n x ``columns`` values whose rows ``start .. stop``
    ``rows(start, stop)`` gives (float64): read a block at a time above :data:`NORMAL_LIMIT_USERS`
    users (:func:`normal_limit_means_of`: the values are never whole in memory), made whole below."""
    if n == 0 or resamples < 1:
        return np.full((columns, 2), np.nan)
    return percentile_interval(resampled_means_of(rows, n, columns, resamples, seed), level)


def resampled_means(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The mean of each column in every resample (resamples x columns); NaN = no value.

    Up to :data:`NORMAL_LIMIT_USERS` users, users are drawn with replacement. Above, the resampled
    means are drawn from their normal limit (:func:`normal_limit_means`), which the draws of
    users approach as users grow: at 100,000 users its percentiles differ from theirs by less
    than their own resampling noise (see the function), and drawing 1,000 x 1M users took 20 s."""
    return resampled_means_of(lambda start, stop: values[start:stop], *values.shape, resamples, seed)


def resampled_means_of(rows: Callable[[int, int], np.ndarray], n: int, columns: int, resamples: int,
                       seed: int) -> np.ndarray:
    """:func:`resampled_means` of the values ``rows(start, stop)`` gives (see :func:`bootstrap_means_of`)."""
    if n > NORMAL_LIMIT_USERS:
        return normal_limit_means_of(rows, n, columns, resamples, seed)
    return drawn_means(rows(0, n), resamples, seed)


def drawn_means(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The mean of each column in every resample of users drawn with replacement."""
    present = ~np.isnan(values)
    filled = np.where(present, values, 0.0)
    means = np.empty((resamples, values.shape[1]))
    for start, counts in _resample_counts(len(values), resamples, seed):
        with np.errstate(invalid="ignore", divide="ignore"):
            means[start:start + len(counts)] = (counts @ filled) / (counts @ present)
    return means


def normal_limit_means(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Resampled means of each column (resamples x columns) drawn from the bootstrap's normal limit.

    With n users, column j's mean over its users with a value (share s_j = n_j / n) moves in a
    resample by (1 / (n·s_j))·Σ_i (c_i − 1)·(x_ij − m_j) over those users (c_i: how often user i is
    drawn), to first order. The multinomial counts have covariance I − J/n and the deviations sum to
    0, so the means are jointly normal around m with covariance ΨᵀΨ / n², where
    Ψ_ij = (x_ij − m_j) / s_j for a user with a value and 0 otherwise: for a column without gaps,
    the bootstrap's own variance of a mean, Σ(x − m)² / n². Paired columns keep their covariance,
    so differences and smooth functions of the draws behave as the users' draws do.

    Its percentiles differ from the percentile bootstrap's by the skewness term of the
    Cornish–Fisher expansion, (γ/√n)·(z² − 1)/6 standard errors (γ: the values' skewness): for
    γ = 3 at 100,000 users, 0.005 standard errors at 95%, against 0.08 from drawing 1,000
    resamples (the 2.5% quantile's own noise), so the intervals agree within the bootstrap's
    own repeatability (tested). A column without any value gives NaN."""
    return normal_limit_means_of(lambda start, stop: values[start:stop], *values.shape, resamples, seed)


def normal_limit_means_of(rows: Callable[[int, int], np.ndarray], n: int, columns: int, resamples: int,
                          seed: int) -> np.ndarray:
    """:func:`normal_limit_means` of the n x ``columns`` values whose rows ``start .. stop``
    ``rows(start, stop)`` gives, a block of :data:`NORMAL_LIMIT_BLOCK` rows at a time (the
    values are never whole in memory: :func:`_paired_bounds` makes each block of its columns as
    it is read)."""
    present_count = np.zeros(columns)
    total = np.zeros(columns)
    for start in range(0, n, NORMAL_LIMIT_BLOCK):  # (blocks of rows: memory stays small)
        block = rows(start, min(start + NORMAL_LIMIT_BLOCK, n))
        present = ~np.isnan(block)
        present_count += present.sum(axis=0)
        total += np.where(present, block, 0.0).sum(axis=0)
    has_values = present_count > 0
    means = np.divide(total, present_count, out=np.zeros(columns), where=has_values)
    share = np.maximum(present_count, 1) / n
    covariance = np.zeros((columns, columns))
    for start in range(0, n, NORMAL_LIMIT_BLOCK):
        block = rows(start, min(start + NORMAL_LIMIT_BLOCK, n))
        influence = np.where(np.isnan(block), 0.0, block - means) / share
        covariance += influence.T @ influence
    covariance /= float(n) ** 2
    draws = np.random.default_rng(seed).multivariate_normal(means, covariance, size=resamples, method="eigh")
    draws[:, ~has_values] = np.nan
    return draws


def percentile_interval(samples: np.ndarray, level: float) -> np.ndarray:
    """Percentile interval of each column of ``samples`` (resamples x columns) -> columns x 2."""
    tail = (1 - level) / 2 * 100
    with warnings.catch_warnings():  # (a column without any value has no interval: NaN, said elsewhere)
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanpercentile(samples, [tail, 100 - tail], axis=0).T


def _resample_counts(n: int, resamples: int, seed: int):
    """Batches of (first resample, counts matrix): how often each of n users is drawn."""
    if n * resamples <= CACHED_RESAMPLE_CELLS:
        yield 0, _cached_counts(n, resamples, seed)
        return
    rng = np.random.default_rng(seed)
    batch = max(1, RESAMPLE_BATCH_CELLS // n)
    for start in range(0, resamples, batch):
        yield start, _draw_counts(rng, n, min(batch, resamples - start))


def _draw_counts(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    picks = rng.integers(0, n, size=(size, n))
    offsets = (np.arange(size) * n)[:, None]
    return np.bincount((picks + offsets).ravel(), minlength=size * n).reshape(size, n).astype(np.float64)


@lru_cache(maxsize=4)
def _cached_counts(n: int, resamples: int, seed: int) -> np.ndarray:
    """The same draws as the batched path, kept for repeated use (a K slider, several metrics)."""
    rng = np.random.default_rng(seed)
    batch = max(1, RESAMPLE_BATCH_CELLS // n)
    counts = np.vstack([_draw_counts(rng, n, min(batch, resamples - s)) for s in range(0, resamples, batch)])
    counts.setflags(write=False)
    return counts


def aggregate_intervals(result: Evaluation, resamples: int = 200, seed: int = 0,
                        level: float = 0.95) -> dict[str, tuple[float, float]]:
    """The bootstrap interval of every aggregate of ``result`` that is a mean of per-user values
    (over its own users: the evaluated users for accuracy metrics, users with a value for the
    others), drawing the same users for every metric.
    """
    per_user = result.per_user
    columns = registry.per_user_columns()
    names = [m for m, c in columns.items() if m in result.metrics and c in per_user.columns]
    if not names:
        return {}
    table = pd.DataFrame({m: per_user[columns[m]] for m in names})
    accuracy = [m for m in names if registry.METRICS[m].family == "accuracy"]
    table.loc[~per_user["evaluated"].to_numpy(), accuracy] = np.nan
    bounds = bootstrap_means(table.to_numpy(dtype=np.float64), resamples, seed, level)
    return {m: (float(lo), float(hi)) for m, (lo, hi) in zip(names, bounds, strict=True)}


def win_tie_loss(b: np.ndarray, a: np.ndarray) -> tuple[int, int, int]:
    """Users for whom ``b`` is higher, equal, lower than ``a``.

    >>> win_tie_loss(np.array([1.0, 0.5, 0.0]), np.array([0.5, 0.5, 0.5]))
    (1, 1, 1)
    """
    return int((b > a).sum()), int((b == a).sum()), int((b < a).sum())


@dataclass(repr=False)
class Comparison:
    """``rows``: one per (model, metric) against the baseline, with the columns of the CLI's
    JSON; ``intervals``: the bootstrap interval of every model's aggregate (model, metric,
    value, ci_low, ci_high, users)."""

    k: int
    baseline: str
    test: str
    correction: str
    level: float
    rows: pd.DataFrame
    intervals: pd.DataFrame

    @property
    def significant(self) -> pd.Series:
        """Per row: the adjusted p-value is below 1 - level (0.05 at the default 95%)."""
        return self.rows["p_adjusted"] < 1 - self.level

    def to_frame(self) -> pd.DataFrame:
        """One row per (model, metric) against the baseline: the CLI's comparison columns."""
        return self.rows.set_index(["model", "metric"]).copy()

    def __repr__(self) -> str:
        return (f"Comparison(baseline={self.baseline!r}, k={self.k}, test={self.test!r}, "
                f"correction={self.correction!r}, rows={len(self.rows)})")

    def _repr_html_(self) -> str:
        """HTML for a notebook: each comparison in plain words, then the table."""
        import html

        words = "".join(f"<li>{html.escape(self.sentence(row.model, row.metric))}</li>"
                        for row in self.rows.itertuples())
        table = self.to_frame()[["value", "baseline_value", "delta", "ci_low", "ci_high", "p_adjusted", "wins",
                                 "ties", "losses"]].to_html(float_format=lambda v: f"{v:.4g}", escape=True)
        return (f"<div><p>Against <b>{html.escape(self.baseline)}</b> at K = {self.k} ({html.escape(self.test)} "
                f"test, {html.escape(self.correction)} correction)</p><ul>{words}</ul>{table}</div>")

    def to_dict(self) -> dict:
        return {"k": self.k, "baseline": self.baseline, "test": self.test, "correction": self.correction,
                "rows": _records(self.rows), "intervals": _records(self.intervals)}

    def chart(self, metric: str = "ndcg"):
        """Every model's ``metric`` with its bootstrap interval, as an Altair chart (the Compare
        page's and the report's; ``pip install 'rankscope[report]'``)."""
        from metrics_core.result import shared_charts

        part = self.intervals[self.intervals["metric"] == metric]
        if part.empty:
            raise input_error("chart", f"{metric} was not compared.",
                              f"choose one of: {', '.join(self.intervals['metric'].unique())}.")
        label = registry.label(metric, self.k)
        return shared_charts().intervals(part, label, list(part["model"]), self.level)

    def sentence(self, model: str, metric: str) -> str:
        """The comparison in plain words."""
        row = self.rows[(self.rows.model == model) & (self.rows.metric == metric)].iloc[0]
        better = "beats" if row.delta > 0 else "trails" if row.delta < 0 else "ties with"
        text = (f"{model} {better} {self.baseline} on {metric}@{self.k} by {row.delta:+.4f} "
                f"({self.level:.0%} CI {row.ci_low:+.4f} to {row.ci_high:+.4f})")
        if row.test == "bootstrap":
            clear = row.ci_low > 0 or row.ci_high < 0
            return text + f"; the interval {'excludes' if clear else 'includes'} 0."
        total = row.wins + row.ties + row.losses
        significant = "is significant" if row.p_adjusted < 1 - self.level else "is not significant"
        after = {"holm": " after Holm correction", "bonferroni": " after Bonferroni correction"}.get(
            self.correction, "")
        return (text + f"; it is better for {row.wins / max(1, total):.0%} of users and worse for "
                f"{row.losses / max(1, total):.0%}; the difference {significant}{after} (p = {row.p_adjusted:.3g}).")


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
            for row in frame.to_dict(orient="records")]


def paired_values(results: dict[str, Evaluation], metric: str, models: list[str]) -> pd.DataFrame:
    """Per-user values of ``metric`` for ``models``, users in every model only (paired)."""
    column, accuracy = _per_user_column(results, metric, models)
    if _one_dataset(results, models):
        values, kept = _values_kept(results, column, accuracy, models)
        index = results[models[0]].per_user.index
        if kept.all():  # (every user: the columns as they are, read only, no copy of a million values)
            return pd.DataFrame(values, index=index, copy=False)
        return pd.DataFrame({model: v[kept] for model, v in values.items()}, index=index[kept],
                            copy=False)  # (fresh: not stacked again)
    return _aligned(results, column, accuracy, models)


def paired_arrays(results: dict[str, Evaluation], metric: str, models: list[str]) -> dict[str, np.ndarray]:
    """:func:`paired_values` as one array per model, without the users' ids: what a mean, an
    interval or a verdict needs (building the index of a million kept users took longer than
    their arithmetic)."""
    column, accuracy = _per_user_column(results, metric, models)
    if _one_dataset(results, models):
        values, kept = _values_kept(results, column, accuracy, models)
        return values if kept.all() else {model: v[kept] for model, v in values.items()}
    aligned = _aligned(results, column, accuracy, models)
    return {model: aligned[model].to_numpy(dtype=np.float64) for model in models}


def _one_dataset(results: dict[str, Evaluation], models: list[str]) -> bool:
    """Whether every model's per-user table holds the same users in the same order (models of one
    dataset: their values pair up without aligning)."""
    index = results[models[0]].per_user.index
    return all(results[model].per_user.index.equals(index) for model in models)


def columns_read(metrics: list[str]) -> set[str]:
    """The per-user columns :func:`compare` reads to compare ``metrics``: each one's own
    (:func:`_per_user_column`), those a transformed mean is ``of`` and those a function of several
    means ``combines`` (:func:`_smooth_resamples`), ARP's for normalised ARP, and ``evaluated``."""
    columns = registry.per_user_columns()
    names = set()
    for name in (registry.current_name(m) for m in metrics):
        summary = registry.METRICS.get(name)
        names |= {name, *([] if summary is None else [summary.of, *summary.combines])}
        names |= {"arp"} if name == "arp_normalised" else set()
    return {columns[name] for name in names if name in columns} | {"evaluated"}


def _per_user_column(results: dict[str, Evaluation], metric: str, models: list[str]) -> tuple[str, bool]:
    """The per-user column of ``metric`` and whether it is an accuracy metric (averaged over the
    evaluated users); raises when the metric has none or a model lacks it."""
    column = registry.per_user_columns().get(metric)
    if column is None:
        raise input_error("compare", f"metric {metric!r} has no per-user values to compare.",
                          f"choose among: {', '.join(registry.per_user_columns())}.")
    for model in models:
        if column not in results[model].per_user.columns:
            raise input_error("compare", f"model {model!r} has no per-user {metric} "
                              f"({results[model].skipped.get(metric, 'not computed')}).",
                              "give the inputs this metric needs, or compare other metrics.")
    return column, registry.METRICS[metric].family == "accuracy"


def _values_kept(results: dict[str, Evaluation], column: str, accuracy: bool, models: list[str]
                 ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Each model's ``column`` over the same users, and which users have a value in every model
    (and are evaluated in every model, for an accuracy metric)."""
    values = {model: results[model].per_user[column].to_numpy(dtype=np.float64) for model in models}
    kept = np.logical_and.reduce([~np.isnan(v) for v in values.values()] + (
        [results[model].per_user["evaluated"].to_numpy(dtype=bool) for model in models] if accuracy else []))
    return values, kept


def _aligned(results: dict[str, Evaluation], column: str, accuracy: bool, models: list[str]) -> pd.DataFrame:
    """The models' ``column`` aligned on their users (results of different datasets)."""
    frames = {}
    for model in models:
        per_user = results[model].per_user
        frames[model] = per_user[column][per_user["evaluated"]] if accuracy else per_user[column]
    return pd.DataFrame(frames).dropna()


NO_INTERVAL = ("counts of distinct items and users shrink when users are drawn with replacement, so a bootstrap "
               "interval of a catalog metric does not even cover its own value; rankscope gives none rather "
               "than a wrong one")
COLUMNS = ["model", "metric", "value", "baseline_value", "delta", "ci_low", "ci_high", "p_value", "p_adjusted", "test",
           "wins", "ties", "losses", "effect_size", "users"]


def compare(results: dict[str, Evaluation], baseline: str | None = None, metrics: list[str] | None = None,
            test: str = "wilcoxon", correction: str = "holm", resamples: int = 1000, seed: int = 0,
            level: float = 0.95) -> Comparison:
    """Compare every model with ``baseline`` (default: the first) on ``metrics``.

    Per-user metrics get paired tests, intervals and win/tie/loss. ``fbeta_of_means`` and
    ``arp_normalised`` (smooth functions of means) get intervals from the resampled means but
    no paired test (``p_value`` empty, ``test`` = ``bootstrap``). Catalog metrics
    (coverage, Gini, entropy, personalization, distinct items) are refused with the reason:
    resampling users with replacement biases them (see ``NO_INTERVAL``).
    """
    models = list(results)
    baseline = baseline or models[0]
    if baseline not in results:
        raise input_error("compare", f"no model named {baseline!r} to use as the baseline.",
                          f"choose one of: {', '.join(models)}.")
    if test not in TESTS:
        raise input_error("compare", f"test {test!r} is unknown.", f"choose one of: {', '.join(TESTS)}.")
    if correction not in CORRECTIONS:
        raise input_error("compare", f"correction {correction!r} is unknown.",
                          f"choose one of: {', '.join(CORRECTIONS)}.")
    metrics = [registry.current_name(m) for m in metrics or DEFAULT_METRICS]
    others = [m for m in models if m != baseline]
    k = next(iter(results.values())).k
    paired = {}
    for metric in metrics:  # (refused in the order given, before any resampling)
        if metric in registry.METRICS and not registry.METRICS[metric].interval:
            raise input_error("compare", f"{metric} cannot be compared by resampling users: {NO_INTERVAL}.",
                              "compare per-user metrics (ndcg, recall, novelty, diversity, ...), fbeta_of_means "
                              "or arp_normalised.")
        if metric not in registry.smooth_of_means():
            paired[metric] = paired_values(results, metric, models)
    bounding = meanwhile(lambda: _paired_bounds(paired, models, baseline, resamples, seed, level))
    pairs = [(metric, model) for metric in paired for model in others]  # (tests on threads: a sort of 1M users each)
    tested_pairs = dict(zip(pairs, map_threads(lambda pair: _tested(paired[pair[0]], pair[1], baseline, test), pairs),
                            strict=True))
    bounds = bounding.result()
    rows, intervals = [], []
    for metric in metrics:
        if metric in registry.smooth_of_means():
            samples, users = _smooth_resamples(results, metric, models, resamples, seed)
            _add_bootstrap_only(rows, intervals, results, metric, models, baseline, samples, users, level)
            continue
        values_of = paired[metric]
        base = values_of[baseline].to_numpy()
        for i, model in enumerate(models):
            intervals.append({"model": model, "metric": metric, "value": float(values_of[model].mean()),
                              "ci_low": bounds[metric][i, 0], "ci_high": bounds[metric][i, 1],
                              "users": len(values_of)})
        for j, model in enumerate(others):
            values = values_of[model].to_numpy()
            p, effect, (wins, ties, losses) = tested_pairs[metric, model]
            at = len(models) + j
            rows.append({"model": model, "metric": metric, "value": float(values.mean()),
                         "baseline_value": float(base.mean()), "delta": float(values.mean() - base.mean()),
                         "ci_low": bounds[metric][at, 0], "ci_high": bounds[metric][at, 1],
                         "p_value": p, "p_adjusted": np.nan, "test": test, "wins": wins, "ties": ties,
                         "losses": losses, "effect_size": effect, "users": len(values_of)})
    frame = pd.DataFrame(rows, columns=COLUMNS)
    tested = frame["p_value"].notna().to_numpy()
    if tested.any():
        frame.loc[tested, "p_adjusted"] = adjust(frame.loc[tested, "p_value"].to_numpy(dtype=float), correction)
    return Comparison(k, baseline, test, correction, level, frame, pd.DataFrame(intervals))


def _tested(values_of: pd.DataFrame, model: str, baseline: str, test: str) -> tuple[float, float, tuple]:
    """``model`` against ``baseline`` over their paired users: :func:`paired_test`'s p-value and
    effect, and :func:`win_tie_loss`."""
    values, base = values_of[model].to_numpy(), values_of[baseline].to_numpy()
    return (*paired_test(values, base, test), win_tie_loss(values, base))


def _paired_bounds(paired: dict[str, pd.DataFrame], models: list[str], baseline: str, resamples: int, seed: int,
                   level: float) -> dict[str, np.ndarray]:
    """Each metric's bootstrap bounds of every model's mean and of each other model's mean
    difference from ``baseline`` (rows: the models, then the differences).

    In every resample the users drawn are the same for all models, so a difference's resampled
    mean is the difference of the two models' resampled means (paired values have no gaps): only
    the models' means are resampled. Metrics paired over the same users share one set of
    resampled users (the draws of one seed over n users are the same whichever metric reads them,
    so the bounds are those of one metric at a time): at 1M users x 1,000 resamples, drawing the
    users is most of the work."""
    base = models.index(baseline)
    others = [models.index(m) for m in models if m != baseline]
    bounds: dict[str, np.ndarray] = {}
    for metric in paired:
        if metric in bounds:
            continue
        group = [m for m in paired if m not in bounds and paired[m].index.equals(paired[metric].index)]
        columns = [paired[member][model].to_numpy() for member in group for model in models]

        def rows(start: int, stop: int, columns: list = columns) -> np.ndarray:
            """Rows ``start .. stop`` of the columns (Fortran order, as the whole was made before)."""
            block = np.empty((stop - start, len(columns)), order="F")
            for j, values in enumerate(columns):
                block[:, j] = values[start:stop]
            return block

        means = resampled_means_of(rows, len(paired[metric]), len(columns), resamples, seed)
        for i, member in enumerate(group):
            mine = means[:, i * len(models):(i + 1) * len(models)]
            bounds[member] = percentile_interval(np.column_stack([mine, mine[:, others] - mine[:, [base]]]), level)
    return bounds


def _add_bootstrap_only(rows, intervals, results, metric, models, baseline, samples, users, level):
    """Intervals of a metric that is not a mean of per-user values, and of its differences."""
    value = {m: float(results[m].metrics[metric]) for m in models}
    bounds = percentile_interval(np.column_stack([samples[m] for m in models]), level)
    for i, model in enumerate(models):
        intervals.append({"model": model, "metric": metric, "value": value[model], "ci_low": bounds[i, 0],
                          "ci_high": bounds[i, 1], "users": users})
    for model in (m for m in models if m != baseline):
        low, high = percentile_interval((samples[model] - samples[baseline])[:, None], level)[0]
        rows.append({"model": model, "metric": metric, "value": value[model], "baseline_value": value[baseline],
                     "delta": value[model] - value[baseline], "ci_low": low, "ci_high": high, "p_value": np.nan,
                     "p_adjusted": np.nan, "test": "bootstrap", "wins": None, "ties": None, "losses": None,
                     "effect_size": np.nan, "users": users})


def _smooth_resamples(results, metric: str, models: list[str], resamples: int, seed: int):
    """Resampled values (model -> array) of an aggregate that is a smooth function of means: a
    transformed mean (``of``), ARP divided by the training users, or a function of several
    metrics' means (``combine``: F-beta of the mean precision and recall)."""
    n = len(models)
    summary = registry.METRICS[metric]
    if summary.of is not None:  # a transformed mean of another metric's per-user values
        aggregate = registry.AGGREGATES[summary.aggregate]
        values = paired_values(results, summary.of, models)
        means = resampled_means(aggregate.forward(values.to_numpy()), resamples, seed)
        return {m: aggregate.back(means[:, i]) for i, m in enumerate(models)}, len(values)
    if metric == "arp_normalised":
        arp = paired_values(results, "arp", models)
        means = resampled_means(arp.to_numpy(), resamples, seed)
        scale = {m: results[m].metrics["arp_normalised"] / results[m].metrics["arp"] for m in models}
        return {m: means[:, i] * scale[m] for i, m in enumerate(models)}, len(arp)
    settings = next(iter(results.values())).settings  # a function of several metrics' means, resampled together
    inputs = [paired_values(results, name, models) for name in summary.combines]
    means = resampled_means(np.column_stack([values.to_numpy() for values in inputs]), resamples, seed)
    return {m: summary.combine([means[:, j * n + i] for j in range(len(inputs))], settings)
            for i, m in enumerate(models)}, len(inputs[0])


def compare_segments(results: dict[str, Evaluation], baseline: str, model: str, metric: str,
                     segments: pd.Series, test: str = "wilcoxon") -> pd.DataFrame:
    """The comparison of ``model`` with ``baseline`` within each segment (``segments``: the
    segment of each user id), in the segments' natural order where they have one (activity: least
    to most active), else by name. Columns: segment, users, baseline_value, value, delta, wins,
    ties, losses, p_value."""
    paired = paired_values(results, metric, [baseline, model])
    codes, names = group_codes(labels_of(segments, paired.index))  # (codes of a few segments: no text per user)
    every_a, every_b = paired[baseline].to_numpy(), paired[model].to_numpy()
    out = []
    for code, segment in names:
        mine = codes == code
        a, b = every_a[mine], every_b[mine]
        wins, ties, losses = win_tie_loss(b, a)
        out.append({"segment": segment, "users": len(a), "baseline_value": float(a.mean()),
                    "value": float(b.mean()), "delta": float(b.mean() - a.mean()), "wins": wins, "ties": ties,
                    "losses": losses, "p_value": paired_test(b, a, test)[0]})
    return pd.DataFrame(out)
