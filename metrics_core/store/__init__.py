"""The run store: uploaded tables, saved workspaces and evaluation runs on disk (SQLite catalog,
Parquet tables), shared by the app and the command line."""

from metrics_core.store.catalog import HOME_VARIABLE, SavedWorkspace, Store, default_home
from metrics_core.store.runs import Run, compare_runs, list_runs, load_run, run_labels, run_results, save_run

__all__ = [
           "HOME_VARIABLE",
           "Run",
           "SavedWorkspace",
           "Store",
           "compare_runs",
           "default_home",
           "list_runs",
           "load_run",
           "run_labels",
           "run_results",
           "save_run",
]
