"""The run store: uploaded tables, saved workspaces and evaluation runs on disk (SQLite catalog,
Parquet tables), shared by the app and the command line."""

import importlib

_HOMES = {"HOME_VARIABLE": "catalog", "SavedWorkspace": "catalog", "Store": "catalog", "default_home": "catalog",
          **{name: "runs" for name in ("Run", "compare_runs", "list_runs", "load_run", "run_labels", "run_results",
                                        "save_run")}}


def __getattr__(name: str):
    """The public names, imported on first use (the command line's parser imports a light part of
    the store without the catalog and the runs)."""
    if name in _HOMES:
        value = getattr(importlib.import_module(f"metrics_core.store.{_HOMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'metrics_core.store' has no attribute {name!r}")


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
