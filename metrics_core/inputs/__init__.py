"""Inputs: read tables (:mod:`.read`), check columns (:mod:`.validate`), code ids once
(:mod:`.ids`), and encode everything into the arrays every metric reads (:mod:`.encode`,
whose data model is :mod:`.encoded`); item features (:mod:`.features`) and the check that
the recommendations' ids live in the ground truth's id space (:mod:`.matching`)."""
