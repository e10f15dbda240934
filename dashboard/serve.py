"""The app's server: ``streamlit run dashboard/app.py`` with the code every session needs loaded
before the first one arrives. ``make run``, ``rankscope app`` and the browser tests start it as
``python -m dashboard.serve [streamlit flags]``; a plain ``streamlit run dashboard/app.py`` still
works, and then the first session loads that code itself.

Streamlit imports a page's modules only when a session first runs it, so without this the first
visit after a restart waited about two seconds more (Altair and its schema, SciPy's statistics,
numba and the compiled loops), and that code, about 230 MiB, was counted as memory that
visit took and never gave back. Loaded here, they are part of the idle server:

- the Python modules are imported before the server starts listening (about 1.5 s, done once),
  and their objects (some 170,000 the garbage collector tracks) are then set aside from its full
  passes (``gc.freeze``): such a pass walked them all, 50-110 ms landing in whichever page run
  triggered it;
- the compiled loops are loaded from numba's cache on a thread of their own while the server
  starts (about 1 s). On a machine whose cache is empty (an install that skipped ``make``'s
  ``python -m metrics_core.compiled``) they are compiled there once, about 40 s of one core; a
  session that needs a loop meanwhile waits for numba's compiler, as it would have compiled the
  loop itself.
"""

from __future__ import annotations

import gc
import logging
import sys
import threading
from pathlib import Path

APP = Path(__file__).resolve().parent / "app.py"


def import_modules() -> None:
    """Import what the pages import, and what the metrics import only when used (SciPy's parts).
    Streamlit's note that a cached function is declared before its runtime exists is silenced
    meanwhile: the caches are made on first use, when the runtime is there."""
    sys.path.insert(0, str(APP.parents[1]))  # (as app.py does: the clone's packages come first)
    caching = logging.getLogger("streamlit.runtime.caching.cache_data_api")
    level = caching.level
    caching.setLevel(logging.ERROR)
    try:
        _import_modules()
    finally:
        caching.setLevel(level)


def _import_modules() -> None:
    import altair as alt
    import pandas as pd
    import pandas.io.formats.style
    import scipy.sparse
    import scipy.spatial.distance
    import scipy.stats  # noqa: F401

    import metrics_core.charts
    import metrics_core.engines.memory.cases
    import metrics_core.report
    import metrics_core.stats.overlap
    import metrics_core.stats.served
    import metrics_core.stats.verdict  # noqa: F401
    from dashboard import (  # noqa: F401
        charts,
        components,
        glossary,
        progress,
        saved_workspaces,
        setting_words,
        state,
        uploads,
    )

    alt.Chart(pd.DataFrame({"x": [1]})).mark_bar().encode(x="x").to_dict()  # (Vega-Lite's schema, as a chart checks it)


def load_compiled_loops() -> threading.Thread:
    """Load every compiled loop (:func:`metrics_core.compiled.compile_all`) on a daemon thread;
    returns the thread. A failure there is printed on the server's console; a session that needs
    the loop meets it again where it calls it."""
    from metrics_core.compiled import compile_all

    thread = threading.Thread(target=compile_all, name="rankscope-compiled-loops", daemon=True)
    thread.start()
    return thread


def preload() -> threading.Thread:
    """Everything this module loads before serving: the modules now (their objects then frozen,
    see the module's docstring), the compiled loops on the returned thread."""
    import_modules()
    gc.freeze()
    return load_compiled_loops()


def main(flags: list[str] | None = None) -> None:
    """``streamlit run`` on the app with ``flags`` (``--server.port 8501`` and the like), after
    :func:`preload`."""
    preload()
    from streamlit.web import cli

    cli.main(args=["run", str(APP), *(sys.argv[1:] if flags is None else flags)], prog_name="streamlit")


if __name__ == "__main__":
    main()
