"""Metric kernels over the encoded arrays, and :mod:`.registry`, the one list of every metric
with its family, direction, per-user column, inputs, label and formula."""
