"""``rankscope`` command line: evaluate recommendation files from a shell or a CI job.

Exit codes: 0 success, 2 bad input or bad arguments (message on stderr, no traceback),
1 an unexpected internal error (set RANKSCOPE_DEBUG=1 for the traceback), or, without a
message, an output pipe whose reader has gone away.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, get_args

from metrics_core.cli.app import add_app_command, run_app
from metrics_core.cli.arguments import at_least, gain, model_sources, number, parse_model_source
from metrics_core.cli.output import format_comparison, format_table, strict_failures
from metrics_core.cli.store import (
    add_runs_command,
    add_save_arguments,
    add_workspaces_command,
    keeps_for_app,
    run_runs,
    run_store,
    run_workspaces,
    save_workspace_and_run,
    store_inputs,
)
from metrics_core.cli.tracking import add_mlflow_arguments, log_to_mlflow_if_asked
from metrics_core.errors import InputError, input_error
from metrics_core.inputs.columns import Columns
from metrics_core.jsonable import dumps
from metrics_core.settings import (
    AP_DENOMINATORS,
    FIELD_TYPES,
    GAINS,
    NDCG_IDEALS,
    PRECISION_DENOMINATORS,
    PRESETS,
    encoding_for,
    settings_for,
)
from metrics_core.stats.choices import CORRECTIONS, TESTS

if TYPE_CHECKING:
    from metrics_core.engines.memory.dataset import Dataset
    from metrics_core.result import Evaluation


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rankscope", description="Evaluate recommender and ranking models.")
    commands = parser.add_subparsers(dest="command", required=True)
    ev = commands.add_parser("evaluate", help="metrics of one or more models against a ground truth")
    add_loading_arguments(ev)
    add_metric_arguments(ev)
    ev.add_argument("--format", choices=["json", "table"], default="json")
    ev.add_argument("--engine", choices=["memory", "spark"], default="memory",
                    help="spark: Parquet files or folders read and evaluated by Apache Spark (pip install "
                         "'rankscope[spark]', Java 17)")
    ev.add_argument("--master", default="local[2]", help="Spark master URL for --engine spark (default local[2])")
    ev.add_argument("--bootstrap", type=at_least(0), default=None, metavar="N",
                    help="--engine spark: Poisson-bootstrap resamples for the intervals (default 200; 0: normal "
                         "intervals)")
    ev.add_argument("--seed", type=at_least(0), default=None, help="--engine spark: bootstrap seed (default 0)")
    add_save_arguments(ev)
    add_mlflow_arguments(ev)
    add_strict_argument(ev)
    for name, text in (("compare", "paired tests, intervals and win/tie/loss against a baseline"),
                       ("report", "write a self-contained HTML report (and every number as JSON/CSV)")):
        sub = commands.add_parser(name, help=text)
        add_loading_arguments(sub)
        add_metric_arguments(sub)
        add_comparison_arguments(sub)
        add_strict_argument(sub)
        if name == "compare":
            sub.add_argument("--format", choices=["json", "table"], default="json")
            add_save_arguments(sub)
            add_mlflow_arguments(sub)
        else:
            sub.add_argument("--output", required=True, metavar="PATH", help="the HTML report to write")
            sub.add_argument("--json", metavar="PATH", help="also write every number as JSON")
            sub.add_argument("--csv", metavar="PATH", help="also write every number as CSV")
            sub.add_argument("--served-by", metavar="COL", default=None,
                             help="who is served among items: the groups of this item-table column (default: the "
                                  "head, middle and tail thirds of popularity, with training data)")
    add_runs_command(commands)
    add_workspaces_command(commands)
    add_app_command(commands)
    return parser


def add_strict_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strict", action="store_true",
                        help="fail (exit 1) when the data audit finds anything: ground truth in training, training "
                             "items recommended, lists much shorter than K, sampled candidates, ties at the cut-off")


def add_metric_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--k", type=int, default=10, help="cut-off K (default 10)")
    parser.add_argument("--beta", type=_positive_finite, default=None, help="F-beta weight of recall (default 1.0)")
    parser.add_argument("--ap-denominator", choices=AP_DENOMINATORS, default=None,
                        help="D of AP@K: min(K,R) (default), R, or hits in the top K")
    parser.add_argument("--gain", type=gain, default=None, metavar="NAME|G=V,..",
                        help=f"NDCG/DCG gain of a grade: {', '.join(GAINS)} (default linear), or custom gains "
                             "per grade, e.g. 1=3,2=9 (other grades keep their value)")
    parser.add_argument("--precision-denominator", choices=PRECISION_DENOMINATORS, default=None,
                        help="precision divides hits by K (default), the items listed, or min(K, R)")
    parser.add_argument("--ndcg-ideal", choices=NDCG_IDEALS, default=None,
                        help="NDCG's ideal list: the best grades cut at K (default), all of them, or K relevant items")
    parser.add_argument("--dcg-log-base", type=_entropy_base, default=None, metavar="2|e",
                        help="base of the logarithm in DCG's discount (default 2; NDCG does not depend on it)")
    parser.add_argument("--dcg-discount", choices=("log2", "lenskit"), default=None,
                        help="DCG/NDCG's weight of rank i: 1/log2(i + 1) (default) or LensKit's 1/log2(max(i, 2))")
    parser.add_argument("--dcg-ties", choices=("order", "average"), default=None,
                        help="DCG/NDCG over equal scores: in the list's order (default) or each run of ties "
                             "sharing its mean gain (scikit-learn's default)")
    parser.add_argument("--false-positives", choices=("listed", "k"), default=None,
                        help="MCC/accuracy count as false positives the irrelevant items listed (default) or K - hits "
                             "(RecTools)")
    parser.add_argument("--recall-levels", choices=get_args(FIELD_TYPES["recall_levels"]), default=None,
                        help="hits that reach recall level r in iprec_at_recall/11pt_avg: round(r*R) as trec_eval 10 "
                             "(default), or floor(r*R + 0.9) as trec_eval 9 and pytrec_eval (add_0.9)")
    parser.add_argument("--max-list-length", type=at_least(1), default=None, metavar="N",
                        help="evaluate only the first N items of each list, in its order (trec_eval's -M)")
    parser.add_argument("--judged-only", action="store_true", default=None,
                        help="evaluate each list condensed to the items the ground truth judges (trec_eval's -J)")
    parser.add_argument("--score-threshold", type=float, default=None, metavar="X",
                        help="items scored at or below X are not retrieved (needs a score column)")
    parser.add_argument("--rbp-p", type=_probability, default=None, metavar="P",
                        help="persistence of rank-biased precision, 0 < P < 1 (default 0.8)")
    parser.add_argument("--ee-patience", type=_probability, default=None, metavar="G",
                        help="expected exposure's patience: rank i gets exposure G^(i - 1) (default 0.5, TREC Fair)")
    parser.add_argument("--rbp-gain", choices=("binary", "scaled", "grade"), default=None,
                        help="what a relevant item adds to RBP: 1 (default), its grade / the highest grade (scaled: "
                             "graded RBP), or its grade (ranx)")
    parser.add_argument("--rbp-max-grade", type=_positive_finite, default=None, metavar="G",
                        help="the grade --rbp-gain scaled divides by (default: the ground truth's highest)")
    parser.add_argument("--preset", choices=list(PRESETS), default=None,
                        help="reproduce another tool's conventions (see docs/metric-definitions.md)")
    beyond = parser.add_argument_group("beyond-accuracy conventions (defaults: rankscope's; see docs/cli.md)")
    for name, help_text in BEYOND_OPTIONS.items():
        choices = get_args(FIELD_TYPES[name])
        beyond.add_argument(f"--{name.replace('_', '-')}", choices=choices, default=None, help=help_text)
    beyond.add_argument("--entropy-base", type=_entropy_base, default=None, metavar="2|e",
                        help="logarithm base of the catalog entropy (default e)")
    beyond.add_argument("--primitive-model", default=None, metavar="NAME",
                        help="the model serendipity_primitive and unexpectedness compare with (default: the first)")
    beyond.add_argument("--category-column", default=None, metavar="COL",
                        help="the item table's category column for calibration and exposure (default: the first "
                             "text column whose values repeat, such as a genre)")
    beyond.add_argument("--calibration-alpha", type=_calibration_alpha, default=None, metavar="A",
                        help="calibration's smoothing of the list's category mix (default 0.01)")


BEYOND_OPTIONS = {
    "novelty_unknown": "items unknown to training: left out of novelty (default) or seen by one user (RecTools)",
    "arp_normalisation": "arp_normalised divides ARP by training users (default) or interactions (RecTools)",
    "arp_unknown": "items unknown to training count 0 in ARP (default) or are left out (Evidently)",
    "gini_over": "Gini over the whole catalog (default) or the recommended items only (Evidently)",
    "similarity": "cosine of item features (default), Hamming distance of feature values (RecTools), or "
                  "co-occurrence in training (Recommenders)",
    "diversity_divisor": "diversity = mean over item pairs (default) or pair sum / list length (Evidently)",
    "one_item_lists": "a list with one featured item: left out of diversity and intra-list similarity (default) "
                      "or compared with itself, similarity 1 (LensKit)",
    "serendipity_over": "serendipity averaged over relevant items (default) or the whole top K (Recommenders)",
    "score_entropy": "softmax entropy per user (default) or one softmax over all users (Evidently)",
    "primitive_scale": "scale both lists to [0, 1] by rank (default) or min-max of scores",
    "exposure_browsing": "exposure at each rank: 1/log2(rank + 1) (default) or rbp_p^(rank - 1)",
    "exposure_target": "the item groups' target shares of exposure: the catalog's (default), the training "
                       "interactions', or equal",
}


_positive_finite = number(lambda v: v > 0, "is not a finite number > 0; e.g. 1.0 (0.5 favours precision, 2 recall)")
_probability = number(lambda v: 0 < v < 1, "is not between 0 and 1; e.g. 0.8")
_entropy_base = number(lambda v: v > 1, "is not above 1; give 2 or e", {"e": math.e})
_calibration_alpha = number(lambda v: 0 < v <= 1, "is not in (0, 1]; e.g. 0.01")


def add_comparison_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--baseline", metavar="NAME", help="the model the others are compared with (default: first)")
    parser.add_argument("--metrics", default="ndcg,map,recall", metavar="A,B",
                        help="per-user metrics to compare (default ndcg,map,recall)")
    parser.add_argument("--test", choices=TESTS, default="wilcoxon", help="paired test (default wilcoxon)")
    parser.add_argument("--correction", choices=CORRECTIONS, default="holm",
                        help="multiple-comparison correction (default holm)")
    parser.add_argument("--bootstrap", type=at_least(0), default=1000, metavar="N",
                        help="bootstrap resamples (default 1000; 0: no intervals)")
    parser.add_argument("--seed", type=at_least(0), default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--fail-if", action="append", default=[], metavar="GATE",
                        help='exit 1 when the condition holds, e.g. "ndcg < 0.30" or "B.ndcg < baseline.ndcg"')


def add_loading_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--recommendations", action="append", required=True, metavar="[NAME=]PATH",
                        help="a model's lists (CSV, Parquet or TREC run); repeat for several models")
    parser.add_argument("--ground-truth", required=True, metavar="PATH", help="relevant (user, item) pairs")
    parser.add_argument("--train", metavar="PATH", help="training interactions (candidates for LAUC/MCC)")
    parser.add_argument("--items", metavar="PATH", help="item table (the catalog)")
    parser.add_argument("--users", metavar="PATH", help="user table")
    parser.add_argument("--relevance-column", metavar="COL", help="grade column of the ground truth")
    parser.add_argument("--relevance-threshold", type=float, default=1.0, metavar="X",
                        help="grades below X are not relevant (default 1)")
    parser.add_argument("--feature-columns", metavar="A,B,C",
                        help="item features for diversity/serendipity (default: every numeric column of --items)")
    parser.add_argument("--embedding-column", metavar="COL", help="item column holding an embedding per item")
    parser.add_argument("--user-column", default="user_id")
    parser.add_argument("--item-column", default="item_id")
    parser.add_argument("--score-column", default="score")
    parser.add_argument("--rank-column", default="rank")


def load_dataset(args: argparse.Namespace, score_positions: int | None = None) -> Dataset:
    """The dataset of the command's files; with ``--save`` the files are put in the store first
    and read from there (a CSV is parsed once, into the stored Parquet). ``score_positions``: see
    :meth:`Dataset.build`. The ``rankscope`` process itself (:func:`entry`) evaluates once and
    ends: it loads the compiled loops only for inputs large enough to repay their loading
    (:func:`~metrics_core.inputs.encoded.evaluating_once`)."""
    with imported_without_collecting(args.evaluating_once):
        from metrics_core.engines.memory.dataset import Dataset
        from metrics_core.inputs.encoded import evaluating_once
    if args.evaluating_once:
        evaluating_once()

    columns = _columns(args)
    sources = model_sources(args)
    features = [c.strip() for c in args.feature_columns.split(",") if c.strip()] if args.feature_columns else None
    tables = {"models": sources, "ground_truth": args.ground_truth, "train": args.train, "items": args.items,
              "users": args.users}
    if getattr(args, "save", None):
        args.stored = store_inputs(args, sources)
        tables = args.stored[1]
    return Dataset.build(dict(tables["models"]), tables["ground_truth"], train=tables["train"], items=tables["items"],
                         users=tables["users"], columns=columns, encoding=encoding_for(args.preset),
                         feature_columns=features, embedding_column=args.embedding_column,
                         score_positions=score_positions)


@contextmanager
def imported_without_collecting(once: bool) -> Iterator[None]:
    """In a process that evaluates once (``once``): Python's cyclic garbage collector paused
    while the block imports pandas, pyarrow and rankscope's evaluation, then those modules'
    objects set aside from its later passes (``gc.freeze``). Imports make over 100,000 objects
    that live as long as the process, and each full pass the collector makes among them walks
    them all: 0.02-0.1 s of a 100,000-user command (docs/benchmarks.md). Elsewhere (the app, a
    notebook) nothing changes."""
    if not once or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _columns(args: argparse.Namespace) -> Columns:
    return Columns(user=args.user_column, item=args.item_column, score=args.score_column, rank=args.rank_column,
                   relevance=args.relevance_column, threshold=args.relevance_threshold)


def save_if_asked(args: argparse.Namespace, dataset: Dataset, results: dict[str, Evaluation]) -> None:
    if getattr(args, "save", None):
        store, tables = args.stored
        save_workspace_and_run(args, store, tables, _columns(args), dataset, results)


def run_evaluate(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.engine == "spark":
        from metrics_core.cli.spark import run_on_spark

        return run_on_spark(args, settings, _columns(args))
    if args.bootstrap is not None or args.seed is not None:
        option = "--bootstrap" if args.bootstrap is not None else "--seed"
        raise input_error(option, "evaluate's intervals are bootstrapped on the Spark engine only.",
                          "add --engine spark, or use 'rankscope compare' for bootstrap intervals in memory.")
    for_app = keeps_for_app(args, settings)  # (the app draws the curves and every score: kept for it)
    dataset = load_dataset(args, score_positions=None if for_app else settings.score_positions)
    results = dataset.evaluate_all(settings, curves=for_app, beyond_curves=for_app)  # (another K is read in the app)
    warn_about_ids(results)
    save_if_asked(args, dataset, results)
    if args.format == "json":
        print(dumps({"k": settings.k, "models": {name: r.to_dict() for name, r in results.items()}}, indent=2),
              flush=True)
    else:
        print(format_table(results), flush=True)
    log_to_mlflow_if_asked(args, results)  # (after the numbers are out: a tracking store's refusal loses none)
    return failed_if_strict(args, results)


def failed_if_strict(args: argparse.Namespace, results: dict) -> int:
    """1 when ``--strict`` and the data audit found something (each finding said on stderr), else 0."""
    failures = strict_failures(results) if args.strict else []
    for line in failures:
        print(line, file=sys.stderr)
    return 1 if failures else 0


def warn_about_ids(results: dict[str, Evaluation]) -> None:
    """Ids that (almost) never match the ground truth make every number meaningless: say so on
    stderr too, where a CI log shows it, not only inside the JSON."""
    for name, result in results.items():
        for note in result.warnings:
            if note.code == "id_mismatch":
                print(f"rankscope: warning [{name}]: {note.message}", file=sys.stderr)


def _settings(args: argparse.Namespace, **extra):
    return settings_for(args.preset, k=args.k, beta=args.beta, ap_denominator=args.ap_denominator, gain=args.gain,
                        precision_denominator=args.precision_denominator, rbp_p=args.rbp_p,
                        rbp_gain=args.rbp_gain, rbp_max_grade=args.rbp_max_grade, ee_patience=args.ee_patience,
                        ndcg_ideal=args.ndcg_ideal, dcg_log_base=args.dcg_log_base,
                        false_positives=args.false_positives, dcg_discount=args.dcg_discount, dcg_ties=args.dcg_ties,
                        score_threshold=args.score_threshold,
                        recall_levels=args.recall_levels, max_list_length=args.max_list_length,
                        judged_only=args.judged_only,
                        entropy_base=args.entropy_base, primitive_model=args.primitive_model,
                        category_column=args.category_column, calibration_alpha=args.calibration_alpha,
                        **{name: getattr(args, name) for name in BEYOND_OPTIONS}, **extra)


def run_compare(args: argparse.Namespace) -> int:
    """Compare, print (or write the report), then apply the gates: exit 1 when one fails."""
    from metrics_core.stats.compare import compare
    from metrics_core.stats.gates import check_gates

    if args.command == "report":
        require_report_extra()
        writable_outputs(args.output, args.json, args.csv)
    settings = _settings(args, users_without_list="zero")  # a missing list scores 0, never dropped
    dataset = load_dataset(args)
    for_app = keeps_for_app(args, settings)
    results = dataset.evaluate_all(settings, curves=args.command == "report" or for_app, beyond_curves=for_app)
    warn_about_ids(results)
    if args.baseline is not None and args.baseline not in results:
        raise input_error("--baseline", f"no model named {args.baseline!r}.", f"choose one of: {', '.join(results)}.")
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    comparison = compare(results, args.baseline, metrics, args.test, args.correction, args.bootstrap, args.seed)
    gates = check_gates(args.fail_if, {name: r.metrics for name, r in results.items()}, comparison.baseline)
    save_if_asked(args, dataset, results)
    if args.command == "report":
        from metrics_core.report.cases import case_study
        from metrics_core.report.document import file_fingerprints, numbers, numbers_csv, write_report
        from metrics_core.stats.segments import ACTIVITY, user_segments
        from metrics_core.stats.served import gap_sentences, items_by_model
        from metrics_core.stats.verdict import LEAD_METRIC

        files = {"ground truth": args.ground_truth, "train": args.train, "items": args.items, "users": args.users,
                 **{f"recommendations {n}": p for n, p in (parse_model_source(v) for v in args.recommendations)}}
        prints = file_fingerprints(files)
        write_report(args.output, results, comparison, prints, workspace=getattr(args, "save", None),
                     cases=case_study(dataset, results),
                     served=items_by_model(dataset, list(results), next(iter(results.values())).settings,
                                           args.served_by), served_by=args.served_by,
                     gaps=None if dataset.training is None else gap_sentences(results, LEAD_METRIC,
                                                                              user_segments(dataset, ACTIVITY)))
        if args.json:
            Path(args.json).write_text(dumps(numbers(results, comparison, fingerprints=prints), indent=2))
        if args.csv:
            Path(args.csv).write_text(numbers_csv(results, comparison))
        print(f"wrote {args.output}")
    elif args.format == "json":
        out = comparison.to_dict()
        out["gates"] = [g.__dict__ for g in gates]
        print(dumps(out, indent=2))
    else:
        print(format_comparison(comparison))
    sys.stdout.flush()
    log_to_mlflow_if_asked(args, results, comparison)  # (after the numbers are out: a refusal loses none)
    for gate in gates:
        if gate.failed:
            print(gate.message(), file=sys.stderr)
    return max(1 if any(g.failed for g in gates) else 0, failed_if_strict(args, results))


def require_report_extra() -> None:
    """The HTML report draws its charts with Altair and inlines vl-convert's JavaScript: both come
    with ``pip install 'rankscope[report]'`` (or ``[app]``), not with the library alone; say so
    before any work."""
    import importlib

    missing = []
    for module, name in (("altair", "altair"), ("vl_convert", "vl-convert-python")):
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(name)
    if missing:
        raise input_error("report", f"the HTML report needs {' and '.join(missing)}, which are not installed.",
                          "pip install 'rankscope[report]' (or use 'rankscope compare', which needs neither).")


def writable_outputs(*paths: str | None) -> None:
    """Every output file can be written: its folder exists and is writable (checked before any
    work, so a typo in a path never costs a whole run or leaves a partial set of files)."""
    for path in paths:
        if path is None:
            continue
        folder = Path(path).resolve().parent
        if not folder.is_dir():
            raise input_error(f"output {path}", f"the folder {folder} does not exist.",
                              "create the folder first or write the file somewhere else.")
        if Path(path).is_dir():
            raise input_error(f"output {path}", "is a folder, not a file.", "give a file name, e.g. report.html.")
        if not os.access(folder, os.W_OK):
            raise input_error(f"output {path}", f"the folder {folder} is not writable.",
                              "choose a folder you can write to.")


def main(argv: list[str] | None = None, once: bool = False) -> int:
    """Runs the command ``argv`` (default: the process's arguments) and returns its exit code;
    ``once``: this process ends after it (:func:`entry`), see :func:`load_dataset`."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.evaluating_once = once
    try:
        if args.command in ("runs", "workspaces", "store", "app"):
            return {"runs": run_runs, "workspaces": run_workspaces, "store": run_store,
                    "app": run_app}[args.command](args)
        return run_evaluate(args) if args.command == "evaluate" else run_compare(args)
    except InputError as error:
        print(f"rankscope: {error.text('cli')}", file=sys.stderr)
        return 2
    except MemoryError:
        print("rankscope: out of memory; evaluate fewer users at a time.", file=sys.stderr)
        return 1
    except BrokenPipeError:  # (the reader of the output has gone away, as `| head` does: nothing to say)
        return 1
    except Exception as error:
        if os.environ.get("RANKSCOPE_DEBUG"):
            traceback.print_exc()
        print(f"rankscope: internal error ({type(error).__name__}: {error}). "
              "Please report it; set RANKSCOPE_DEBUG=1 for details.", file=sys.stderr)
        return 1


def entry() -> NoReturn:
    """The ``rankscope`` command: :func:`main`, then the process ends at once with its exit code.

    A run leaves gigabytes of arrays and the compiled loops' state behind, and Python's own exit
    takes them apart object by object before the system frees the memory anyway, a tenth of a
    large command. Everything the command writes to a file
    is closed when written, so once stdout and stderr are flushed nothing is lost. While another
    thread still runs (loading the compiled loops when a bad input ended the command early,
    say), Python's exit waits for it as usual. A reader of the output that has gone away (a
    closed pipe) makes the exit code 1."""
    code = main(once=True)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        os._exit(code or 1)
    if threading.active_count() > 1:
        sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    entry()
