"""The command line's side of the run store: ``--save NAME [--note TEXT]`` on ``evaluate`` and
``compare``, and ``rankscope runs list|show|compare``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from metrics_core.inputs.read import StoredTable
from metrics_core.jsonable import dumps
from metrics_core.result import Evaluation
from metrics_core.stats.compare import CORRECTIONS, TESTS
from metrics_core.store.catalog import SavedWorkspace, Store
from metrics_core.store.runs import compare_runs, list_runs, load_run, run_summary, save_run

LISTED = ["run", "created", "workspace", "model", "k", "ndcg", "map", "recall", "precision", "note"]


def add_save_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--save", metavar="NAME", help="record the run in the store (RANKSCOPE_HOME) under the "
                                                       "workspace NAME (created, or updated with these files)")
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
    from metrics_core.cli import _at_least  # the command's own number parsers (cli is loaded by now)

    pair.add_argument("--bootstrap", type=_at_least(0), default=1000, metavar="N")
    pair.add_argument("--seed", type=_at_least(0), default=0)
    pair.add_argument("--format", choices=["json", "table"], default="json")


def store_inputs(args: argparse.Namespace, sources: dict[str, str]) -> tuple[Store, dict]:
    """Put every input file in the store (each once) and return the stored tables by role:
    ``models`` (name -> table), ``ground_truth``, ``train``, ``items``, ``users``."""
    store = Store()
    roles = {"ground_truth": (args.ground_truth, "ground truth"), "train": (args.train, "training interactions"),
             "items": (args.items, "item features"), "users": (args.users, "user features")}

    def stored(path: str, role: str) -> StoredTable:
        sha = store.put_table(Path(path).name, Path(path), role)
        return store.table(sha, Path(path).name)

    tables = {role: stored(path, label) if path else None for role, (path, label) in roles.items()}
    tables["models"] = {name: stored(path, "recommendations") for name, path in sources.items()}
    return store, tables


def save_workspace_and_run(args: argparse.Namespace, store: Store, tables: dict, columns, user_count: int,
                           results: dict[str, Evaluation]) -> None:
    """The workspace named ``--save`` (updated when it exists) and a run of ``results`` in it;
    says where on stderr."""
    existing = store.find_workspace(args.save)
    features = tuple(c.strip() for c in args.feature_columns.split(",") if c.strip()) if args.feature_columns \
        else None
    keys = {role: table.path.stem if table else None for role, table in tables.items() if role != "models"}
    workspace: SavedWorkspace = store.save_workspace(
        args.save, {name: t.path.stem for name, t in tables["models"].items()}, keys.pop("ground_truth"),
        columns=columns, feature_columns=features, embedding_column=args.embedding_column, user_count=user_count,
        workspace_id=existing.id if existing else None, **keys)
    run = save_run(store, workspace, results, note=args.note)
    print(f"rankscope: saved run {run.id} in workspace {workspace.name!r} ({store.home})", file=sys.stderr)


def run_runs(args: argparse.Namespace) -> int:
    from metrics_core.cli import format_comparison

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
    else:
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
        comparisons = compare_runs(store, args.first, args.second, metrics, args.test, args.correction,
                                   args.bootstrap, args.seed)
        if args.format == "json":
            print(dumps({model: c.to_dict() for model, c in comparisons.items()}, indent=2))
        else:
            print("\n\n".join(format_comparison(c) for c in comparisons.values()))
    return 0
