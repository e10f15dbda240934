"""The paired tests and multiple-comparison corrections a comparison offers (read by the command
line's parser without importing the statistics)."""

TESTS = ("wilcoxon", "t")
CORRECTIONS = ("holm", "bonferroni", "none")
