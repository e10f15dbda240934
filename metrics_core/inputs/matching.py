"""Do a model's ids and the ground truth's ids live in the same id space?

When almost none of the recommended users or items appear in the ground truth, every accuracy
metric is (close to) 0 for a reason that has nothing to do with the model: the two files
spell their ids differently. This module measures the share that matches and, when it is
below :data:`MIN_SHARE`, names the likely cause with an example id from each side.

The share is measured on an evenly spaced sample of the listed users and of the list cells of
a tenth of them (integer codes, vectorised); the diagnosis (text transformations on Python sets) runs only
when the share is low, so a healthy dataset pays one small gather.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from metrics_core._numeric.distinct import distinct
from metrics_core.errors import Note
from metrics_core.inputs.encoded import Lists, Truth
from metrics_core.inputs.ids import IdIndex
from metrics_core.inputs.text_ids import TextIds, is_text

MIN_SHARE = 0.01
SAMPLE_USERS = 10_000
SAMPLE_LISTS = 1_000  # (their cells: 100,000 for lists of 100; gathering 10,000 lists took a tenth of a build)


@dataclass(frozen=True)
class Side:
    """One kind of id (users or items) on both sides: codes seen in the recommendations
    (a sample), codes in the ground truth, the shared index, and whether each file held
    numbers or text before the ids were unified."""

    what: str
    recommended: np.ndarray
    in_truth: np.ndarray
    index: IdIndex
    recommended_kind: str
    truth_kind: str

    @property
    def share(self) -> float:
        """Share of the recommended sample that appears in the ground truth."""
        known = np.zeros(len(self.index), dtype=bool)
        known[self.in_truth] = True
        return float(known[self.recommended].mean()) if len(self.recommended) else 1.0


def id_kind(values: np.ndarray | TextIds) -> str:
    """``"numbers"`` or ``"text"``: how a table's ids were read, before unification."""
    return "text" if is_text(values) or values.dtype.kind not in "iu" else "numbers"


def mismatch_note(model: str, lists: Lists, truth: Truth, users: IdIndex, items: IdIndex,
                  kinds: dict[str, str]) -> Note | None:
    """A warning when fewer than 1% of the model's recommended users or items appear in the
    ground truth, naming the likely cause and showing an example id of each side.

    ``kinds`` maps ``"recommended user"``, ``"recommended item"``, ``"truth user"`` and
    ``"truth item"`` to :func:`id_kind` of the raw columns.
    """
    listed = np.flatnonzero(lists.listed)
    if not len(listed) or not len(truth.item):
        return None
    sample = _spread(listed, SAMPLE_USERS)
    cells = np.asarray(lists.items[_spread(sample, SAMPLE_LISTS)]).ravel()
    user_side = Side("users", sample, np.flatnonzero(truth.has_truth_rows), users,
                     kinds["recommended user"], kinds["truth user"])
    item_side = Side("items", cells[cells >= 0], truth.relevant_items, items,
                     kinds["recommended item"], kinds["truth item"])
    low = [side for side in (user_side, item_side) if side.share < MIN_SHARE]
    if not low:
        return None
    other = {"users": item_side, "items": user_side}
    parts = [_explain(model, side, other[side.what]) for side in low]
    return Note("id_mismatch", " ".join(parts), len(low))


def _explain(model: str, side: Side, other: Side) -> str:
    recommended = _distinct_ids(side.index, side.recommended, SAMPLE_USERS)
    truth = _distinct_ids(side.index, side.in_truth)
    cause = _likely_cause(side, other, recommended, truth)
    return (f"Only {side.share:.1%} of the {side.what} recommended by '{model}' appear in the ground truth, so its "
            f"accuracy metrics are close to 0 for a reason unrelated to the model. Likely cause: {cause}. "
            f"Example {side.what[:-1]} ids: recommendations {str(recommended[0])!r}, ground truth {str(truth[0])!r}.")


def _likely_cause(side: Side, other: Side, recommended: np.ndarray, truth: np.ndarray) -> str:
    """The first id transformation under which the two sides match, in words, and whether one
    file holds numbers and the other text.

    Integer ids are compared as arrays: the text of an integer has no padding, case or spaces,
    so the one transformation that can change it drops its minus sign (the text path took
    seconds on a million distinct ids)."""
    if _integers(recommended) and _integers(truth):
        cause = SIGN if np.isin(np.abs(recommended), np.abs(truth)).mean() >= MIN_SHARE else None
    else:
        texts, truth_texts = _texts(recommended), _texts(truth)
        cause = next((why for why, transform in TRANSFORMS if _share_after(transform, texts, truth_texts) >= MIN_SHARE),
                     None)
    if cause is None:
        other_truth = _distinct_ids(other.index, other.in_truth)
        if _integers(recommended) and _integers(other_truth):
            swapped = np.isin(recommended, other_truth).sum()
        else:
            known = set(_texts(other_truth))
            swapped = sum(text in known for text in _texts(recommended))
        if swapped >= MIN_SHARE * len(recommended):
            cause = (f"swapped columns: the recommended {side.what} look like the ground truth's {other.what}; check "
                     "which column holds users and which items")
    if side.recommended_kind != side.truth_kind:
        types = (f"the recommendations' {side.what[:-1]} ids are {side.recommended_kind} and the ground truth's are "
                 f"{side.truth_kind} (a number matches text only when written the same way: 7 matches '7', not "
                 "'007' or 'id7')")
        cause = types if cause is None else f"{cause}; also, {types}"
    return cause or "the two files use different id schemes or come from different datasets (no id-format fix found)"


SIGN = "the ids differ in their sign: one file's are negative where the other's are not ('-7' vs '7')"
TRANSFORMS = (
    ("leading zeros: one file pads its ids ('007') and the other does not ('7')", lambda text: text.lstrip("0") or "0"),
    ("letter case differs ('ABC' vs 'abc')", str.lower),
    ("spaces inside the ids differ", lambda text: re.sub(r"\s+", "", text)),
    ("the ids carry different prefixes or suffixes around the same number ('item_7' vs '7')",
     lambda text: re.sub(r"\D", "", text) or text),
)


def _share_after(transform, recommended: list[str], truth: list[str]) -> float:
    changed = {transform(text) for text in truth}
    return sum(transform(text) in changed for text in recommended) / max(len(recommended), 1)


def _spread(values: np.ndarray, count: int) -> np.ndarray:
    """At most ``count`` of ``values``, evenly spaced, the first and the last among them (each
    at most once: the step between the places taken is at least 1).

    >>> _spread(np.arange(10), 4).tolist(), _spread(np.arange(3), 5).tolist()
    ([0, 3, 6, 9], [0, 1, 2])
    """
    if len(values) <= count:
        return values
    return values[np.linspace(0, len(values) - 1, count).astype(np.int64)]


def _distinct_ids(index: IdIndex, codes: np.ndarray, limit: int | None = None) -> np.ndarray:
    """The distinct ids of ``codes`` (an evenly spaced ``limit`` of them when given)."""
    found = distinct(codes)  # (the ground truth's codes: up to millions, where np.unique's hashing is slow)
    return np.asarray(index.ids[found if limit is None else _spread(found, limit)])


def _integers(ids: np.ndarray) -> bool:
    return ids.dtype.kind in "iu"


def _texts(ids: np.ndarray) -> list[str]:
    return [str(value) for value in ids]
