"""Evaluations kept with a saved workspace: opening it again (another session, a restarted server,
another server on the same store) reads them instead of reading, encoding and evaluating the
tables, which takes far longer than reading the kept evaluations back.

What is kept, per workspace fingerprint, encoding and settings (the key also holds rankscope's
version, so a release that changes a number never shows an older one):

    results/<fingerprint>-<key>.parquet   every model's per-user values (a ``model`` column)
    results/<fingerprint>-<key>.json      per model: aggregates, curves (the beyond-accuracy ones
                                          too), user counts, warnings, skipped metrics, what was
                                          left out, the list length

The JSON is written last (each file written to a temporary name, then renamed), so a reader
finds both or neither; a pair that cannot be read is treated as absent (the app evaluates and
writes it again). At most :data:`KEEP` evaluations are kept per workspace (the oldest leave
first), and a workspace purged for good takes its evaluations with it. Floats go through JSON
as ``repr`` gives them and through Parquet as float64: what is read back equals what was kept.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

import numpy as np
import pandas as pd

from metrics_core.errors import Note
from metrics_core.metrics.beyond_curves import BeyondCurves
from metrics_core.result import Evaluation
from metrics_core.settings import Encoding, Settings
from metrics_core.store.files import write_atomically, write_parquet
from metrics_core.store.settings_text import settings_json

MODEL = "__model__"
KEEP = 3


def results_key(fingerprint: str, encoding: Encoding, settings: Settings) -> str:
    """The name of an evaluation of the workspace ``fingerprint`` at ``settings``."""
    from metrics_core import __version__

    text = json.dumps([__version__, encoding.order, encoding.tie_break, settings_json(settings)])
    return f"{fingerprint[:32]}-{hashlib.sha256(text.encode()).hexdigest()[:24]}"


def save_results(home, key: str, results: dict[str, Evaluation], positions: dict[str, int]) -> None:
    """Keep ``results`` (every model at one settings) under ``key``; ``positions``: each model's
    longest list (the K slider's range, known without reading the tables)."""
    folder = home / "results"
    frames = [r.per_user.rename_axis(r.per_user.index.name or "user").reset_index().assign(**{MODEL: name})
              for name, r in results.items()]
    write_parquet(folder / f"{key}.parquet", pd.concat(frames, ignore_index=True))
    details = {name: {"metrics": r.metrics, "users": r.users, "skipped": r.skipped, "left_out": r.left_out,
                      "warnings": [asdict(note) for note in r.warnings], "user_column": r.per_user.index.name,
                      "curves": {"k": r.curves.index.tolist(), **{c: r.curves[c].tolist() for c in r.curves}},
                      "positions": positions[name], "beyond_curves": _curves_json(r.beyond_curves)}
               for name, r in results.items()}
    text = json.dumps(details, allow_nan=True)
    write_atomically(folder / f"{key}.json", lambda path: path.write_text(text))
    _keep_newest(folder, key.split("-")[0])


def load_results(home, key: str, settings: Settings, encoding: Encoding) -> tuple[dict[str, Evaluation],
                                                                                  dict[str, int]] | None:
    """The evaluations kept under ``key`` and each model's longest list (None: none kept, or not
    readable)."""
    folder = home / "results"
    try:
        details = json.loads((folder / f"{key}.json").read_text())
        table = pd.read_parquet(folder / f"{key}.parquet", read_dictionary=[MODEL])  # (the models' names as codes)
        return _evaluations(details, table, settings, encoding)
    except (OSError, ValueError, KeyError, TypeError, IndexError):  # (absent, or not what was written: evaluate)
        return None


def _evaluations(details: dict, table: pd.DataFrame, settings: Settings,
                 encoding: Encoding) -> tuple[dict[str, Evaluation], dict[str, int]]:
    results, positions = {}, {}
    rows_of = models_rows(table.pop(MODEL))
    for name, kept in details.items():
        rows = table.iloc[rows_of(name)]
        per_user = rows.set_index(rows.columns[0])
        per_user.index.name = kept["user_column"]
        curves = pd.DataFrame({c: np.asarray(v, dtype=np.float64) for c, v in kept["curves"].items() if c != "k"},
                              index=pd.Index(np.asarray(kept["curves"]["k"], dtype=np.int64), name="k"))
        results[name] = Evaluation(name, settings, {m: float(v) for m, v in kept["metrics"].items()}, per_user,
                                   curves, kept["users"], [Note(**note) for note in kept["warnings"]],
                                   kept["skipped"], kept["left_out"], encoding,
                                   _curves_from_json(kept.get("beyond_curves")))
        positions[name] = int(kept["positions"])
    return results, positions


def models_rows(models: pd.Series):
    """``rows(name)``: the rows of model ``name`` in a table of several models' rows (``models``,
    the model of each row), as a slice when they are consecutive (they are as written: then the
    model's rows are a view of the table, not a copy of its million rows) or their positions."""
    model_of = models.astype("category")
    codes, names = model_of.cat.codes.to_numpy(), list(model_of.cat.categories)

    def rows(name: str) -> slice | np.ndarray:
        at = np.flatnonzero(codes == (names.index(name) if name in names else -2))
        return slice(int(at[0]), int(at[-1]) + 1) if len(at) and at[-1] - at[0] + 1 == len(at) else at

    return rows


def _curves_json(curves: BeyondCurves | None) -> dict | None:
    """The beyond-accuracy curves as JSON: k, the users listed, then each table's columns."""
    if curves is None:
        return None
    parts = ("values", "users", "sd") + (("notes",) if curves.notes is not None else ())
    return {"k": curves.values.index.tolist(), "listed": curves.listed.tolist(),
            **{part: {c: getattr(curves, part)[c].tolist() for c in getattr(curves, part)} for part in parts}}


def _curves_from_json(kept: dict | None) -> BeyondCurves | None:
    if kept is None:
        return None
    index = pd.Index(np.asarray(kept["k"], dtype=np.int64), name="k")
    types = {"values": np.float64, "users": np.int64, "sd": np.float64, "notes": np.float64}
    parts = {part: pd.DataFrame({c: np.asarray(v, dtype=types[part]) for c, v in kept[part].items()}, index=index)
             for part in types if part in kept}
    return BeyondCurves(**parts, listed=pd.Series(np.asarray(kept["listed"], dtype=np.int64), index=index,
                                                  name="listed"))


def known_positions(home, fingerprint: str) -> dict[str, int] | None:
    """Each model's longest list, from any evaluation kept for the workspace (None: none)."""
    for path in sorted((home / "results").glob(f"{fingerprint[:32]}-*.json")):
        try:
            return {name: int(kept["positions"]) for name, kept in json.loads(path.read_text()).items()}
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None


def _keep_newest(folder, fingerprint: str) -> None:
    kept = sorted(folder.glob(f"{fingerprint}-*.json"), key=lambda path: path.stat().st_mtime, reverse=True)
    for old in kept[KEEP:]:
        old.unlink(missing_ok=True)
        old.with_suffix(".parquet").unlink(missing_ok=True)


def forget_results(home, live_fingerprints: set[str]) -> int:
    """Delete the evaluations of workspaces no longer in the store; returns how many."""
    live = {fingerprint[:32] for fingerprint in live_fingerprints}
    gone = 0
    for path in (home / "results").glob("*-*.*"):
        if path.suffix in (".json", ".parquet") and path.name.split("-")[0] not in live:
            path.unlink(missing_ok=True)
            gone += path.suffix == ".json"
    return gone
