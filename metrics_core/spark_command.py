"""``rankscope evaluate --engine spark``: the command's files read and evaluated by Spark."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from metrics_core.dataset import primitive_model
from metrics_core.errors import input_error
from metrics_core.inputs.columns import Columns
from metrics_core.jsonable import dumps
from metrics_core.settings import Settings


def run_on_spark(args: argparse.Namespace, settings: Settings, columns: Columns) -> int:
    """Each ``--recommendations`` against ``--ground-truth`` on Spark (``--master``); prints the
    same JSON shape as the in-memory engine, with ``"engine": "spark"``."""
    from metrics_core.cli import model_sources

    models = model_sources(args)  # (two of one name, or an unknown primitive model: errors before Spark starts)
    primitive = primitive_model(settings, list(models))  # (as in memory; with one model, nothing to compare with)
    store = None
    if args.save:
        from metrics_core.store import Store

        store = Store()  # an unwritable store fails here, before Spark starts
    try:
        from metrics_core.spark import evaluate_spark, local_session
    except ImportError:
        raise input_error("--engine spark", "pyspark is not installed.",
                          "pip install 'rankscope[spark]' (and Java 17), or use --engine memory.") from None
    try:
        spark = local_session(args.master)
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
            results[name] = evaluate_spark(recs, truth, k=settings.k, settings=settings, train_df=train,
                                           items_df=items, columns=columns, feature_columns=features,
                                           bootstrap=200 if args.bootstrap is None else args.bootstrap,
                                           seed=0 if args.seed is None else args.seed,
                                           per_user=store is not None,  # (per-user rows only for the store)
                                           primitive_df=lists[primitive] if len(lists) > 1 else None)
        if store is not None:
            from metrics_core.spark import save_spark_run

            run = save_spark_run(store, args.save, results, sources, note=args.note)
            print(f"rankscope: saved run {run.id} under {args.save!r} ({store.home}; per-user values of up to "
                  f"{run.per_user_sample:,} users per model)", file=sys.stderr)
    finally:
        spark.stop()
    print(dumps({"k": settings.k, "models": {name: r.to_dict() for name, r in results.items()}}, indent=2))
    print(f"rankscope: computed on Spark ({args.master})", file=sys.stderr)
    return 0

