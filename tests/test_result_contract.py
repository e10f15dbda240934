"""Both engines return the same shape: every name of :class:`metrics_core.result.Result`."""

from __future__ import annotations

import dataclasses

import pytest

from metrics_core.engines.spark.engine import SparkEvaluation
from metrics_core.result import Evaluation, Result

CONTRACT = [name for name in Result.__annotations__] + ["k", "to_dict"]


@pytest.mark.parametrize("kind", [Evaluation, SparkEvaluation])
def test_each_engine_s_evaluation_has_every_name_of_the_contract(kind):
    fields = {field.name for field in dataclasses.fields(kind)}
    missing = [name for name in CONTRACT if name not in fields and not hasattr(kind, name)]
    assert missing == []


def test_the_contract_names_what_the_pages_and_the_command_line_read():
    read = {"settings", "metrics", "per_user", "curves", "users", "warnings", "skipped", "k", "to_dict"}
    assert read <= set(CONTRACT)
