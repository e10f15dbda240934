"""The run store: uploaded tables, saved workspaces and evaluation runs on disk (a SQLite or PostgreSQL catalog,
Parquet tables), shared by the app and the command line."""

from metrics_core.lazy import lazy_names

# The public names, imported on first use (the command line's parser imports a light part of the
# store without the catalog and the runs).
__getattr__ = lazy_names(__name__, {
    "HOME_VARIABLE": "catalog", "SavedWorkspace": "catalog", "Store": "catalog", "default_home": "catalog",
    **{name: "runs" for name in ("Run", "comparable_pair", "compare_runs", "list_runs", "load_run", "run_labels",
                                  "run_results", "save_run")}}, globals())

__all__ = [
           "HOME_VARIABLE",
           "Run",
           "SavedWorkspace",
           "Store",
           "comparable_pair",
           "compare_runs",
           "default_home",
           "list_runs",
           "load_run",
           "run_labels",
           "run_results",
           "save_run",
]
