"""Values as strict JSON: no ``NaN`` or ``Infinity`` (which most JSON readers reject), null instead."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping


def plain(value):
    """``value`` with mappings and sequences recursed, numpy scalars and arrays as Python values,
    NaN and infinities as None, and anything else JSON cannot hold as its text.

    >>> plain({"a": float("nan"), "b": [1.5, float("inf")]})
    {'a': None, 'b': [1.5, None]}
    """
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return plain(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def dumps(value, **options) -> str:
    """Strict JSON text of :func:`plain` ``(value)``."""
    return json.dumps(plain(value), allow_nan=False, **options)
