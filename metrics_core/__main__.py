"""``python -m metrics_core`` is the ``rankscope`` command."""

import sys

from metrics_core.cli import main

sys.exit(main())
