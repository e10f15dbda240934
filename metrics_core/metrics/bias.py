"""Item bias and user bias: how an attribute is distributed in what the model serves
compared with a reference, with a divergence figure from scipy.

Categorical attributes are compared as shares with the Jensen–Shannon distance (base 2,
within [0, 1]), a multi-label one ("Drama|War") by its labels (:func:`labels_of`); numeric ones
as histograms on shared bins with the two-sample Kolmogorov–Smirnov statistic and p-value.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core.errors import input_error

NUMERIC_BINS = 20


@dataclass
class BiasReport:
    """``distribution`` has columns ``value`` (category or bin label), ``bin_start``/``bin_end``
    (numeric only), ``group`` (the two sides) and ``share``. ``divergence`` names the figure
    (``jensen_shannon`` or ``ks``), ``statistic`` its value, ``p_value`` KS only."""

    attribute: str
    kind: str
    distribution: pd.DataFrame
    divergence: str
    statistic: float
    p_value: float | None
    counts: dict[str, int]


MULTI_LABEL = "|"  # a text attribute holding several labels per item, as MovieLens' genres: "Drama|War"


def labels_of(values: pd.Series) -> pd.Series:
    """The category of each value, as text; a multi-label attribute (some value holds
    :data:`MULTI_LABEL`) gives one entry per label of each value, so that an item of two genres
    counts once for each (shares are of label occurrences).

    >>> labels_of(pd.Series(["Drama|War", "Comedy", "War"])).tolist()
    ['Drama', 'War', 'Comedy', 'War']
    """
    text = values.astype(str)
    if not text.str.contains(MULTI_LABEL, regex=False).any():
        return text
    labels = text.str.split(MULTI_LABEL, regex=False).explode().str.strip()
    return labels[labels != ""]


def compare_distributions(attribute: str, served: pd.Series, reference: pd.Series,
                          labels: tuple[str, str]) -> BiasReport:
    """Compare the attribute values of what is served with the reference values."""
    served, reference = served.dropna(), reference.dropna()
    if served.empty or reference.empty:
        raise input_error("bias", f"attribute '{attribute}' has no values on one side "
                          f"({labels[0]}: {len(served)}, {labels[1]}: {len(reference)}).",
                          "choose an attribute that is filled in for the recommended items and the catalog.")
    counts = {labels[0]: len(served), labels[1]: len(reference)}
    if pd.api.types.is_numeric_dtype(served) and pd.api.types.is_numeric_dtype(reference) \
            and not pd.api.types.is_bool_dtype(served):
        edges = np.histogram_bin_edges(np.concatenate([served.to_numpy(float), reference.to_numpy(float)]),
                                       bins=NUMERIC_BINS)
        frames = []
        for label, values in zip(labels, (served, reference), strict=True):
            hist, _ = np.histogram(values.to_numpy(float), bins=edges)
            frames.append(pd.DataFrame({"value": [f"{a:.4g} – {b:.4g}" for a, b in itertools.pairwise(edges)],
                                        "bin_start": edges[:-1], "bin_end": edges[1:], "group": label,
                                        "share": hist / hist.sum()}))
        from scipy.stats import ks_2samp  # (a third of a second to import: only where a numeric attribute is compared)

        test = ks_2samp(served.to_numpy(float), reference.to_numpy(float))
        return BiasReport(attribute, "numeric", pd.concat(frames, ignore_index=True), "ks",
                          float(test.statistic), float(test.pvalue), counts)
    from scipy.spatial.distance import jensenshannon

    served_shares = labels_of(served).value_counts(normalize=True)
    reference_shares = labels_of(reference).value_counts(normalize=True)
    categories = sorted(set(served_shares.index) | set(reference_shares.index))
    a = served_shares.reindex(categories, fill_value=0.0).to_numpy()
    b = reference_shares.reindex(categories, fill_value=0.0).to_numpy()
    distribution = pd.concat([
        pd.DataFrame({"value": categories, "group": labels[0], "share": a}),
        pd.DataFrame({"value": categories, "group": labels[1], "share": b}),
    ], ignore_index=True)
    return BiasReport(attribute, "categorical", distribution, "jensen_shannon",
                      float(jensenshannon(a, b, base=2)), None, counts)


def item_bias(attribute: str, values_by_code: pd.Series, recommended: np.ndarray, catalog: np.ndarray) -> BiasReport:
    """The attribute over every top-K recommendation (an item served twice counts twice)
    against the catalog (each training item once). ``values_by_code`` is the attribute
    indexed by item code; ``recommended`` and ``catalog`` are item codes."""
    return compare_distributions(attribute, values_by_code.reindex(recommended), values_by_code.reindex(catalog),
                                 ("recommendations", "catalog"))


def user_bias(attribute: str, values_by_code: pd.Series, evaluated: np.ndarray, training: np.ndarray) -> BiasReport:
    """The attribute among evaluated users against training users (user codes)."""
    return compare_distributions(attribute, values_by_code.reindex(evaluated), values_by_code.reindex(training),
                                 ("evaluated users", "training users"))
