"""The command line end to end, as a CI job calls it."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from metrics_core import evaluate, evaluate_models
from metrics_core.cli import main
from metrics_core.metrics.registry import REGISTRY

DATA = Path(__file__).resolve().parents[1] / "data"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metrics_core", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def files(tmp_path, three_users):
    recs, truth, train = three_users
    paths = {"recs": tmp_path / "toy.csv", "truth": tmp_path / "truth.parquet", "train": tmp_path / "train.csv"}
    recs.to_csv(paths["recs"], index=False)
    truth.to_parquet(paths["truth"])
    train.to_csv(paths["train"], index=False)
    return paths


def test_json_output_has_the_contract_shape(files):
    done = run("evaluate", "--recommendations", str(files["recs"]), "--ground-truth", str(files["truth"]),
               "--k", "3", "--format", "json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["k"] == 3
    model = out["models"]["toy"]
    # without training data, items, scores or grades: every accuracy metric that needs nothing more, and the
    # two catalog metrics that need only the lists; everything else is skipped with a reason
    computed = {m.name for m in REGISTRY if m.family == "accuracy" and not m.needs}
    computed |= {"aggregate_diversity", "personalization"}
    assert set(model["metrics"]) == computed
    assert model["metrics"]["precision"] == pytest.approx(4 / 9)
    assert model["metrics"]["map"] == pytest.approx(0.6296, abs=1e-4)
    assert model["users"] == {"evaluated": 3, "without_relevant": 0, "without_recommendations": 0}
    assert model["warnings"] == []
    assert set(model["skipped"]) == {m.name for m in REGISTRY} - computed
    assert "ranks only" in model["skipped"]["score_entropy"]


def test_named_models_options_and_train(files, capsys):
    code = main(["evaluate", "--recommendations", f"A={files['recs']}", "--recommendations", f"B={files['recs']}",
                 "--ground-truth", str(files["truth"]), "--train", str(files["train"]), "--k", "2",
                 "--beta", "2", "--ap-denominator", "hits", "--gain", "exponential"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["models"]) == ["A", "B"]
    same = evaluate(files["recs"], files["truth"], k=2, train=files["train"], beta=2.0, ap_denominator="hits",
                    gain="exponential")
    for name, value in same.metrics.items():
        assert out["models"]["A"]["metrics"][name] == pytest.approx(value)
    assert "lauc" in out["models"]["A"]["metrics"]


def test_relevance_column_and_threshold(tmp_path):
    recs = pd.DataFrame({"u": [1, 1, 1], "i": [1, 2, 3], "pos": [1, 2, 3]})
    truth = pd.DataFrame({"u": [1, 1, 1], "i": [1, 2, 3], "stars": [3, 5, 4]})
    recs.to_csv(tmp_path / "r.csv", index=False)
    truth.to_csv(tmp_path / "t.csv", index=False)
    done = run("evaluate", "--recommendations", str(tmp_path / "r.csv"), "--ground-truth", str(tmp_path / "t.csv"),
               "--user-column", "u", "--item-column", "i", "--rank-column", "pos", "--relevance-column", "stars",
               "--relevance-threshold", "4", "--k", "3")
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)["models"]["r"]["metrics"]
    assert metrics["precision"] == pytest.approx(2 / 3)
    # NDCG uses the grades of relevant items: 5 at rank 2, 4 at rank 3 against the ideal 5, 4.
    import math

    dcg = 5 / math.log2(3) + 4 / 2
    assert metrics["ndcg"] == pytest.approx(dcg / (5 + 4 / math.log2(3)))


def test_table_format(files):
    done = run("evaluate", "--recommendations", str(files["recs"]), "--ground-truth", str(files["truth"]),
               "--k", "3", "--format", "table")
    assert done.returncode == 0
    assert "precision" in done.stdout and "0.4444" in done.stdout and "users evaluated" in done.stdout


def test_preset_flag(files):
    done = run("evaluate", "--recommendations", str(files["recs"]), "--ground-truth", str(files["truth"]),
               "--preset", "evidently", "--k", "5")
    metrics = json.loads(done.stdout)["models"]["toy"]["metrics"]
    assert metrics["precision"] == pytest.approx(4 / 9)  # min(K, |L|) = 3
    assert metrics["fbeta"] == metrics["fbeta_of_means"]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("user_id,item_id,rank\n1,a,1\n1,b,1\n", "share a rank"),
        ("user_id,item_id,score\n1,a,0.5\n1,b,\n", "column 'score'"),
        ("user_id,item_id\n1,a\n", "neither a rank column"),
        ("", "empty"),
        ("user,item_id,rank\n1,a,1\n", "missing column 'user_id'"),
        ("user_id,item_id,rank\n1,a,0\n", "not a positive integer"),
    ],
)
def test_bad_input_exits_2_with_a_message_and_no_traceback(tmp_path, files, content, fragment):
    bad = tmp_path / "bad.csv"
    bad.write_text(content)
    done = run("evaluate", "--recommendations", str(bad), "--ground-truth", str(files["truth"]))
    assert done.returncode == 2
    assert fragment in done.stderr
    assert "Fix:" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_missing_file_and_bad_k(files):
    done = run("evaluate", "--recommendations", "nope.csv", "--ground-truth", str(files["truth"]))
    assert done.returncode == 2 and "no file at" in done.stderr and "Traceback" not in done.stderr
    done = run("evaluate", "--recommendations", str(files["recs"]), "--ground-truth", str(files["truth"]),
               "--k", "0")
    assert done.returncode == 2 and "K = 0" in done.stderr
    done = run("evaluate", "--recommendations", str(files["recs"]), "--ground-truth", str(files["truth"]),
               "--bootstrap", "50")
    assert done.returncode == 2 and "--engine spark" in done.stderr and "Traceback" not in done.stderr
    done = run("evaluate", "--recommendations", str(files["recs"]), "--ground-truth", str(files["truth"]),
               "--seed", "3")
    assert done.returncode == 2 and "--seed" in done.stderr and "--engine spark" in done.stderr


def test_unknown_option_exits_2():
    done = run("evaluate", "--bogus")
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_console_script_is_installed(files):
    done = subprocess.run(["rankscope", "evaluate", "--recommendations", str(files["recs"]), "--ground-truth",
                           str(files["truth"])], capture_output=True, text=True,
                          env={"PATH": str(__import__("pathlib").Path(sys.executable).parent)})
    assert done.returncode == 0, done.stderr


def test_beyond_accuracy_flags_and_bad_features(tmp_path, files):
    items = pd.DataFrame({"item_id": range(0, 80, 10), "a": [1, 0, 1, 0, 1, 0, 1, 0], "b": [0, 1, 1, 0, 0, 1, 1, 0.5],
                          "note": ["x"] * 8})
    items.to_csv(tmp_path / "items.csv", index=False)
    done = run("evaluate", "--recommendations", str(files["recs"]), "--ground-truth", str(files["truth"]),
               "--train", str(files["train"]), "--items", str(tmp_path / "items.csv"), "--k", "3")
    assert done.returncode == 0, done.stderr
    model = json.loads(done.stdout)["models"]["toy"]
    for name in ("diversity", "intra_list_similarity", "novelty", "serendipity", "personalization", "arp",
                 "arp_normalised", "coverage", "aggregate_diversity", "gini", "entropy", "entropy_normalised"):
        assert name in model["metrics"], name
    assert model["metrics"]["coverage"] == pytest.approx(6 / 8)
    assert "score_entropy" in model["skipped"]
    only_a = run("evaluate", "--recommendations", str(files["recs"]), "--ground-truth", str(files["truth"]),
                 "--items", str(tmp_path / "items.csv"), "--feature-columns", "a", "--k", "3")
    assert json.loads(only_a.stdout)["models"]["toy"]["metrics"]["diversity"] != model["metrics"]["diversity"]

    bad = items.assign(a=items["a"].astype(object))
    bad.loc[3, "a"] = "n/a"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    done = run("evaluate", "--recommendations", str(files["recs"]), "--ground-truth", str(files["truth"]),
               "--items", str(tmp_path / "bad.csv"), "--feature-columns", "a,b")
    assert done.returncode == 2 and "column 'a'" in done.stderr and "row 3" in done.stderr
    assert "Traceback" not in done.stderr

    pd.DataFrame({"item_id": [0, 10, 20], "emb": [[1.0, 2.0], [1.0, 2.0], [3.0]]}).to_parquet(tmp_path / "emb.parquet")
    done = run("evaluate", "--recommendations", str(files["recs"]), "--ground-truth", str(files["truth"]),
               "--items", str(tmp_path / "emb.parquet"), "--embedding-column", "emb")
    assert done.returncode == 2 and "uneven lengths" in done.stderr and "Traceback" not in done.stderr


def test_peer_convention_flags_reach_the_settings(tmp_path, files, capsys):
    items = pd.DataFrame({"item_id": range(0, 80, 10), "a": [1, 0, 1, 0, 1, 0, 1, 0], "b": [0, 1, 1, 0, 0, 1, 1, 2]})
    items.to_csv(tmp_path / "items.csv", index=False)
    flags = {"--gain": "1=3,2=9", "--novelty-unknown": "one_user", "--arp-normalisation": "interactions",
             "--arp-unknown": "leave_out", "--gini-over": "recommended", "--similarity": "hamming",
             "--diversity-divisor": "list", "--entropy-base": "2", "--primitive-model": "A",
             "--primitive-scale": "rank", "--dcg-log-base": "e", "--rbp-gain": "scaled", "--rbp-max-grade": "2",
             "--one-item-lists": "self", "--dcg-ties": "average"}
    code = main(["evaluate", "--recommendations", f"A={files['recs']}", "--recommendations", f"B={files['recs']}",
                 "--ground-truth", str(files["truth"]), "--train", str(files["train"]), "--items",
                 str(tmp_path / "items.csv"), "--k", "3", *[part for pair in flags.items() for part in pair]])
    assert code == 0
    out = json.loads(capsys.readouterr().out)["models"]["B"]["metrics"]
    same = evaluate_models({"A": files["recs"], "B": files["recs"]}, files["truth"], k=3, train=files["train"],
                           items=tmp_path / "items.csv", gain={1: 3, 2: 9}, novelty_unknown="one_user",
                           arp_normalisation="interactions", arp_unknown="leave_out", gini_over="recommended",
                           similarity="hamming", diversity_divisor="list", entropy_base=2, primitive_model="A",
                           dcg_log_base=math.e, rbp_gain="scaled", rbp_max_grade=2,
                           one_item_lists="self", dcg_ties="average")["B"]
    assert out == pytest.approx(same.metrics)
    assert out["dcg"] > 0 and out["dcg"] == pytest.approx(same.metrics["dcg"])
    assert out["unexpectedness"] == 0.0  # B's lists are A's
    done = run("evaluate", "--recommendations", str(files["recs"]), "--recommendations", f"B={files['recs']}",
               "--ground-truth", str(files["truth"]), "--primitive-model", "nope")
    assert done.returncode == 2 and "primitive model 'nope'" in done.stderr and "Traceback" not in done.stderr
    assert "with --primitive-model" in done.stderr


def test_the_command_ends_with_its_output_whole_and_its_exit_code(files, tmp_path):
    """The command ends its process without Python's teardown (``cli.entry``): what it printed
    to a file, block-buffered, is all there, and a bad input still exits 2 with its message."""
    out = tmp_path / "out.json"
    with out.open("w") as stdout:
        done = subprocess.run([sys.executable, "-m", "metrics_core", "evaluate", "--recommendations",
                               str(files["recs"]), "--ground-truth", str(files["truth"]), "--format", "json"],
                              stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["models"]["toy"]["users"]["evaluated"] == 3
    missing = run("evaluate", "--recommendations", str(files["recs"]), "--ground-truth", str(tmp_path / "no.csv"))
    assert missing.returncode == 2
    assert "no file at" in missing.stderr


@pytest.mark.parametrize("output", ["json", "table"])
def test_a_reader_gone_away_makes_the_exit_code_1_without_a_message(files, output):
    """Output to a pipe whose reader has closed it (``| head`` does), as JSON or as a table:
    exit code 1 and nothing on stderr, where the failed print was an internal error (a flush
    that fails after main returns has the test below)."""
    argv = ["evaluate", "--recommendations", str(files["recs"]), "--ground-truth", str(files["truth"]),
            "--format", output]
    command = [sys.executable, "-c", "import os, sys; read, write = os.pipe(); os.close(read); os.dup2(write, 1); "
               f"from metrics_core.cli import entry; sys.argv[1:] = {argv!r}; entry()"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr == ""


def test_a_flush_to_a_reader_gone_away_ends_with_1_and_a_run_ends_with_its_own_code(monkeypatch):
    """``entry`` flushes the output before it ends the process: a closed pipe found then
    exits 1; otherwise the process ends at once with main's code."""
    from metrics_core import cli

    class Gone:
        def flush(self):
            raise BrokenPipeError

    class EndedError(Exception):
        pass

    ended = []

    def end(code: int):
        ended.append(code)
        raise EndedError

    monkeypatch.setattr(cli.os, "_exit", end)
    monkeypatch.setattr(cli.threading, "active_count", lambda: 1)
    monkeypatch.setattr(cli, "main", lambda once: 0)
    with monkeypatch.context() as gone:
        gone.setattr(cli.sys, "stdout", Gone())
        with pytest.raises(EndedError):
            cli.entry()
    monkeypatch.setattr(cli, "main", lambda once: 2)
    with pytest.raises(EndedError):
        cli.entry()
    assert ended == [1, 2]


def test_help_and_the_package_import_nothing_heavy():
    """``rankscope --help`` (and ``import metrics_core``) load no array, table, statistics, store
    or app library: they start in a blink (issue #49); the library's names load on first use."""
    heavy = ("numpy", "pandas", "scipy", "pyarrow", "numba", "sqlite3", "streamlit", "altair", "pyspark")
    probe = ("import runpy, sys\n"
             "sys.argv = ['rankscope', '--help']\n"
             "try:\n    runpy.run_module('metrics_core', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "usage: rankscope" in done.stdout and done.stdout.strip().splitlines()[-1] == "[]"
    lazy = subprocess.run([sys.executable, "-c", "import sys, metrics_core; from metrics_core import Settings; "
                           f"print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r}))"],
                          capture_output=True, text=True, timeout=60)
    assert lazy.stdout.strip() == "[]", lazy.stderr
    with pytest.raises(AttributeError, match="no attribute 'Missing'"):
        import metrics_core

        metrics_core.Missing  # noqa: B018


def test_an_evaluation_without_training_or_items_does_not_import_scipy_stats():
    """scipy.stats takes a third of a second to import, a third of a 100,000-user command: only
    the item and user bias metrics (a training table or an item table) use it; scipy.sparse
    (80 ms) only training data and item categories."""
    probe = ("import sys\nfrom metrics_core.cli import main\n"  # (main: entry() ends the process at once)
             f"sys.argv = ['rankscope', 'evaluate', '--recommendations', {str(DATA / 'recs_personalised.csv')!r}, "
             f"'--ground-truth', {str(DATA / 'ground_truth.csv')!r}, '--k', '10']\n"
             "assert main() == 0\n"
             "heavy = ('scipy.stats', 'scipy.spatial', 'scipy.sparse')\n"
             "print([m for m in heavy if m in sys.modules], file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert '"ndcg"' in done.stdout and done.stderr.strip().splitlines()[-1] == "[]", done.stderr


def test_the_public_names_stay_themselves_whatever_was_imported_first():
    """``from metrics_core import evaluate`` is the function even after every submodule of the
    package was imported (a submodule of the same name would shadow a lazily loaded name)."""
    probe = ("import importlib, pkgutil, metrics_core\n"
             "for m in pkgutil.iter_modules(metrics_core.__path__):\n"
             "    if m.name not in ('__main__', 'spark', 'spark_training'):\n"
             "        importlib.import_module('metrics_core.' + m.name)\n"
             "from metrics_core import evaluate, evaluate_models, Dataset, Settings\n"
             "print(all(callable(f) and not hasattr(f, '__path__') and type(f).__name__ != 'module'\n"
             "          for f in (evaluate, evaluate_models, Dataset, Settings)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True", done.stderr


def test_a_command_pauses_the_collector_only_while_it_imports():
    """The command that evaluates once imports with Python's cyclic collector paused and sets
    the imported objects aside (``gc.freeze``: 0.02-0.1 s of a 100,000-user command); the
    collector runs again afterwards, and a process that goes on (``once=False``: the app, a
    notebook) is left as it was."""
    probe = ("import gc, sys\nfrom metrics_core.cli import main\n"
             "once = sys.argv[1] == 'once'\n"
             f"args = ['evaluate', '--recommendations', {str(DATA / 'recs_personalised.csv')!r}, "
             f"'--ground-truth', {str(DATA / 'ground_truth.csv')!r}, '--k', '10']\n"
             "assert main(args, once=once) == 0\n"
             "gc.collect()\n"
             "print(gc.isenabled(), gc.get_freeze_count() > 10_000, file=sys.stderr)")
    for once, frozen in (("once", "True"), ("again", "False")):
        done = subprocess.run([sys.executable, "-c", probe, once], capture_output=True, text=True, timeout=120)
        assert done.stderr.strip().splitlines()[-1] == f"True {frozen}", done.stderr


def test_a_parquet_file_arrow_cannot_open_for_the_spark_engine_is_named(tmp_path, monkeypatch):
    """The files the Spark engine will read are opened first (no Spark yet); Arrow's
    NotImplementedError for a feature it lacks is a message naming the file, as in memory."""
    import argparse

    import pyarrow as pa
    import pyarrow.dataset as ds

    from metrics_core import Columns, InputError
    from metrics_core.cli.spark import checked_before_spark

    recs, truth = tmp_path / "recs.parquet", tmp_path / "truth.parquet"
    pd.DataFrame({"user_id": [1], "item_id": [2], "rank": [1]}).to_parquet(recs)
    pd.DataFrame({"user_id": [1], "item_id": [2]}).to_parquet(truth)

    def unsupported(*args, **kwargs):
        raise pa.ArrowNotImplementedError("a Parquet feature this pyarrow lacks")

    monkeypatch.setattr(ds, "dataset", unsupported)
    args = argparse.Namespace(ground_truth=str(truth), train=None, items=None)
    with pytest.raises(InputError) as error:
        checked_before_spark(args, {"m": str(recs)}, Columns())
    assert "recs.parquet" in str(error.value) and "could not be read" in str(error.value)
