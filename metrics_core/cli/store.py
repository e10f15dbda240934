"""The command line's side of the run store: ``--save NAME [--note TEXT]`` on ``evaluate`` and
``compare``, ``rankscope runs list|show|compare``, ``rankscope workspaces
list|trash|delete|restore|purge|prepare`` and ``rankscope store check``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from metrics_core.cli.arguments import at_least, number
from metrics_core.cli.prepare import add_prepare_action, run_prepare
from metrics_core.cli.tracking import add_mlflow_arguments, log_to_mlflow_if_asked
from metrics_core.errors import InputError, input_error
from metrics_core.jsonable import dumps
from metrics_core.settings import Settings
from metrics_core.stats.choices import CORRECTIONS, TESTS
from metrics_core.store.links import app_view, workspace_link

if TYPE_CHECKING:
    from metrics_core.inputs.read import StoredTable
    from metrics_core.result import Evaluation
    from metrics_core.store.catalog import SavedWorkspace, Store

LISTED = ["run", "created", "workspace", "model", "k", "ndcg", "map", "recall", "precision", "note"]


def workspace_name(text: str) -> str:
    """An argparse type: a workspace name as the store keeps it (blank, or shaped like an id,
    exits 2 with the store's own message)."""
    from metrics_core.store.catalog import checked_name

    try:
        return checked_name(text)
    except InputError as error:
        raise argparse.ArgumentTypeError(error.text("cli").replace("\n", " ")) from None


def add_save_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--save", metavar="NAME", type=workspace_name,
                        help="record the run in the store (RANKSCOPE_HOME) under the workspace NAME (created, or "
                             "a new version of it with these files; a name, never an id)")
    parser.add_argument("--note", default="", metavar="TEXT", help="a note kept with the saved run")


def add_runs_command(commands) -> None:
    runs = commands.add_parser("runs", help="saved runs: list, show, compare (the store is RANKSCOPE_HOME)")
    actions = runs.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="every saved run, one row per model")
    listing.add_argument("--workspace", metavar="NAME", help="only this workspace's runs (name or id)")
    listing.add_argument("--model", metavar="NAME", help="only this model's runs, across workspaces")
    listing.add_argument("--format", choices=["json", "table"], default="table")
    show = actions.add_parser("show", help="one run: settings, every aggregate and interval")
    show.add_argument("id")
    pair = actions.add_parser("compare", help="the second run's models against the first's, paired by user")
    pair.add_argument("first")
    pair.add_argument("second")
    pair.add_argument("--metrics", default="ndcg,map,recall", metavar="A,B")
    pair.add_argument("--test", choices=TESTS, default="wilcoxon")
    pair.add_argument("--correction", choices=CORRECTIONS, default="holm")

    pair.add_argument("--bootstrap", type=at_least(0), default=1000, metavar="N")
    pair.add_argument("--seed", type=at_least(0), default=0)
    pair.add_argument("--format", choices=["json", "table"], default="json")
    export = actions.add_parser("export", help="log a saved run into MLflow (--mlflow)")
    export.add_argument("id")
    add_mlflow_arguments(export)


def add_workspaces_command(commands) -> None:
    spaces = commands.add_parser("workspaces", help="saved workspaces: list, trash, delete, restore, purge, prepare")
    actions = spaces.add_subparsers(dest="action", required=True)
    add_prepare_action(actions)
    for name, text in (("list", "every live workspace"), ("trash", "the workspaces in the trash")):
        listing = actions.add_parser(name, help=text)
        listing.add_argument("--format", choices=["json", "table"], default="table")
    for name, text in (("delete", "move a workspace to the trash (restorable for RANKSCOPE_TRASH_DAYS days)"),
                       ("restore", "take a workspace out of the trash")):
        actions.add_parser(name, help=text).add_argument("id", help="the workspace's id (rankscope workspaces list)")
    purge = actions.add_parser("purge", help="delete for good what has been in the trash longer than DAYS")

    purge.add_argument("--older-than", type=number(lambda days: days >= 0, "is not a number of days >= 0"),
                       default=None, metavar="DAYS", help="default RANKSCOPE_TRASH_DAYS (30)")
    store = commands.add_parser("store", help="the store itself: check it, move its catalog to PostgreSQL")
    store_actions = store.add_subparsers(dest="action", required=True)
    store_actions.add_parser("check", help="list catalog entries whose files are missing or damaged (exit 1 if any)")
    move = store_actions.add_parser("migrate", help="copy the SQLite catalog of RANKSCOPE_HOME into a PostgreSQL "
                                                    "catalog (the files stay where they are)")
    move.add_argument("--to", required=True, metavar="URL", help="postgresql://user@host:5432/database")


def store_inputs(args: argparse.Namespace, sources: dict[str, str]) -> tuple[Store, dict]:
    """Put every input file in the store (each once) and return the stored tables by role:
    ``models`` (name -> table), ``ground_truth``, ``train``, ``items``, ``users``."""
    from metrics_core.store.catalog import Store

    store = Store()
    roles = {"ground_truth": (args.ground_truth, "ground truth"), "train": (args.train, "training interactions"),
             "items": (args.items, "item features"), "users": (args.users, "user features")}

    def stored(path: str, role: str) -> StoredTable:
        sha = store.put_table(Path(path).name, Path(path), role)
        return store.table(sha, Path(path).name)

    tables = {role: stored(path, label) if path else None for role, (path, label) in roles.items()}
    tables["models"] = {name: stored(path, f"recommendations '{name}'") for name, path in sources.items()}
    return store, tables


def save_workspace_and_run(args: argparse.Namespace, store: Store, tables: dict, columns, dataset,
                           results: dict[str, Evaluation]) -> None:
    """The workspace named ``--save`` (created, or a new version of it when its files or mapping
    differ, in one transaction: any number of processes may save under one name at once) and a
    run of ``results`` in it; says where on stderr, with the workspace's id and link.

    When ``results`` carry their curves and the app can show them (:func:`app_view`), they are
    also kept for the app (:mod:`metrics_core.store.results`), and so is ``dataset`` when it is
    large and holds every score (:mod:`metrics_core.store.encoded`): its link opens on them
    without reading, encoding or evaluating the tables, on any page."""
    from metrics_core.cli.prepare import keep_for_app
    from metrics_core.store.runs import save_run

    features = tuple(c.strip() for c in args.feature_columns.split(",") if c.strip()) if args.feature_columns \
        else None
    keys = {role: table.path.stem if table else None for role, table in tables.items() if role != "models"}
    workspace: SavedWorkspace = store.save_workspace(
        args.save, {name: t.path.stem for name, t in tables["models"].items()}, keys.pop("ground_truth"),
        columns=columns, feature_columns=features, embedding_column=args.embedding_column,
        user_count=len(dataset.users),
        if_exists="replace", **keys)
    run = save_run(store, workspace, results, note=args.note)
    first = next(iter(results.values()))
    view = app_view(first.settings, args.preset, list(results))
    if view is not None and len(first.curves) > 1:
        keep_for_app(store, workspace, view[0], dataset, results)
    print(f"rankscope: saved run {run.id} in workspace {workspace.name!r} (id {workspace.id}, {store.home}); "
          f"open it in the app: {workspace_link(workspace.id, view[1] if view else None)}"
          + ("" if view else " (the app opens it at its own settings: a setting of this run has no control there)"),
          file=sys.stderr)


def keeps_for_app(args: argparse.Namespace, settings: Settings) -> bool:
    """Whether ``--save`` keeps the evaluation for the app (so it should compute the curves): the
    app can show ``settings`` (model names do not matter for the answer)."""
    return bool(getattr(args, "save", None)) and app_view(settings, args.preset, ["?"]) is not None


WORKSPACE_COLUMNS = ["id", "name", "models", "users", "rows", "updated", "deleted"]


def workspaces_frame(saved: list[SavedWorkspace]):
    import pandas as pd

    return pd.DataFrame([{"id": w.id, "name": w.name, "models": ", ".join(w.models), "users": w.user_count,
                          "rows": w.rows, "updated": w.updated, "deleted": w.deleted} for w in saved],
                        columns=WORKSPACE_COLUMNS)


def run_workspaces(args: argparse.Namespace) -> int:
    from metrics_core.store.catalog import Store, trash_days

    if args.action == "prepare":
        return run_prepare(args)
    store = Store()
    if args.action in ("list", "trash"):
        table = workspaces_frame(store.workspaces() if args.action == "list" else store.trash())
        if args.action == "list":
            table = table.drop(columns=["deleted"])
        if args.format == "json":
            print(dumps(table.to_dict(orient="records"), indent=2))
        else:
            print(table.to_string(index=False) if len(table) else
                  "no workspaces" + (" in the trash" if args.action == "trash" else ""))
    elif args.action == "delete":
        saved = store.delete_workspace(args.id)
        print(f"rankscope: moved {saved.name!r} ({saved.id}) to the trash; restore it with 'rankscope workspaces "
              f"restore {saved.id}' within {trash_days():g} days", file=sys.stderr)
    elif args.action == "restore":
        saved = store.restore_workspace(args.id)
        print(f"rankscope: restored {saved.id} as {saved.name!r}", file=sys.stderr)
    else:
        purged = store.purge_trash(args.older_than)
        print(f"rankscope: purged {len(purged)} workspace(s) from the trash", file=sys.stderr)
    return 0


def run_store(args: argparse.Namespace) -> int:
    from metrics_core.store.catalog import default_home
    from metrics_core.store.check import check_store
    from metrics_core.store.database import catalog_url_from_environment

    if args.action == "migrate":
        return migrate_catalog(args.to)
    problems = check_store(default_home(), catalog_url_from_environment())
    for problem in problems:
        print(problem)
    print(f"rankscope: {len(problems)} problem(s) found" if problems else "rankscope: the store is sound",
          file=sys.stderr)
    return 1 if problems else 0


def migrate_catalog(url: str) -> int:
    """``rankscope store migrate --to URL``: the SQLite catalog's rows copied into the PostgreSQL
    catalog at URL, in one transaction (an interrupted copy leaves the target as it was)."""
    from metrics_core.store.catalog import Store, default_home
    from metrics_core.store.database import SQLITE, redacted
    from metrics_core.store.move import copy_catalog

    home = default_home()
    if not (home / "catalog.sqlite").is_file():
        raise input_error("store migrate", f"there is no SQLite catalog in {home} to copy.",
                          "set RANKSCOPE_HOME to the folder of the store to move (it holds catalog.sqlite).")
    source, target = Store(home, catalog=SQLITE, read_only=False), Store(home, catalog=url, read_only=False)
    counts = copy_catalog(source, target)
    print(f"rankscope: copied {counts['workspaces']} workspace(s), {counts['tables']} table(s) and "
          f"{counts['runs']} run(s) from {home / 'catalog.sqlite'} to {redacted(url)}; the SQLite catalog is "
          "left as it was. Set RANKSCOPE_CATALOG to that URL for every app server and job that uses "
          f"{home}.", file=sys.stderr)
    return 0


def export_run(store, args: argparse.Namespace) -> None:
    """``rankscope runs export ID --mlflow``: the run's models as the command that saved it would
    have logged them (per-user values and their intervals; a Spark run's aggregates and the
    intervals it kept, its per-user rows being a sample)."""
    from metrics_core.integrations.mlflow import KeptAggregates
    from metrics_core.store.runs import load_run, run_results
    from metrics_core.store.settings_text import settings_of

    if not args.mlflow:
        raise input_error("runs export", "say where to export the run.", "add --mlflow (the only target so far).")
    run = load_run(store, args.id)
    if run.engine == "spark":
        results = {name: KeptAggregates(settings_of(run.settings), saved["metrics"], saved["intervals"])
                   for name, saved in run.models.items()}
    else:
        results = run_results(store, run.id)
    log_to_mlflow_if_asked(args, results)


def run_runs(args: argparse.Namespace) -> int:
    from metrics_core.cli.output import format_comparison
    from metrics_core.store.catalog import Store
    from metrics_core.store.runs import compare_runs, list_runs, load_run, run_summary


    store = Store()
    if args.action == "list":
        table = list_runs(store, args.workspace, args.model)
        if args.format == "json":
            print(dumps(table.to_dict(orient="records"), indent=2))
        elif table.empty:
            print("no saved runs" + (" for that workspace or model" if args.workspace or args.model else ""))
        else:
            print(table[[c for c in LISTED if c in table.columns]].to_string(
                index=False, float_format=lambda v: f"{v:.4f}"))
    elif args.action == "show":
        print(dumps(run_summary(load_run(store, args.id)), indent=2))
    elif args.action == "export":
        export_run(store, args)
    else:
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
        comparisons = compare_runs(store, args.first, args.second, metrics, args.test, args.correction,
                                   args.bootstrap, args.seed)
        if args.format == "json":
            print(dumps({model: c.to_dict() for model, c in comparisons.items()}, indent=2))
        else:
            print("\n\n".join(format_comparison(c) for c in comparisons.values()))
    return 0
