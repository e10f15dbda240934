"""The command line's argument types and its reading of ``--recommendations``: shared by every
command (evaluate, compare, report, runs, the Spark engine)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from metrics_core.errors import input_error
from metrics_core.settings import GAINS


def parse_model_source(value: str) -> tuple[str, str]:
    """``NAME=PATH`` or ``PATH`` (the name is then the file's stem)."""
    from metrics_core.engines.memory.dataset import model_name

    if "=" in value and not Path(value).exists():
        name, path = value.split("=", 1)
        if name:
            return name, path
    return model_name(value, value), value


def gain(text: str):
    """An argparse type: a gain name, or custom gains ``1=3,2=9`` as (grade, gain) pairs
    (Settings refuses a repeated grade or a gain that falls as grades rise)."""
    if text in GAINS:
        return text
    try:
        return tuple((float(grade), float(value)) for grade, value in (pair.split("=") for pair in text.split(",")))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither {', '.join(GAINS)} nor grade=gain pairs "
                                         "such as 1=3,2=9") from None


def number(valid, why: str, named: dict[str, float] | None = None):
    """An argparse type: a number (or one of the ``named`` values) for which ``valid`` holds;
    otherwise the message says ``why``."""
    def parse(text: str) -> float:
        if named and text in named:
            return named[text]
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not (math.isfinite(value) and valid(value)):
            raise argparse.ArgumentTypeError(f"{text} {why}")
        return value
    return parse


def at_least(low: int):
    """An argparse type: an integer >= ``low`` (argparse exits 2 with the message otherwise)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}; give a whole number >= {low}")
        return value
    return parse


def model_sources(args: argparse.Namespace) -> dict[str, str]:
    """Each ``--recommendations`` as model name -> path; two models of one name are an error."""
    sources: dict[str, str] = {}
    for value in args.recommendations:
        name, path = parse_model_source(value)
        if name in sources:
            raise input_error("--recommendations", f"two models are named {name!r}.",
                              "name them: --recommendations A=path1 --recommendations B=path2.")
        sources[name] = path
    return sources
