"""Public names of a package imported on first use (PEP 562), so that importing the package
(``rankscope --help``, the command line's parser) does not import numpy, pandas or the store."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_names(package: str, homes: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: name -> the attribute of the submodule
    ``homes[name]`` (relative to the package), imported on first use and kept in ``namespace``
    (the package's globals) so that the next use is a plain attribute. A submodule must not share
    a public name: importing it would bind the module in its place."""
    def attribute(name: str) -> Any:
        if name in homes:
            value = getattr(importlib.import_module(f"{package}.{homes[name]}"), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return attribute
