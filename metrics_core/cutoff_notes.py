"""The notes of an evaluation that depend on K: ties at the cut-off, recommendations already in
training within the top K, lists shorter than half of K. Their words are made here, for the
evaluation at K and for a K read from the curves (:func:`notes_at`), which keeps their counts at
every k (:func:`counts_at_every_k`) so that another K says the same without the tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core.errors import Note

AUDIT_NOTES = ("ties_at_cutoff", "truth_in_training", "truth_before_training", "seen_in_training", "short_lists",
               "sampled_candidates")  # the audit's findings (--strict fails on them): an evaluation's last notes
AT_K = ("ties_at_cutoff", "seen_in_training", "short_lists")  # those of them that depend on K
ROWS_AT_ONCE = 1 << 16


def ties_note(count: int, k: int, tie_break: str) -> Note | None:
    if not count:
        return None
    rule = "input row order" if tie_break == "input" else "item id (text, descending)"
    return Note("ties_at_cutoff", f"{count} lists have equal scores on both sides of the cut-off K={k}; the tie was "
                f"broken by {rule}.", count)


def seen_note(count: int, k: int) -> Note | None:
    if not count:
        return None
    return Note("seen_in_training", f"{count} recommendations in the top K={k} are items their user already has in "
                "training (usually filtered out before ranking).", count)


def short_note(count: int, k: int) -> Note | None:
    if not count:
        return None
    return Note("short_lists", f"{count} lists have fewer than half of K={k} items: their precision is low whatever "
                "they hold (a list cut short, or too few candidates).", count)


def counts_at_every_k(lists, rows: np.ndarray, seen_per_place: np.ndarray | None) -> pd.DataFrame:
    """Index k = 1 .. the longest list: the three counts the notes at K = k give (ties over the
    evaluated users ``rows``; NaN where the lists kept no score to compare). One pass over the
    scores' columns, a block of users at a time."""
    from metrics_core.metrics.accuracy.cutoffs import user_rows

    width = lists.positions
    ties = np.zeros(width)
    if lists.ordered_by == "score" and lists.scores is not None:
        scored = min(lists.scores.shape[1], width)
        ties[scored - 1:width - 1] = np.nan  # (no score past the kept ones: unknown, the tables tell)
        block = lists.scores[user_rows(rows), :scored]
        for start in range(0, len(rows), ROWS_AT_ONCE):
            part = block[start:start + ROWS_AT_ONCE]
            ties[:scored - 1] += (part[:, :-1] == part[:, 1:]).sum(axis=0)
    lengths = np.minimum(lists.lengths[lists.listed], width).astype(np.intp)
    at_most = np.cumsum(np.bincount(lengths, minlength=width + 1))  # lists of at most m items
    k = np.arange(1, width + 1)
    short = at_most[np.ceil(k / 2).astype(np.intp) - 1]  # (fewer than k/2 items: at most ⌈k/2⌉ − 1)
    seen = np.cumsum(seen_per_place[:width]) if seen_per_place is not None else np.zeros(width)
    return pd.DataFrame({"ties_at_cutoff": ties, "seen_in_training": seen, "short_lists": short},
                        index=pd.Index(k, name="k")).astype(np.float64)


def notes_at(notes: list[Note], counts: pd.DataFrame, k: int, tie_break: str) -> list[Note] | None:
    """An evaluation's ``notes`` with those that depend on K made at ``k`` from ``counts``
    (:func:`counts_at_every_k`); None when a count at ``k`` is unknown."""
    if k not in counts.index or counts.loc[k].isna().any():
        return None
    row = counts.loc[k]
    made = [ties_note(int(row["ties_at_cutoff"]), k, tie_break), seen_note(int(row["seen_in_training"]), k),
            short_note(int(row["short_lists"]), k)]
    tail = [note for note in notes if note.code in AUDIT_NOTES and note.code not in AT_K] + [n for n in made if n]
    ordered = sorted(tail, key=lambda note: AUDIT_NOTES.index(note.code))
    return [note for note in notes if note.code not in AUDIT_NOTES] + ordered
