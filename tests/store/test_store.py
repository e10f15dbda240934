"""The run store: round trips, content addressing, concurrent writers, crashes mid-save,
migration from the previous schema version, and runs."""

from __future__ import annotations

import multiprocessing
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from catalogs import set_catalog_version
from lists import random_lists

from metrics_core import Columns, Dataset, InputError, Settings
from metrics_core.store import Store, compare_runs, list_runs, load_run, run_results, save_run, schema
from metrics_core.store.catalog import NameTakenError
from metrics_core.store.files import sha256_of

RECS = "user_id,item_id,rank\n1,a,1\n1,b,2\n2,c,1\n2,a,2\n3,b,1\n"
TRUTH = "user_id,item_id\n1,a\n2,a\n3,c\n"


def _saved(store: Store, name: str = "films", recs: str = RECS):
    models = {"m": store.put_table("recs.csv", recs.encode(), "recommendations")}
    truth = store.put_table("truth.csv", TRUTH.encode(), "ground truth")
    return store.save_workspace(name, models, truth, columns=Columns(), user_count=3)


def _evaluate(saved, k: int = 2):
    dataset = Dataset.build(dict(saved.models), saved.ground_truth, columns=saved.columns)
    return dataset.evaluate_all(Settings(k=k), curves=False)


def test_a_saved_workspace_reads_back_the_same_numbers(tmp_path):
    store = Store(tmp_path)
    saved = _saved(store)
    again = Store(tmp_path).workspace(saved.id)
    assert again == saved and again.name == "films" and again.rows == 8 and again.user_count == 3
    direct = Dataset.build({"m": pd.read_csv(pd.io.common.StringIO(RECS))}, pd.read_csv(pd.io.common.StringIO(TRUTH)))
    assert _evaluate(again)["m"].metrics == direct.evaluate_all(Settings(k=2), curves=False)["m"].metrics
    assert store.find_workspace("films") == saved and store.find_workspace("nope") is None


def test_the_same_file_is_stored_once_and_csv_becomes_parquet(tmp_path):
    store = Store(tmp_path)
    first = store.put_table("recs.csv", RECS.encode(), "recommendations")
    second = store.put_table("copy of recs.csv", RECS.encode(), "recommendations")
    assert first == second == sha256_of(RECS.encode())
    assert [p.name for p in (tmp_path / "tables").iterdir()] == [f"{first}.parquet"]
    assert pd.read_parquet(store.table_path(first)).shape == (5, 3)


def test_a_qrels_file_keeps_its_meaning_when_stored(tmp_path):
    store = Store(tmp_path)
    sha = store.put_table("t.qrels", b"1 0 a 0\n1 0 b 2\n", "ground truth")
    table = store.table(sha)
    assert table.name == "t.qrels" and table.column_names() == ["user_id", "item_id", "relevance"]
    from metrics_core.inputs.read import is_qrels, read_table

    assert is_qrels(read_table(table, "ground truth")[0])
    ids_only, _ = read_table(table, "ground truth", ["user_id", "item_id"], ["user_id", "item_id"])
    assert is_qrels(ids_only) and list(ids_only.columns) == ["user_id", "item_id", "relevance"]
    recs = pd.DataFrame({"user_id": [1, 1], "item_id": ["b", "a"], "rank": [1, 2]})
    truth = Dataset.build({"m": recs}, table).truth  # the ground truth is read by its id columns only
    assert truth.graded is False and truth.relevant_count.tolist() == [1]  # grade 0 is judged, not relevant
    assert len(truth.judged) == 1


def test_an_id_column_mixing_numbers_and_text_is_stored_as_text_with_the_same_numbers(tmp_path):
    """pandas reads a large CSV in chunks: an item column that turns to text far down holds
    ints and strs, which Parquet cannot; it is stored as text, as rankscope reads such ids."""
    rows = "".join(f"{u},{u % 50},1\n" for u in range(300_000)) + "300001,sku-9,1\n"
    recs = ("user_id,item_id,rank\n" + rows).encode()
    truth = "user_id,item_id\n" + "".join(f"{u},{u % 50}\n" for u in range(0, 300_000, 7)) + "300001,sku-9\n"
    store = Store(tmp_path)
    models = {"m": store.put_table("mixed.csv", recs, "recommendations")}
    saved = store.save_workspace("mixed", models, store.put_table("t.csv", truth.encode(), "truth"),
                                 columns=Columns())
    stored = pd.read_parquet(saved.models["m"].path)
    assert stored["item_id"].map(type).eq(str).all()
    direct = (tmp_path / "direct.csv", tmp_path / "truth.csv")
    direct[0].write_bytes(recs)
    direct[1].write_text(truth)
    from metrics_core import evaluate

    assert _evaluate(saved, k=1)["m"].metrics == evaluate(direct[0], direct[1], k=1).metrics


def test_an_unreadable_upload_names_the_file_and_stores_nothing(tmp_path):
    store = Store(tmp_path)
    with pytest.raises(InputError, match=r"recs\.parquet"):
        store.put_table("recs.parquet", b"not parquet", "recommendations")
    with pytest.raises(InputError, match="empty"):
        store.put_table("recs.csv", b"", "recommendations")
    with store.connect() as connection:
        assert connection.execute("SELECT count(*) FROM tables").fetchone()[0] == 0
    assert list((tmp_path / "tables").iterdir()) == []


def test_purging_a_deleted_workspace_keeps_the_tables_others_use(tmp_path):
    store = Store(tmp_path, table_grace_seconds=0)
    first = _saved(store, "first")
    second = _saved(store, "second", RECS.replace("3,b,1", "3,c,1"))
    shared_truth = first.ground_truth.path
    store.delete_workspace(second.id)
    assert store.workspace(second.id).deleted and second.models["m"].path.exists()  # in the trash, restorable
    assert store.purge_trash(older_than_days=0) == [second.id]
    assert store.workspace(second.id) is None and shared_truth.is_file()
    assert not second.models["m"].path.exists()  # used by the purged workspace only
    assert store.workspace(first.id).models["m"].path.is_file()
    with pytest.raises(InputError, match="no live saved workspace"):
        store.delete_workspace(second.id)


def test_names_are_unique_and_renaming_follows_the_runs(tmp_path):
    store = Store(tmp_path)
    saved = _saved(store)
    with pytest.raises(NameTakenError, match="exists already"):
        _saved(store, "films")
    run = save_run(store, saved, _evaluate(saved))
    store.rename_workspace(saved.id, "films v2")
    assert store.workspace(saved.id).name == "films v2" and load_run(store, run.id).workspace_name == "films v2"


def test_replacing_a_model_makes_a_new_version_and_the_old_id_keeps_its_files(tmp_path):
    store = Store(tmp_path)
    saved = _saved(store)
    other = store.put_table("b.csv", RECS.replace("1,a,1", "1,c,1").encode(), "recommendations")
    added = store.replace_model(saved.id, "other", other)
    assert list(added.models) == ["m", "other"] and added.id != saved.id and added.fingerprint != saved.fingerprint
    old = store.workspace(saved.id)
    assert old.superseded_by == added.id and list(old.models) == ["m"] and old.fingerprint == saved.fingerprint
    assert store.latest(saved.id) == added and [w.id for w in store.workspaces()] == [added.id]
    replaced = store.replace_model(added.id, "m", other)
    assert replaced.models["m"].path.stem == other and store.latest(saved.id) == replaced
    with pytest.raises(InputError, match="no live saved workspace"):
        store.replace_model(saved.id, "m", other)  # (a superseded version is not changed again)


def test_a_run_round_trips_with_its_per_user_values_and_intervals(tmp_path):
    store = Store(tmp_path)
    saved = _saved(store)
    results = _evaluate(saved)
    run = save_run(store, saved, results, note="first try")
    again = load_run(store, run.id)
    assert again.note == "first try" and again.engine == "memory" and again.settings["k"] == 2
    assert again.models["m"]["metrics"]["ndcg"] == pytest.approx(results["m"].metrics["ndcg"])
    low, high = again.models["m"]["intervals"]["ndcg"]
    assert low <= results["m"].metrics["ndcg"] <= high
    loaded = run_results(store, run.id)["m"]
    pd.testing.assert_series_equal(loaded.per_user["ndcg"].reset_index(drop=True),
                                   results["m"].per_user["ndcg"].reset_index(drop=True))
    table = list_runs(store, workspace="films")
    assert list(table["run"]) == [run.id] and table.loc[0, "ndcg"] == pytest.approx(results["m"].metrics["ndcg"])
    assert list_runs(store, model="nope").empty
    with pytest.raises(InputError, match="no run has the id"):
        load_run(store, "feedbeef")


def test_runs_recorded_within_one_second_list_in_the_order_they_were_recorded(tmp_path, monkeypatch):
    """The catalog's times have whole seconds; the order within one second is the order of
    recording, not of the runs' random ids (here made to fall in the opposite order)."""
    store = Store(tmp_path)
    saved = _saved(store)
    ids = iter(["ff", "ee", "dd"])
    monkeypatch.setattr("metrics_core.store.runs.secrets", SimpleNamespace(token_hex=lambda _: next(ids)))
    monkeypatch.setattr("metrics_core.store.runs.now", lambda: "2026-11-23T10:00:00+00:00")
    for note in ("first", "second", "third"):
        save_run(store, saved, _evaluate(saved), note=note)
    assert list(list_runs(store)["note"]) == ["first", "second", "third"]


def test_two_runs_compare_with_paired_statistics(tmp_path):
    recs = random_lists(60, 30)
    truth = pd.DataFrame({"user_id": np.arange(60), "item_id": np.random.default_rng(1).integers(0, 30, 60)})
    store = Store(tmp_path)
    models = {"m": store.put_table("r.csv", recs.to_csv(index=False).encode(), "recommendations")}
    saved = store.save_workspace("w", models, store.put_table("t.csv", truth.to_csv(index=False).encode(), "truth"),
                                 columns=Columns())
    dataset = Dataset.build(dict(saved.models), saved.ground_truth)
    first = save_run(store, saved, dataset.evaluate_all(Settings(k=5), curves=False))
    better = pd.concat([truth.assign(rank=1), recs.assign(rank=recs["rank"] + 1)])
    better = better.drop_duplicates(["user_id", "item_id"])
    newer = store.replace_model(saved.id, "m", store.put_table("r2.csv", better.to_csv(index=False).encode(), "r"))
    second = save_run(store, newer, Dataset.build(dict(newer.models), newer.ground_truth).evaluate_all(
        Settings(k=5), curves=False))
    comparison = compare_runs(store, first.id, second.id, ["recall"])["m"]
    row = comparison.rows.iloc[0]
    before, after = (run_results(store, r.id)["m"].metrics["recall"] for r in (first, second))
    assert row.delta == pytest.approx(after - before) and row.delta > 0 and row.users == 60


@pytest.mark.sqlite_only
def test_a_catalog_of_the_previous_version_is_migrated_with_its_rows(tmp_path):
    connection = sqlite3.connect(tmp_path / "catalog.sqlite", isolation_level=None)
    schema.migrate(connection, target=1)
    connection.execute("INSERT INTO runs (id, workspace_id, workspace_name, fingerprint, settings, version, created) "
                       "VALUES ('r1', NULL, 'old', 'f', '{\"k\": 10}', '0.1.0', '2026-01-01T00:00:00+00:00')")
    connection.close()
    store = Store(tmp_path)
    with store.connect() as connection:
        assert schema.version_of(connection) == schema.CURRENT == 3
        row = connection.execute("SELECT engine, per_user_sample, workspace_name FROM runs").fetchone()
    assert tuple(row) == ("memory", None, "old")


def test_a_newer_catalog_and_an_unwritable_home_are_refused_with_the_fix(tmp_path):
    Store(tmp_path)
    set_catalog_version(tmp_path, 99)
    with pytest.raises(InputError, match="newer rankscope") as error:
        Store(tmp_path)
    assert "upgrade rankscope" in str(error.value) and "RANKSCOPE_HOME" not in str(error.value)
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(InputError, match="cannot use the store"):
        Store(blocked / "home")


def test_a_crash_between_the_temporary_write_and_the_rename_keeps_the_previous_state(tmp_path):
    """The child process dies (os._exit, no clean-up) right before the rename of a new table."""
    store = Store(tmp_path)
    saved = _saved(store)
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from metrics_core.store import Store
        os.replace = lambda *a: os._exit(3)  # the crash
        Store({str(tmp_path)!r}).put_table("new.csv", b"user_id,item_id,rank\\n9,z,1\\n", "recommendations")
    """)
    assert subprocess.run([sys.executable, "-c", script], check=False).returncode == 3
    assert Store(tmp_path).workspace(saved.id) == saved
    assert _evaluate(Store(tmp_path).workspace(saved.id))["m"].metrics["ndcg"] > 0
    leftovers = [p.name for p in (tmp_path / "tables").iterdir() if p.name.endswith(".tmp")]
    assert len(leftovers) == 1  # only a temporary file, which no catalog row names
    sha = sha256_of(b"user_id,item_id,rank\n9,z,1\n")
    assert not store.table_path(sha).exists()
    assert Store(tmp_path).put_table("new.csv", b"user_id,item_id,rank\n9,z,1\n", "recommendations") == sha


def _save_many(home: str, prefix: str, count: int, ready) -> None:
    ready.wait()
    store = Store(home)
    for i in range(count):
        sha = store.put_table(f"{prefix}{i}.csv", f"user_id,item_id,rank\n{prefix}{i},a,1\n".encode(), "recs")
        truth = store.put_table("truth.csv", TRUTH.encode(), "ground truth")
        saved = store.save_workspace(f"{prefix}{i}", {"m": sha}, truth, columns=Columns())
        with store.writing() as connection:  # a run row too, as the CLI writes
            connection.execute("INSERT INTO runs (id, workspace_id, workspace_name, fingerprint, settings, version, "
                               "created) VALUES (?, ?, ?, ?, '{}', 'x', 'now')",
                               (f"{prefix}{i}", saved.id, saved.name, saved.fingerprint))


def test_two_processes_saving_at_once_both_land(tmp_path, catalog_engine):
    Store(tmp_path)
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    workers = [context.Process(target=_save_many, args=(str(tmp_path), p, 15, ready)) for p in ("a", "b")]
    for worker in workers:
        worker.start()
    ready.set()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0]
    store = Store(tmp_path)
    assert sorted(w.name for w in store.workspaces()) == sorted(f"{p}{i}" for p in "ab" for i in range(15))
    with store.connect() as connection:
        assert connection.execute("SELECT count(*) FROM runs").fetchone()[0] == 30
        if catalog_engine == "sqlite":
            assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert len(list((tmp_path / "tables").glob("*.parquet"))) == 31
