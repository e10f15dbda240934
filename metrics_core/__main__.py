"""``python -m metrics_core`` is the ``rankscope`` command."""

from metrics_core.cli import entry

entry()
