"""Per-user values summarised on the server, so that no chart sends one row per user to the
browser (issue #43): a histogram (one bar per value for a metric that takes few values, such as
precision@10's 11, else shared equal-width bins), a box plot's five numbers per group, and a
stated random sample for a scatter. Whatever the number of users, a chart gets at most
:data:`MAX_CHART_ROWS` rows.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from metrics_core._numeric.parallel import map_threads

MAX_CHART_ROWS = 5_000  # Altair's default limit of rows in a chart's data
DISCRETE_MAX = 30  # at most this many distinct values: one bar per value
BINS = 20
SAMPLE = 5_000
NARROWEST_STEP = 1e-12  # the narrowest bin nice_edges rounds to (its edges keep 14 decimals)


def histogram(values: pd.DataFrame, bins: int = BINS) -> pd.DataFrame:
    """``values``: columns model, value. One row per (model, bar): ``model``, ``from``, ``to``
    (a bar's value range; from = to for one value), ``bin`` (its label), ``users`` (how many of
    the model's users fall in it) and ``share`` (of the model's users with a finite value).

    When all the models' finite values together take at most :data:`DISCRETE_MAX` distinct values,
    each value gets its own bar (labelled with the value); otherwise about ``bins`` equal-width bins
    with round edges (:func:`nice_edges`) covering every model's values. NaN and infinite values
    are left out. Bars are in value order; every model has every bar (0 users where it has none).
    The models are those with a row, in the order of :func:`model_codes`."""
    models, codes = model_codes(values["model"])
    numbers = values["value"].to_numpy(dtype=np.float64)
    finite = np.isfinite(numbers)
    if not finite.all():  # (else no copies: the pages' values are mostly finite)
        codes, numbers = codes[finite], numbers[finite]
    distinct = few_distinct(numbers)
    if distinct is not None:
        edges, labels = None, [_number(v) for v in distinct]
        starts = ends = distinct
    else:
        edges, decimals = nice_edges(float(numbers.min()), float(numbers.max()), bins)
        starts, ends = edges[:-1], edges[1:]
        labels = [f"{a:,.{decimals}f}–{b:,.{decimals}f}" for a, b in zip(starts, ends, strict=True)]
        bins = len(starts)
    slot = np.searchsorted(distinct, numbers) if edges is None else bin_of(numbers, edges)
    slot += codes * len(starts)  # (each (model, bar) pair's own number, in the bars' fresh array)
    counts = np.bincount(slot, minlength=len(models) * len(starts)).reshape(len(models), len(starts))
    totals = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, totals, out=np.zeros(counts.shape), where=totals > 0)
    return pd.DataFrame({"model": np.repeat(models, len(starts)), "from": np.tile(starts, len(models)),
                         "to": np.tile(ends, len(models)), "bin": np.tile(labels, len(models)),
                         "users": counts.ravel(), "share": shares.ravel()})


def model_codes(column: pd.Series) -> tuple[list[str], np.ndarray]:
    """The models a ``model`` column names and each row's position among them (int64). A column of
    :func:`model_column` codes keeps its categories' order (the page's order of the models), those
    without a row left out, and is read as the codes it holds (at 4M rows, finding the distinct
    names took 20 ms and coding them again as much); another column: the order of appearance.

    >>> model_codes(pd.Series(["b", "a", "b"]))[0], model_codes(pd.Series(model_column("b", ["a", "b"], 2)))
    (['b', 'a'], (['b'], array([0, 0])))
    """
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        present = np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(column.cat.categories)))
        if len(present) == len(column.cat.categories):  # (every model has rows: the codes are the positions)
            return [str(name) for name in column.cat.categories], codes.astype(np.int64)
        position = np.full(len(column.cat.categories), -1, dtype=np.int64)
        position[present] = np.arange(len(present))
        return [str(column.cat.categories[code]) for code in present], position[codes]
    models = list(column.drop_duplicates())  # (a dict of 4M names took 3.6 s)
    return models, pd.Categorical(column, categories=models).codes.astype(np.int64)


def few_distinct(numbers: np.ndarray) -> np.ndarray | None:
    """The distinct values of ``numbers``, ascending, when there are at most :data:`DISCRETE_MAX`,
    else None: a spread sample of 100,000 answers most continuous metrics, and hashing, not
    sorting, counts the rest (at 4M values a sort took 0.5 s).

    >>> few_distinct(np.array([0.5, 0.1, 0.5])).tolist(), few_distinct(np.arange(100.0))
    ([0.1, 0.5], None)
    """
    probe = numbers[::max(1, len(numbers) // 100_000)]
    if len(pd.unique(probe)) > DISCRETE_MAX:
        return None
    distinct = pd.unique(numbers)
    return np.sort(distinct) if len(distinct) <= DISCRETE_MAX else None


def nice_edges(low: float, high: float, bins: int) -> tuple[np.ndarray, int]:
    """Equal-width bin edges covering ``low`` to ``high`` at a round step (1, 2, 2.5 or 5 times a
    power of ten, the one nearest the range over ``bins``: about that many bins), starting and ending
    on a multiple of it, and the decimals that show the step exactly: a bar reads "0.10–0.20", not
    "2.63e-44–0.115".

    >>> edges, decimals = nice_edges(2.63e-44, 2.27, 20)
    >>> edges[:3].tolist(), float(edges[-1]), len(edges) - 1, decimals
    ([0.0, 0.1, 0.2], 2.3, 23, 1)
    >>> edges, decimals = nice_edges(3.0, 1_407.0, 20)
    >>> edges[[0, 1, -1]].tolist(), decimals
    ([0.0, 50.0, 1450.0], 0)

    A range too narrow for round steps (under :data:`NARROWEST_STEP` a bin: subnormal numbers,
    say, where the step's logarithm is undefined) gets one bin from ``low`` to ``high``.

    >>> nice_edges(0.0, 5e-324, 2)
    (array([0.e+000, 5.e-324]), 12)
    """
    raw = (high - low) / max(bins, 1)
    if not (math.isfinite(raw) and raw >= NARROWEST_STEP):
        return np.array([low, high]), 12
    magnitude = 10.0 ** math.floor(math.log10(raw))
    multiple = min((1, 2, 2.5, 5, 10), key=lambda m: abs(math.log(m * magnitude / raw)))
    step = multiple * magnitude
    start, stop = math.floor(low / step) * step, math.ceil(high / step) * step
    count = max(1, round((stop - start) / step))
    decimals = max(0, -math.floor(math.log10(step)) + (1 if multiple == 2.5 else 0))
    return np.round(start + step * np.arange(count + 1), decimals + 2), decimals


def bin_of(numbers: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The bin of each of ``numbers`` among equal-width ascending ``edges`` (bin i: edges[i] <= x
    < edges[i + 1], the last bin closed; those outside in the nearest), as ``searchsorted(edges, x,
    "right") - 1`` clipped gives it, by arithmetic then one comparison with each neighbour edge
    for the rounding (a binary search per value took 0.2 s at 4M values). Each step writes into one
    of three arrays (every new 32 MB array of a fresh page run faults its pages in: ten of them
    took 0.15-0.2 s at 4M values, as long as the arithmetic).

    >>> bin_of(np.array([0.0, 0.3, 0.29999, 2.3, 5.0]), np.round(np.arange(24) * 0.1, 3)).tolist()
    [0, 3, 2, 22, 22]
    """
    last = len(edges) - 2
    step = (edges[-1] - edges[0]) / (last + 1)
    if not (np.isfinite(step) and step > np.finfo(np.float64).tiny and np.all(np.diff(edges) > 0)):
        return np.clip(np.searchsorted(edges, numbers, side="right") - 1, 0, last)  # (degenerate edges)
    work = np.subtract(numbers, edges[0], dtype=np.float64)
    work /= step
    np.floor(work, out=work)
    np.clip(work, 0, last, out=work)
    guess = work.astype(np.int64)
    flag = np.less(numbers, np.take(edges, guess, out=work, mode="clip"))  # (below its bin: one down; the
    # indices are always edges' own, and "clip" takes them without the copy "raise" makes)
    guess -= flag
    guess += 1
    np.greater_equal(numbers, np.take(edges, guess, out=work, mode="clip"), out=flag)  # (at its next edge: one up)
    guess -= 1
    guess += flag
    return np.clip(guess, 0, last, out=guess)


def _number(value: float) -> str:
    """A bar's value in few characters: whole numbers as such, others to 3 significant digits."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.3g}"


BOX_COLUMNS = ["low", "q1", "median", "q3", "high", "minimum", "maximum", "users"]


def model_column(name: str, models: list[str], rows: int) -> pd.Categorical:
    """A values frame's ``model`` column: ``rows`` rows naming ``name``, coded over ``models`` (the
    frames of several models then concatenate as codes; a column of a million texts took 0.3 s to
    code again in every chart).

    >>> model_column("b", ["a", "b"], 2)
    ['b', 'b']
    Categories (2, str): ['a', 'b']
    """
    return pd.Categorical.from_codes(np.full(rows, models.index(name), dtype=np.int16), categories=models)


def boxes(values: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """A box plot's numbers per group of ``by`` (model, and a segment): quartiles, whiskers at
    the furthest values within 1.5 interquartile ranges of the box (Tukey's, as Vega-Lite's
    boxplot draws them), extremes and the number of users. Groups without a finite value are
    left out. By model alone, the groups are found from :func:`model_codes` without pandas'
    grouping (at 4M users its hashing and gathering took as long as the quartiles)."""
    if by == ["model"]:
        return _boxes_by_model(values)
    frame = values[np.isfinite(values["value"].to_numpy(dtype=np.float64))]
    rows = []
    for key, part in frame.groupby(by, sort=False, observed=True, dropna=False):
        rows.append((*(key if isinstance(key, tuple) else (key,)), *_box(part["value"].to_numpy(dtype=np.float64))))
    return pd.DataFrame(rows, columns=[*by, *BOX_COLUMNS])


def _boxes_by_model(values: pd.DataFrame) -> pd.DataFrame:
    """:func:`boxes` by model: each model's rows (in blocks, as the pages concatenate them, or
    brought together by a stable sort of the codes), their finite values' box, the models' boxes
    on a few threads (numpy's partition lets go of the interpreter: four models of 1M users in
    46 ms against 102 ms one after the other)."""
    models, codes = model_codes(values["model"])
    numbers = values["value"].to_numpy(dtype=np.float64)
    finite = np.isfinite(numbers)
    codes, numbers = (codes, numbers) if finite.all() else (codes[finite], numbers[finite])
    if not np.all(codes[1:] >= codes[:-1]):
        order = np.argsort(codes, kind="stable")
        codes, numbers = codes[order], numbers[order]
    bounds = np.searchsorted(codes, np.arange(len(models) + 1))
    rows = map_threads(lambda part: (part[0], *_box(numbers[part[1]:part[2]])),
                       [part for part in zip(models, bounds[:-1], bounds[1:], strict=True) if part[2] > part[1]])
    return pd.DataFrame(rows, columns=["model", *BOX_COLUMNS])


def _box(numbers: np.ndarray) -> tuple:
    """The box of ``numbers`` (finite, at least one) in :data:`BOX_COLUMNS` order but the groups'."""
    q1, median, q3 = np.quantile(numbers, [0.25, 0.5, 0.75])  # (a partition, not a sort)
    reach = 1.5 * (q3 - q1)
    inside = numbers[(numbers >= q1 - reach) & (numbers <= q3 + reach)]
    return inside.min(), q1, median, q3, inside.max(), numbers.min(), numbers.max(), len(numbers)


def sample(frame: pd.DataFrame, limit: int = SAMPLE, seed: int = 0) -> tuple[pd.DataFrame, int]:
    """At most ``limit`` rows of ``frame`` drawn at random (the same rows for the same frame and
    seed), and how many rows there were."""
    if len(frame) <= limit:
        return frame, len(frame)
    return frame.sample(n=limit, random_state=seed), len(frame)
