"""Evaluation runs in the store: what was evaluated (the workspace's fingerprint), how (the
settings and the rankscope version), when, every aggregate with its interval, and every
user's values, so that runs can be listed, charted over time and compared later.

A run's interval of a per-user mean is the normal one, mean ± 1.96·sd/√n over the users the
mean is taken over (the same users as the aggregate), except in a run computed on Spark, which
keeps the Spark engine's Poisson-bootstrap intervals; catalog metrics and smooth functions of
means (F-beta of means, normalised ARP) get none. Normal intervals cost one pass over the
per-user table, where the cards' bootstrap would cost seconds at a million users; at the
sizes worth saving the two agree to the third decimal.

Two runs are compared only when they are comparable: the same evaluate-time settings (K, gain,
every option) and the same ground truth read the same way (its stored table and the mapping
of its columns and relevance). Otherwise :func:`compare_runs` refuses, naming each difference.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from metrics_core.errors import input_error
from metrics_core.intervals import normal_interval
from metrics_core.jsonable import dumps, plain
from metrics_core.metrics import registry
from metrics_core.result import Evaluation
from metrics_core.settings import Settings
from metrics_core.store.catalog import SavedWorkspace, Store, now
from metrics_core.store.database import ConflictError
from metrics_core.store.files import write_parquet
from metrics_core.store.results import models_rows
from metrics_core.store.settings_text import settings_json, settings_of

USER = "user"
MODEL = "model"
ID_ATTEMPTS = 20


@dataclass(frozen=True)
class Run:
    """A saved run: its record and each model's aggregates (``metrics``) and intervals."""

    id: str
    workspace_id: str | None
    workspace_name: str
    fingerprint: str
    settings: dict
    version: str
    created: str
    note: str
    engine: str
    per_user_sample: int | None
    models: dict[str, dict]  # model -> {"metrics": {..}, "intervals": {..}, "users": {..}}
    ground_truth: dict | None = None  # its table's key and mapping (None: runs saved before it was kept)

    def __repr__(self) -> str:
        return (f"Run(id={self.id!r}, workspace={self.workspace_name!r}, created={self.created!r}, "
                f"k={self.settings.get('k')}, models={list(self.models)!r}, engine={self.engine!r})")

    def _repr_html_(self) -> str:
        """HTML for a notebook: where and when, then the headline metrics of every model with the
        95% interval the run kept; every name shown as text."""
        import html

        from metrics_core.result import interval_text, number_text

        k = self.settings.get("k")
        names = [m for m in registry.ESSENTIAL if any(m in saved["metrics"] for saved in self.models.values())]
        head = "".join(f"<th>{html.escape(model)}</th>" for model in self.models)
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(registry.label(name, k))}</th>"
            + "".join(f"<td>{number_text(saved['metrics'].get(name))}<br><small>"
                      f"{interval_text(*saved['intervals'].get(name, (None, None)))}</small></td>"
                      for saved in self.models.values()) + "</tr>" for name in names)
        note = f" · {html.escape(self.note)}" if self.note else ""
        return (f"<div><p>Run <b>{html.escape(self.id)}</b> of <b>{html.escape(self.workspace_name)}</b> · "
                f"{html.escape(self.created)} · K = {k} · {html.escape(self.engine)}{note}</p>"
                f"<table><thead><tr><th>metric (95% interval)</th>{head}</tr></thead><tbody>{rows}</tbody></table>"
                "</div>")


def normal_intervals(result: Evaluation) -> dict[str, tuple[float, float]]:
    """mean ± 1.96·sd/√n of every aggregate that is a mean of per-user values, over the users
    it is taken over (evaluated users for accuracy metrics, users with a value otherwise)."""
    per_user = result.per_user
    out = {}
    for metric, column in registry.per_user_columns().items():
        if metric not in result.metrics or column not in per_user.columns:
            continue
        values = per_user[column]
        if registry.METRICS[metric].family == "accuracy":
            values = values[per_user["evaluated"]]
        values = values.dropna().to_numpy(dtype=np.float64)
        if len(values) >= 2:
            out[metric] = normal_interval(values.mean(), values.std(ddof=1), len(values))
    return out


@dataclass(frozen=True)
class RunModel:
    """What a run keeps of one model: aggregates, their intervals, user counts, per-user values
    (a DataFrame indexed by user id; a sample of the users for runs computed on Spark)."""

    name: str
    metrics: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    users: dict[str, int]
    per_user: pd.DataFrame


def save_run(store: Store, workspace: SavedWorkspace, results: dict[str, Evaluation], note: str = "") -> Run:
    """Record ``results`` (every model evaluated with the same settings) as one run."""
    if not results:
        raise input_error("run", "there are no results to save.", "evaluate at least one model first.")
    models = [RunModel(name, r.metrics, normal_intervals(r), r.users, r.per_user) for name, r in results.items()]
    settings = next(iter(results.values())).settings
    return record_run(store, workspace.id, workspace.name, workspace.fingerprint, settings, models, note,
                      ground_truth=ground_truth_of(workspace.ground_truth.path.stem, workspace.columns))


def ground_truth_of(key: str, columns) -> dict:
    """What a run's ground truth is: the key of its table (the SHA-256 of its bytes, or a
    Spark table's path) and how it was read (user, item, relevance column, threshold)."""
    return {"table": key, "user": columns.user, "item": columns.item, "relevance": columns.relevance,
            "threshold": columns.threshold}


def record_run(store: Store, workspace_id: str | None, workspace_name: str, fingerprint: str, settings: Settings,
               models: list[RunModel], note: str = "", engine: str = "memory",
               per_user_sample: int | None = None, ground_truth: dict | None = None) -> Run:
    """Write the per-user values (Parquet, then published under the run's id, only if no other
    run's file has it), then the catalog rows in one transaction. ``workspace_id`` is None for
    data that is not in the store (Spark tables). A failure on the way (a full disk) leaves no
    row and no file; an id another run took meanwhile (on any machine) is drawn again."""
    from metrics_core import __version__

    store.require_writable()
    frames = [m.per_user.rename_axis(USER).reset_index().assign(**{MODEL: m.name}) for m in models]
    per_user = pd.concat(frames, ignore_index=True)
    per_user[USER] = per_user[USER].astype(str)  # ids as text: one type across models and runs
    for _ in range(ID_ATTEMPTS):
        run_id = secrets.token_hex(4)
        file_name = f"{run_id}.parquet"
        path = store.home / "runs" / file_name
        with store.explained():
            if not write_parquet(path, per_user, exclusive=True):
                continue  # (another run, maybe another machine's, has this id's file)
        rows = [(run_id, m.name, i, dumps(m.metrics), dumps(m.intervals), dumps(m.users))
                for i, m in enumerate(models)]
        try:
            with store.writing() as connection:
                connection.execute(
                    "INSERT INTO runs (id, workspace_id, workspace_name, fingerprint, settings, version, created, "
                    "note, per_user, engine, per_user_sample, ground_truth) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (run_id, workspace_id, workspace_name, fingerprint, settings_json(settings), __version__, now(),
                     note, file_name, engine, per_user_sample, dumps(ground_truth) if ground_truth else None))
                connection.executemany("INSERT INTO run_models VALUES (?, ?, ?, ?, ?, ?)", rows)
        except ConflictError:  # (a run of this id whose file is gone: this one takes another id)
            path.unlink(missing_ok=True)
            continue
        except BaseException:
            path.unlink(missing_ok=True)  # (the file is this run's own: published only under a free name)
            raise
        return load_run(store, run_id)
    raise AssertionError(f"no free run id in {ID_ATTEMPTS} tries")


def renamed(values: dict) -> dict:
    """A run's values by metric, a metric renamed since the run was saved under its new name."""
    return {registry.RENAMED.get(name, name): value for name, value in values.items()}


def load_run(store: Store, run_id: str) -> Run:
    """The run with this id (InputError naming the id when there is none)."""
    with store.connect() as connection:
        row = connection.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise input_error("run", f"no run has the id {run_id!r} in {store.home}.",
                              "list the runs (rankscope runs list) and use one of their ids.")
        models = connection.execute("SELECT * FROM run_models WHERE run_id = ? ORDER BY position",
                                    (run_id,)).fetchall()
    return Run(row["id"], row["workspace_id"], row["workspace_name"], row["fingerprint"], json.loads(row["settings"]),
               row["version"], row["created"], row["note"], row["engine"], row["per_user_sample"],
               {m["model"]: {"metrics": renamed(json.loads(m["metrics"])),
                             "intervals": renamed(json.loads(m["intervals"])), "users": json.loads(m["users"])}
                for m in models},
               json.loads(row["ground_truth"]) if row["ground_truth"] else None)


def runs_settings(store: Store, workspace_id: str) -> list[Settings]:
    """The settings of the runs recorded on the workspace ``workspace_id`` itself (not its
    earlier versions: other tables), newest first."""
    with store.connect() as connection:
        rows = connection.execute("SELECT settings FROM runs WHERE workspace_id = ? ORDER BY created DESC, "
                                  "rowid DESC", (workspace_id,)).fetchall()
    return [settings_of(json.loads(row["settings"])) for row in rows]


def list_runs(store: Store, workspace: str | None = None, model: str | None = None) -> pd.DataFrame:
    """One row per (run, model), oldest first: the run's id, workspace, time, K, note, and every
    aggregate with its interval (``<metric>_low``, ``<metric>_high``). ``workspace`` is a name
    or an id, and its runs include those of the earlier versions it superseded (as the History
    page lists them); ``model`` keeps one model name across workspaces (a model's versions)."""
    query = ("SELECT r.id, r.workspace_id, r.workspace_name, r.created, r.settings, r.note, r.version, r.engine, "
             "m.model, m.metrics, m.intervals FROM runs r JOIN run_models m ON m.run_id = r.id")
    where, arguments = [], []
    if workspace is not None:  # (a workspace's runs include those of the versions it superseded)
        found = store.find_workspace(workspace)
        ids = store.versions(found.id) if found is not None else []
        where.append(f"(r.workspace_id IN ({', '.join('?' * len(ids)) or 'NULL'}) OR r.workspace_name = ?)")
        arguments += [*ids, workspace]
    if model is not None:
        where.append("m.model = ?")
        arguments.append(model)
    if where:
        query += " WHERE " + " AND ".join(where)
    with store.connect() as connection:
        rows = connection.execute(query + " ORDER BY r.created, r.rowid, m.position", arguments).fetchall()
    records = []
    for row in rows:
        record = {"run": row["id"], "workspace": row["workspace_name"], "workspace_id": row["workspace_id"],
                  "created": row["created"], "model": row["model"], "k": json.loads(row["settings"])["k"],
                  "note": row["note"], "engine": row["engine"], "version": row["version"]}
        record.update(renamed(json.loads(row["metrics"])))
        for metric, (low, high) in renamed(json.loads(row["intervals"])).items():
            record[f"{metric}_low"], record[f"{metric}_high"] = low, high
        records.append(record)
    return pd.DataFrame.from_records(records)


def run_labels(runs: pd.DataFrame) -> pd.Series:
    """A readable name for each row of :func:`list_runs`' table (its rows in time order): the run's
    note, else its workspace and its number among that workspace's runs ("shop · run 3"); a name
    two runs would share gets the later one's number after it ("candidate 2 (run 5)").

    >>> runs = pd.DataFrame({"run": ["a1", "a1", "b2", "c3", "d4"], "workspace": ["shop"] * 5,
    ...                      "note": ["", "", "new features", "", "new features"]})
    >>> run_labels(runs).tolist()
    ['shop · run 1', 'shop · run 1', 'new features', 'shop · run 3', 'new features (run 4)']
    """
    names, taken, counts = {}, set(), {}
    for row in runs.drop_duplicates("run").itertuples():
        counts[row.workspace] = counts.get(row.workspace, 0) + 1
        number = counts[row.workspace]
        name = str(row.note).strip() if isinstance(row.note, str) and row.note.strip() else \
            f"{row.workspace} · run {number}"
        names[row.run] = f"{name} (run {number})" if name in taken else name
        taken.add(name)
    return runs["run"].map(names)


def run_results(store: Store, run_id: str, metrics: list[str] | None = None) -> dict[str, Evaluation]:
    """The run's models as :class:`Evaluation` objects (aggregates and per-user values; no curves),
    for the paired comparisons of :mod:`metrics_core.stats.compare`. ``metrics``: only the per-user
    columns their comparisons read (:func:`~metrics_core.stats.compare.columns_read`), not every
    metric's (a run of 1M users x 4 models holds 57 columns: 7 s to read whole, against well under a
    second for one metric's)."""
    run = load_run(store, run_id)
    path = store.home / "runs" / f"{run.id}.parquet"
    try:
        per_user = pd.read_parquet(path, columns=None if metrics is None else _stored_columns(path, metrics),
                                   read_dictionary=[MODEL])  # (the model names as codes: a compare per model)
    except (OSError, ValueError) as error:
        why = "missing" if not path.is_file() else f"damaged ({str(error).splitlines()[0]})"
        raise input_error("run", f"the per-user values of run {run.id} ({path.relative_to(store.home)}) are {why}; "
                                 "its aggregates are intact (rankscope runs show " + run.id + ").",
                          "compare other runs, or evaluate again with --save to record a new run; "
                          "'rankscope store check' lists every damaged file.") from None
    settings = settings_of(run.settings)
    per_user = per_user.rename(columns=registry.RENAMED)
    rows_of = models_rows(per_user.pop(MODEL))
    out = {}
    for model, saved in run.models.items():
        rows = per_user.iloc[rows_of(model)].set_index(USER)
        metrics_of = {name: (np.nan if value is None else value) for name, value in saved["metrics"].items()}
        out[model] = Evaluation(model, settings, metrics_of, rows, pd.DataFrame(), saved["users"])
    return out


def _stored_columns(path, metrics: list[str]) -> list[str]:
    """The columns of the run file at ``path`` to read for ``metrics``: the user, the model and
    :func:`~metrics_core.stats.compare.columns_read` (under their old names too, for a run saved
    before a renaming)."""
    import pyarrow.parquet as pq

    from metrics_core.stats.compare import columns_read

    wanted = columns_read(metrics)
    wanted |= {old for old, new in registry.RENAMED.items() if new in wanted}
    return [name for name in pq.read_schema(path).names if name in wanted | {USER, MODEL}]


def compare_runs(store: Store, first: str, second: str, metrics: list[str] | None = None, test: str = "wilcoxon",
                 correction: str = "holm", resamples: int = 1000, seed: int = 0, names: dict[str, str] | None = None):
    """Each model of run ``second`` against the same model in run ``first`` (the baseline), with
    the Compare page's paired tests over the users both runs evaluated. When the runs share no
    model name but hold one model each, those two are compared. The comparisons name each side
    ``<run> · <model>``, the run by its id or by ``names[id]`` (the History page's labels)."""
    from metrics_core.stats.compare import DEFAULT_METRICS, compare

    require_comparable(load_run(store, first), load_run(store, second))
    read = metrics or list(DEFAULT_METRICS)  # (the columns of these only)
    a, b = run_results(store, first, read), run_results(store, second, read)
    pairs = [(m, m) for m in a if m in b] or ([(next(iter(a)), next(iter(b)))] if len(a) == len(b) == 1 else [])
    if not pairs:
        raise input_error("runs compare", f"runs {first} and {second} have no model in common.",
                          "compare runs that evaluated the same model name.")
    comparisons = {}
    called = names or {}
    for model_a, model_b in pairs:
        side_a, side_b = f"{called.get(first, first)} · {model_a}", f"{called.get(second, second)} · {model_b}"
        results = {side_a: a[model_a], side_b: b[model_b]}
        index_a, index_b = results[side_a].per_user.index, results[side_b].per_user.index
        # (the same users in both runs: no hashing of a million ids to intersect them)
        shared = len(index_a) if index_a.equals(index_b) else len(index_a.intersection(index_b))
        if not shared:
            raise input_error("runs compare", f"runs {first} and {second} share no users for {model_a}.",
                              "compare runs evaluated on the same users.")
        chosen = metrics or [m for m in DEFAULT_METRICS if all(m in r.metrics for r in results.values())]
        comparisons[model_b] = compare(results, side_a, chosen, test, correction, resamples, seed)
    return comparisons


def differences(first: Run, second: Run) -> list[str]:
    """What makes two runs' numbers unlike: each setting that differs ("k 2 vs 10"), and the
    ground truth (another table, or read another way). The preset's name is not a difference:
    its conventions are in the settings themselves."""
    found = []
    a, b = first.settings, second.settings
    for run, mine, other in ((first, a, b), (second, b, a)):  # (a setting added after a run was recorded)
        unknown = sorted(key for key in other if key not in mine and key != "preset")
        if unknown:
            found.append(f"run {run.id} (rankscope {run.version}) has no record of {', '.join(unknown)}, settings "
                         "added after it was made")
    for key in sorted(set(a) & set(b)):
        if key != "preset" and a.get(key) != b.get(key):
            sampled = key == "candidates" and None in (a.get(key), b.get(key))
            found.append(f"{key} {_shown(a.get(key))} vs {_shown(b.get(key))}"
                         + (" (a sampled evaluation against a full ranking: sampled candidates run higher)"
                            if sampled else ""))
    truth_a, truth_b = first.ground_truth, second.ground_truth
    if truth_a and truth_b and truth_a != truth_b:
        if truth_a.get("table") != truth_b.get("table"):
            found.append("another ground truth table")
        found += [f"ground truth {key} {_shown(truth_a.get(key))} vs {_shown(truth_b.get(key))}"
                  for key in ("user", "item", "relevance", "threshold") if truth_a.get(key) != truth_b.get(key)]
    return found


def comparable_pair(store: Store, ids: list[str], looked_at: int = 20) -> tuple[str, str]:
    """Two runs of ``ids`` (oldest first) to compare by default: the newest and the newest earlier
    run evaluated alike (:func:`differences`), among the last ``looked_at``; else the oldest and
    the newest (whose comparison then says what differs)."""
    newest = load_run(store, ids[-1])
    for candidate in reversed(ids[-looked_at:-1]):
        if not differences(load_run(store, candidate), newest):
            return candidate, ids[-1]
    return ids[0], ids[-1]


def _shown(value) -> str:
    return "(none)" if value is None else dumps(value) if isinstance(value, list | dict) else str(value)


def require_comparable(first: Run, second: Run) -> None:
    """Refuse (InputError) to compare runs whose numbers mean different things."""
    found = differences(first, second)
    if found:
        raise input_error("runs compare", f"runs {first.id} and {second.id} were not evaluated alike: "
                                          + "; ".join(found) + ". Their numbers cannot be compared.",
                          "compare runs made at the same settings against the same ground truth, or evaluate "
                          "both models again in one workspace with --save (one run, paired by user).")


def run_summary(run: Run) -> dict:
    """The JSON shape of ``rankscope runs show``."""
    return plain(asdict(run))
