"""Accuracy metrics at every cut-off k = 1 .. the longest list, in one pass over the users.

- :mod:`.kernels`: what a registry entry says about how it is computed (its kernel);
- :mod:`.formulas`: each metric's formula, as the pieces kernels are made of;
- :mod:`.passes`: the passes that compute every entry from its kernel;
- :mod:`.hits`: the hit cells a pass reads; :mod:`.cutoffs`: the reported cut-offs and running
  sums; :mod:`.ideal`: gains, discounts and the ideal DCG; :mod:`.whole_list`: the metrics over
  the whole list and interpolated precision.

The package imports its parts on first use (the registry imports the kernels' pieces, and the
passes import the registry).
"""

from metrics_core.lazy import lazy_names

__getattr__ = lazy_names(__name__, {
    "AccuracyPass": "passes",
    "accuracy_pass": "passes",
    "totals_follow_from_hits": "passes",
    "fbeta_of_means": "formulas",
    "user_rows": "cutoffs",
    "hits_for_recall_levels": "whole_list",
    "expected_exposure_curves": "whole_list",
    "interpolated_precision_curves": "whole_list",
}, globals())
