"""``rankscope evaluate --engine spark``: the command's files read and evaluated by Spark."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

from metrics_core.cli.arguments import model_sources
from metrics_core.cli.output import strict_failures
from metrics_core.cli.tracking import log_to_mlflow_if_asked
from metrics_core.engines.memory.dataset import primitive_model
from metrics_core.errors import InputError, input_error
from metrics_core.inputs.columns import Columns
from metrics_core.jsonable import dumps
from metrics_core.settings import Settings


def checked_before_spark(args: argparse.Namespace, models: dict[str, str], columns: Columns) -> dict[str, str]:
    """What can be checked without Spark, checked as the in-memory engine checks it, with its
    words: every path exists and is Parquet, has rows, and has the columns its role needs
    (recommendations: a rank or a score). Returns each Spark table label's file label."""
    import pandas as pd
    import pyarrow.dataset as ds

    from metrics_core.inputs.encode import USER_ITEM_HINT, require_order
    from metrics_core.inputs.read import PARQUET_FAILURES, unreadable
    from metrics_core.inputs.validate import require_columns

    roles = [(f"recommendations '{name}'", path, "recommendations") for name, path in models.items()]
    roles += [(role, path, role) for role, path in (("ground truth", args.ground_truth),
                                                    ("training interactions", args.train),
                                                    ("item features", args.items)) if path]
    labels = {}
    for role, path, spark_role in roles:
        place = Path(path)
        label = f"{role} ({place.name})"
        if not place.exists() or (place.is_file() and place.suffix.lower() not in (".parquet", ".pq")):
            raise input_error(label, "the Spark engine reads Parquet files or folders of them.",
                              "convert the file to Parquet, or use --engine memory.")
        try:
            table = ds.dataset(place, format="parquet")
            names, rows = table.schema.names, table.count_rows()
        except PARQUET_FAILURES as error:
            raise unreadable(label, error) from None
        if rows == 0:
            raise input_error(label, "the file has no rows.", "export the table again with its rows.")
        empty = pd.DataFrame(columns=names)
        if spark_role != "item features":
            require_columns(empty, [columns.user, columns.item] if spark_role != "item features" else [columns.item],
                            label, USER_ITEM_HINT)
        if spark_role == "recommendations":
            require_order(empty, columns, label)
        labels[spark_role if spark_role != "recommendations" else role] = label
    return labels


@contextmanager
def files_named(labels: dict[str, str], model: str):
    """An InputError from Spark names the file, as in memory ("recommendations 'm' (recs.parquet)"),
    not the Spark DataFrame."""
    try:
        yield
    except InputError as error:
        source = error.source
        for spark_label, file_label in ((f"{role} (Spark DataFrame)", label) for role, label in
                                        {"recommendations": labels.get(f"recommendations '{model}'"),
                                         **labels}.items() if label):
            source = source.replace(spark_label, file_label)
        if source == error.source:
            raise
        raise InputError(error.template.replace(error.source, source, 1), source, error.column, error._problem,
                         error._fix, error.rows) from None


def run_on_spark(args: argparse.Namespace, settings: Settings, columns: Columns) -> int:
    """Each ``--recommendations`` against ``--ground-truth`` on Spark (``--master``); prints the
    same JSON shape as the in-memory engine, with ``"engine": "spark"``."""

    models = model_sources(args)  # (two of one name, or an unknown primitive model: errors before Spark starts)
    primitive = primitive_model(settings, list(models))  # (as in memory; with one model, nothing to compare with)
    labels = checked_before_spark(args, models, columns)
    store = None
    if args.save:
        from metrics_core.store import Store

        store = Store()  # an unwritable (or read-only) store fails here, before Spark starts
        store.require_writable()
    try:
        from metrics_core.engines.spark.engine import evaluate_spark, local_session
    except ImportError:
        raise input_error("--engine spark", "pyspark is not installed.",
                          "pip install 'rankscope[spark]' (and Java 17), or use --engine memory.") from None
    if not os.environ.get("RANKSCOPE_DEBUG"):  # (pyspark's own warnings, such as pandas 3 support, and the
        warnings.filterwarnings("ignore", module="pyspark")  # worker tracebacks it repeats as warnings)
    try:
        spark = local_session(args.master, quiet=True)
    except Exception as error:  # pyspark's own errors when the JVM cannot start or the master is unknown
        raise input_error("--engine spark", f"Spark could not start ({str(error).splitlines()[0][:200]}).",
                          "install Java 17 (apt-get install openjdk-17-jre-headless; JAVA_HOME, when set, must "
                          "point at it) and check --master.") from None
    try:
        def read(path: str | None):
            if path is None:
                return None
            place = Path(path)
            if not place.exists() or (place.is_file() and place.suffix.lower() not in (".parquet", ".pq")):
                raise input_error(path, "the Spark engine reads Parquet files or folders of them.",
                                  "convert the file to Parquet, or use --engine memory.")
            return spark.read.parquet(path)

        truth, items, train = read(args.ground_truth), read(args.items), read(args.train)
        features = [c.strip() for c in args.feature_columns.split(",") if c.strip()] if args.feature_columns else None
        sources = {"ground truth": args.ground_truth, **{f"recommendations {name}": path
                                                          for name, path in models.items()}}
        lists = {name: read(path) for name, path in models.items()}
        results = {}
        for name, recs in lists.items():
            with files_named(labels, name):
                results[name] = evaluate_spark(recs, truth, k=settings.k, settings=settings, train_df=train,
                                               items_df=items, columns=columns, feature_columns=features,
                                               bootstrap=200 if args.bootstrap is None else args.bootstrap,
                                               seed=0 if args.seed is None else args.seed,
                                               per_user=store is not None,  # (per-user rows only for the store)
                                               primitive_df=lists[primitive] if len(lists) > 1 else None, model=name)
            for note in results[name].warnings:
                if note.code == "id_mismatch":
                    print(f"rankscope: warning [{name}]: {note.message}", file=sys.stderr)
        if store is not None:
            from metrics_core.engines.spark.engine import save_spark_run

            run = save_spark_run(store, args.save, results, sources, note=args.note)
            print(f"rankscope: saved run {run.id} under {args.save!r} ({store.home}; per-user values of up to "
                  f"{run.per_user_sample:,} users per model)", file=sys.stderr)
    finally:
        spark.stop()
    print(dumps({"k": settings.k, "models": {name: r.to_dict() for name, r in results.items()}}, indent=2), flush=True)
    print(f"rankscope: computed on Spark ({args.master})", file=sys.stderr)
    log_to_mlflow_if_asked(args, results)  # (aggregates and the bootstrap intervals; per-user rows stay in Spark)
    failures = strict_failures(results) if args.strict else []
    for line in failures:
        print(line, file=sys.stderr)
    return 1 if failures else 0

