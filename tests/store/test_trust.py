"""A store a team can trust (issue #42): no save silently replaces another's workspace, a
workspace id keeps its meaning, concurrent ``--save`` of one name all land, deleting is
recoverable, a read-only store refuses every write, unlike runs are not compared, and the
store's own failures (a held lock, a full disk, damaged files and catalogs) each get their own
message and exit 2. The concurrency cases run as real processes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from catalogs import set_catalog_version
from lists import random_lists

from metrics_core import Columns, Dataset, InputError, Settings
from metrics_core.store import Store, compare_runs, load_run, save_run
from metrics_core.store.catalog import NameTakenError
from metrics_core.store.database import ConflictError

RECS = "user_id,item_id,rank\n1,a,1\n1,b,2\n2,c,1\n2,a,2\n3,b,1\n"
OTHER = "user_id,item_id,rank\n1,c,1\n1,b,2\n2,a,1\n2,c,2\n3,a,1\n"
TRUTH = "user_id,item_id\n1,a\n2,a\n3,c\n"


def rankscope(home, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metrics_core", *args], capture_output=True, text=True, timeout=180,
                          env={**os.environ, "RANKSCOPE_HOME": str(home), **env})


def _save(store: Store, name: str, recs: str = RECS, **options):
    models = {"m": store.put_table("recs.csv", recs.encode(), "recommendations")}
    truth = store.put_table("truth.csv", TRUTH.encode(), "ground truth")
    return store.save_workspace(name, models, truth, columns=Columns(), user_count=3, **options)


@pytest.fixture
def files(tmp_path):
    recs, truth = tmp_path / "recs.csv", tmp_path / "truth.csv"
    recs.write_text(RECS)
    truth.write_text(TRUTH)
    return recs, truth


# 1. a taken name is never silently replaced; an id never changes meaning


def test_saving_under_a_taken_name_asks_and_each_answer_keeps_the_old_link_working(tmp_path):
    store = Store(tmp_path)
    first = _save(store, "recs upload")
    with pytest.raises(NameTakenError) as taken:
        _save(store, "recs upload", OTHER)
    assert taken.value.existing == first
    assert store.workspace(first.id) == first  # nothing changed
    version = _save(store, "recs upload", OTHER, if_exists="version")
    assert version.name == "recs upload v2" and store.workspace(first.id) == first
    replaced = _save(store, "recs upload", OTHER, if_exists="replace")
    assert replaced.id not in (first.id, version.id) and replaced.name == "recs upload"
    old = store.workspace(first.id)  # the colleague's link still opens the colleague's files
    assert old.models["m"].path == first.models["m"].path and old.superseded_by == replaced.id
    assert store.latest(first.id) == replaced
    assert {w.name for w in store.workspaces()} == {"recs upload", "recs upload v2"}
    assert _save(store, "recs upload", OTHER, if_exists="replace").id == replaced.id  # same files: no new version


# 2. "creates or updates NAME" under any concurrency


def test_ten_parallel_saves_of_one_name_all_record_their_runs(tmp_path, files):
    home, (recs, truth) = tmp_path / "store", files
    other = tmp_path / "other.csv"
    other.write_text(OTHER)
    Store(home)

    def save(i: int) -> subprocess.CompletedProcess:
        return rankscope(home, "evaluate", "--recommendations", f"m={recs if i % 2 else other}", "--ground-truth",
                         str(truth), "--k", "2", "--save", "shop", "--note", f"job {i}")

    with ThreadPoolExecutor(10) as pool:
        done = list(pool.map(save, range(10)))
    assert [d.returncode for d in done] == [0] * 10, [d.stderr for d in done if d.returncode]
    runs = json.loads(rankscope(home, "runs", "list", "--format", "json").stdout)
    assert sorted(r["note"] for r in runs) == sorted(f"job {i}" for i in range(10))
    live = Store(home).workspaces()
    assert [w.name for w in live] == ["shop"]
    by_file = {json.loads(d.stdout)["models"]["m"]["metrics"]["recall"] for d in done}
    assert len(by_file) == 2  # (the two files give different numbers: each run kept its own)
    for d in done:
        assert "?ws=" in d.stderr and "id " in d.stderr  # the id and the link are printed


# 3 and 4. blank names, and ids given as names


@pytest.mark.parametrize("name", ["", "   "])
def test_a_blank_save_name_exits_2_and_saves_nothing(tmp_path, files, name):
    done = rankscope(tmp_path / "store", "evaluate", "--recommendations", str(files[0]), "--ground-truth",
                     str(files[1]), "--save", name)
    assert done.returncode == 2 and "name is empty" in done.stderr and done.stdout == ""


def test_an_id_given_as_a_save_name_is_refused_and_that_workspace_is_untouched(tmp_path, files):
    home = tmp_path / "store"
    saved = _save(Store(home), "films")
    done = rankscope(home, "evaluate", "--recommendations", str(files[0]), "--ground-truth", str(files[1]),
                     "--save", saved.id)
    assert done.returncode == 2 and "shape of a workspace id" in done.stderr
    assert Store(home).workspace(saved.id) == saved and [w.name for w in Store(home).workspaces()] == ["films"]
    with pytest.raises(InputError, match="shape of a workspace id"):
        Store(home).rename_workspace(saved.id, "0123456789ab")


# 5. the trash and read-only stores


def test_a_deleted_workspace_is_restorable_from_the_trash_and_the_command_line(tmp_path):
    home = tmp_path / "store"
    store = Store(home, table_grace_seconds=0)
    saved = _save(store, "films")
    store.delete_workspace(saved.id)
    assert store.workspaces() == [] and [w.id for w in store.trash()] == [saved.id]
    assert saved.models["m"].path.is_file()  # files kept while in the trash
    _save(store, "films", OTHER)  # the name is free again...
    listed = rankscope(home, "workspaces", "trash")
    assert listed.returncode == 0 and saved.id in listed.stdout
    done = rankscope(home, "workspaces", "restore", saved.id)
    assert done.returncode == 0, done.stderr
    assert "films (restored)" in done.stderr  # ...so the restored one gets another
    assert sorted(w.name for w in store.workspaces()) == ["films", "films (restored)"]
    deleted = rankscope(home, "workspaces", "delete", saved.id)
    assert deleted.returncode == 0 and "restore it with" in deleted.stderr
    assert rankscope(home, "workspaces", "restore", "feedfeedfeed").returncode == 2


def test_the_trash_is_purged_after_its_stated_time(tmp_path, monkeypatch):
    store = Store(tmp_path, table_grace_seconds=0)
    saved = _save(store, "films")
    newer = store.replace_model(saved.id, "m", store.put_table("o.csv", OTHER.encode(), "recommendations"))
    store.delete_workspace(newer.id)
    assert store.purge_trash() == []  # (30 days by default)
    monkeypatch.setenv("RANKSCOPE_TRASH_DAYS", "0")
    assert sorted(store.purge_trash()) == sorted([newer.id, saved.id])  # with the version it superseded
    assert store.workspace(saved.id) is None and list((tmp_path / "tables").glob("*.parquet")) == []


def test_a_read_only_store_refuses_every_write_from_every_entry_point(tmp_path, files, catalog_engine):
    home = tmp_path / "store"
    saved = _save(Store(home), "films")
    store = Store(home, read_only=True)
    attempts = [lambda: store.put_table("x.csv", OTHER.encode(), "recommendations"),
                lambda: _save(store, "other"), lambda: store.rename_workspace(saved.id, "new"),
                lambda: store.delete_workspace(saved.id),
                lambda: save_run(store, saved, Dataset.build(dict(saved.models), saved.ground_truth).evaluate_all(
                    Settings(k=2), curves=False))]
    for attempt in attempts:
        with pytest.raises(InputError, match="read-only"):
            attempt()
    assert store.workspaces() == [saved]  # reading works
    done = rankscope(home, "evaluate", "--recommendations", str(files[0]), "--ground-truth", str(files[1]),
                     "--save", "films", RANKSCOPE_READ_ONLY="1")
    assert done.returncode == 2 and "read-only" in done.stderr
    assert rankscope(home, "workspaces", "delete", saved.id, RANKSCOPE_READ_ONLY="1").returncode == 2
    pd.read_csv(files[0]).to_parquet(tmp_path / "recs.parquet")
    pd.read_csv(files[1]).to_parquet(tmp_path / "truth.parquet")
    on_spark = rankscope(home, "evaluate", "--engine", "spark", "--recommendations", str(tmp_path / "recs.parquet"),
                         "--ground-truth", str(tmp_path / "truth.parquet"), "--save", "films",
                         RANKSCOPE_READ_ONLY="1")
    assert on_spark.returncode == 2 and "read-only" in on_spark.stderr  # (before Spark starts: no Java needed)
    if catalog_engine != "sqlite":
        return  # (an older PostgreSQL catalog: tests/store/test_postgresql.py)
    from metrics_core.store import schema

    old = tmp_path / "old"
    old.mkdir()
    connection = sqlite3.connect(old / "catalog.sqlite", isolation_level=None)
    schema.migrate(connection, target=2)
    connection.close()
    with pytest.raises(InputError, match="cannot upgrade it"):
        Store(old, read_only=True)  # (an upgrade is a write: refused, with the way to do it)
    with sqlite3.connect(old / "catalog.sqlite") as connection:
        assert schema.version_of(connection) == 2


# 6. runs made at different settings are not compared


def test_runs_at_different_settings_or_ground_truths_are_not_compared(tmp_path):
    store = Store(tmp_path)
    recs = random_lists(40, 20)
    truth = pd.DataFrame({"user_id": range(40), "item_id": [u % 20 for u in range(40)]})
    models = {"m": store.put_table("r.csv", recs.to_csv(index=False).encode(), "recommendations")}
    saved = store.save_workspace("w", models, store.put_table("t.csv", truth.to_csv(index=False).encode(), "t"),
                                 columns=Columns())
    data = Dataset.build(dict(saved.models), saved.ground_truth)
    k2, k10 = (save_run(store, saved, data.evaluate_all(Settings(k=k), curves=False)) for k in (2, 10))
    exponential = save_run(store, saved, data.evaluate_all(Settings(k=2, gain="exponential"), curves=False))
    with pytest.raises(InputError, match="k 2 vs 10"):
        compare_runs(store, k2.id, k10.id)
    with pytest.raises(InputError, match="gain linear vs exponential"):
        compare_runs(store, k2.id, exponential.id)
    sampled = save_run(store, saved, data.evaluate_all(Settings(k=2, candidates=5), curves=False))
    with pytest.raises(InputError, match=r"candidates \(none\) vs 5 \(a sampled evaluation against a full ranking"):
        compare_runs(store, k2.id, sampled.id)
    other_truth = store.save_workspace("w2", models, store.put_table("t2.csv", truth.iloc[:30].to_csv(
        index=False).encode(), "t"), columns=Columns())
    elsewhere = save_run(store, other_truth, Dataset.build(dict(other_truth.models), other_truth.ground_truth)
                         .evaluate_all(Settings(k=2), curves=False))
    with pytest.raises(InputError, match="another ground truth"):
        compare_runs(store, k2.id, elsewhere.id)
    done = rankscope(tmp_path, "runs", "compare", k2.id, k10.id)
    assert done.returncode == 2 and "k 2 vs 10" in done.stderr and "beats" not in done.stdout


# 9 and 10. the store's own failures


def _a_run(home: Path):
    store = Store(home)
    saved = _save(store, "films")
    data = Dataset.build(dict(saved.models), saved.ground_truth)
    return store, saved, [save_run(store, saved, data.evaluate_all(Settings(k=2), curves=False)) for _ in range(2)]


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_a_run_whose_per_user_file_is_damaged_is_named_with_exit_2(tmp_path, damage):
    _, _, (first, second) = _a_run(tmp_path)
    path = tmp_path / "runs" / f"{second.id}.parquet"
    if damage == "missing":
        path.unlink()
    else:
        path.write_bytes(path.read_bytes()[:40])
    done = rankscope(tmp_path, "runs", "compare", first.id, second.id)
    assert done.returncode == 2 and "internal error" not in done.stderr
    assert f"runs/{second.id}.parquet" in done.stderr and damage.replace("truncated", "damaged") in done.stderr
    checked = rankscope(tmp_path, "store", "check")
    assert checked.returncode == 1 and second.id in checked.stdout


def test_a_write_lock_held_past_the_busy_timeout_is_its_own_message(tmp_path, files, hold_write_lock):
    Store(tmp_path)
    with hold_write_lock(tmp_path):  # another process's long write
        done = rankscope(tmp_path, "evaluate", "--recommendations", str(files[0]), "--ground-truth",
                         str(files[1]), "--save", "films", RANKSCOPE_BUSY_TIMEOUT_MS="300")
    assert done.returncode == 2 and "write lock" in done.stderr and "internal error" not in done.stderr
    assert Store(tmp_path).workspaces() == []


def test_a_damaged_stored_table_is_named_and_saving_the_file_again_repairs_it(tmp_path, files):
    store = Store(tmp_path)
    saved = _save(store, "films")
    stored = saved.models["m"].path
    stored.write_bytes(stored.read_bytes()[:-30])  # truncated on disk
    with pytest.raises(InputError) as error:
        store.verify(store.workspace(saved.id))
    message = str(error.value)
    assert f"tables/{stored.name}" in message and "not at fault" in message and "UTF-8" not in message
    checked = rankscope(tmp_path, "store", "check")
    assert checked.returncode == 1 and stored.name in checked.stdout and "'films'" in checked.stdout
    assert store.put_table("recs.csv", RECS.encode(), "recommendations") == stored.stem  # saved again: repaired
    assert store.verify(store.workspace(saved.id)) and rankscope(tmp_path, "store", "check").returncode == 0
    stored.unlink()
    done = rankscope(tmp_path, "evaluate", "--recommendations", str(files[0]), "--ground-truth", str(files[1]),
                     "--save", "films")
    assert done.returncode == 0, done.stderr  # --save of the same file stores it afresh
    assert stored.is_file()


@pytest.mark.sqlite_only
@pytest.mark.parametrize(("catalog", "expected"), [
    (b"this is not a database at all" * 100, "is damaged"),
    ("truncated", "is damaged"),
])
def test_a_damaged_catalog_says_how_to_repair_it(tmp_path, catalog, expected):
    _a_run(tmp_path)
    path = tmp_path / "catalog.sqlite"
    for extra in ("catalog.sqlite-wal", "catalog.sqlite-shm"):
        (tmp_path / extra).unlink(missing_ok=True)
    path.write_bytes(path.read_bytes()[:2000] if catalog == "truncated" else catalog)
    done = rankscope(tmp_path, "runs", "list")
    assert done.returncode == 2 and expected in done.stderr
    assert "rankscope store check" in done.stderr and "catalog.sqlite.backup" in done.stderr
    assert "RANKSCOPE_HOME to a folder" not in done.stderr
    assert (tmp_path / "catalog.sqlite.backup").is_file()  # the backup to restore from
    checked = rankscope(tmp_path, "store", "check")
    assert checked.returncode == 1 and "damaged" in checked.stdout


def test_stale_temporary_files_are_removed_and_fresh_ones_kept(tmp_path):
    Store(tmp_path)
    stale, fresh = tmp_path / "tables" / ".x.parquet.ab12.tmp", tmp_path / "runs" / ".y.parquet.cd34.tmp"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"half")
    os.utime(stale, (1, 1))
    Store(tmp_path)
    assert not stale.exists() and fresh.exists()


@pytest.fixture
def tiny_disk(tmp_path):
    """A 3 MB tmpfs (root only; skipped otherwise)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)]).returncode != 0:
        pytest.skip("this machine does not allow mounting a tmpfs")
    yield mount
    subprocess.run(["umount", "-l", str(mount)])


def test_a_full_disk_leaves_the_store_as_it_was_and_no_temporary_files(tmp_path, tiny_disk):
    home = tiny_disk / "store"
    saved = _save(Store(home), "films")
    before = sorted(p.name for p in home.rglob("*"))
    big = tmp_path / "big.csv"  # 500,000 random 60-bit ids: incompressible, far beyond the 3 MB disk
    rng = np.random.default_rng(0)
    pd.DataFrame({"user_id": np.repeat(np.arange(50_000), 10), "item_id": rng.integers(0, 2**60, 500_000),
                  "rank": np.tile(np.arange(1, 11), 50_000)}).to_csv(big, index=False)
    done = rankscope(home, "evaluate", "--recommendations", str(big), "--ground-truth", str(big), "--save", "big")
    assert done.returncode == 2 and "is full" in done.stderr and "internal error" not in done.stderr
    assert [w.id for w in Store(home).workspaces()] == [saved.id]
    assert sorted(p.name for p in home.rglob("*") if not p.name.startswith("catalog.sqlite")) == \
        [n for n in before if not n.startswith("catalog.sqlite")]  # no table, run or .tmp file left
    assert not list(home.rglob("*.tmp"))


def test_a_newer_catalog_asks_for_an_upgrade(tmp_path):
    Store(tmp_path)
    set_catalog_version(tmp_path, 99)
    done = rankscope(tmp_path, "runs", "list")
    assert done.returncode == 2 and "upgrade rankscope" in done.stderr


@pytest.mark.sqlite_only
def test_a_catalog_of_version_2_keeps_its_workspaces_tables_and_runs(tmp_path):
    from metrics_core.store import schema

    connection = sqlite3.connect(tmp_path / "catalog.sqlite", isolation_level=None)
    connection.execute("PRAGMA foreign_keys = ON")
    schema.migrate(connection, target=2)
    connection.execute("INSERT INTO tables VALUES ('s1', 'r.csv', 5, '[]', 10, '2026-01-01')")
    connection.execute("INSERT INTO workspaces VALUES ('w1', 'films', '{}', 'f', 3, '2026-01-01', '2026-01-01')")
    connection.execute("INSERT INTO workspace_tables VALUES ('w1', 'ground_truth', '', 's1', 0)")
    connection.close()
    with Store(tmp_path).connect() as connection:
        rows = connection.execute("SELECT id, name, superseded_by, deleted FROM workspaces").fetchall()
        assert [tuple(row) for row in rows] == [("w1", "films", None, None)]
        rows = connection.execute("SELECT workspace_id, sha256 FROM workspace_tables").fetchall()
        assert [tuple(row) for row in rows] == [("w1", "s1")]
        connection.execute("INSERT INTO workspaces (id, name, mapping, fingerprint, created, updated, deleted) "
                           "VALUES ('w2', 'films', '{}', 'g', 'x', 'x', 'x')")  # (a name is unique among live ones)
        with pytest.raises(ConflictError):
            connection.execute("INSERT INTO workspaces (id, name, mapping, fingerprint, created, updated) "
                               "VALUES ('w3', 'films', '{}', 'g', 'x', 'x')")


def test_threads_opening_a_new_store_together_all_open_it(tmp_path):
    """SQLite answers "locked" at once, without waiting, to a connection asking for WAL mode while
    another sets it: eight threads opening a new store together failed about one time in twenty,
    in 2 ms, with a message saying the lock was held for 30 s. Sixty new stores, eight threads each."""
    for attempt in range(60):
        barrier = threading.Barrier(8)

        def open_store(_, home=tmp_path / str(attempt), barrier=barrier):
            barrier.wait()
            return Store(home).home

        with ThreadPoolExecutor(8) as pool:
            assert len(list(pool.map(open_store, range(8)))) == 8


@pytest.mark.sqlite_only
def test_a_store_killed_while_it_makes_its_catalog_leaves_none_behind(tmp_path, monkeypatch):
    """The catalog is made whole under a temporary name, then linked into place: a process that
    dies while making it (here, the schema failing halfway) leaves no catalog without its tables
    (the check called such a one damaged), and the next open makes it."""
    from metrics_core.store import catalog, schema
    from metrics_core.store.check import check_store

    def dies(connection, target=schema.CURRENT):
        connection.execute("CREATE TABLE half (x)")
        raise KeyboardInterrupt  # (as a kill between two statements)

    monkeypatch.setattr(catalog.schema, "migrate", dies)
    with pytest.raises(KeyboardInterrupt):
        Store(tmp_path)
    assert not (tmp_path / "catalog.sqlite").exists()
    monkeypatch.undo()
    Store(tmp_path)
    assert check_store(tmp_path) == []


def test_two_threads_saving_one_new_name_at_once_give_one_workspace(tmp_path):
    barrier = threading.Barrier(8)

    def save(_):
        barrier.wait()
        return _save(Store(tmp_path), "shop", if_exists="replace").id

    with ThreadPoolExecutor(8) as pool:
        ids = set(pool.map(save, range(8)))
    assert len(ids) == 1 and [w.name for w in Store(tmp_path).workspaces()] == ["shop"]


def test_a_save_killed_at_any_moment_leaves_a_store_that_checks_sound(tmp_path):
    """kill -9 of ``evaluate --save`` at several moments of a save: the store always opens, every
    catalog entry's file is there and sound (leftover temporary files aside), and the next save
    of the same name lands."""
    import signal
    import time

    home, big = tmp_path / "store", tmp_path / "big.csv"
    rng = np.random.default_rng(1)
    pd.DataFrame({"user_id": np.repeat(np.arange(60_000), 10), "item_id": rng.integers(0, 5_000, 600_000),
                  "rank": np.tile(np.arange(1, 11), 60_000)}).drop_duplicates(["user_id", "item_id"]).to_csv(
        big, index=False)
    truth = tmp_path / "truth.csv"
    pd.DataFrame({"user_id": np.arange(60_000), "item_id": rng.integers(0, 5_000, 60_000)}).to_csv(truth, index=False)
    args = [sys.executable, "-m", "metrics_core", "evaluate", "--recommendations", f"m={big}", "--ground-truth",
            str(truth), "--save", "shop"]
    env = {**os.environ, "RANKSCOPE_HOME": str(home)}
    for delay in (0.6, 1.2, 1.8, 2.4, 3.0):
        process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        checked = rankscope(home, "store", "check")
        problems = [line for line in checked.stdout.splitlines() if "interrupted write" not in line]
        assert problems == [], problems
        assert rankscope(home, "workspaces", "list").returncode == 0
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert [w.name for w in Store(home).workspaces()] == ["shop"]


def test_a_workspace_runs_include_its_earlier_versions_on_the_command_line_as_in_the_app(tmp_path, files):
    """`runs list --workspace NAME` lists the runs of every version saved under NAME, as the History
    page does, and a rename follows them all."""
    home, (recs, truth) = tmp_path / "store", files
    other = tmp_path / "other.csv"
    other.write_text(OTHER)
    for path in (recs, other):  # two versions of "shop"
        assert rankscope(home, "evaluate", "--recommendations", f"m={path}", "--ground-truth", str(truth),
                         "--save", "shop").returncode == 0
    store = Store(home)
    live = store.named("shop")
    assert len(store.versions(live.id)) == 2
    listed = json.loads(rankscope(home, "runs", "list", "--workspace", "shop", "--format", "json").stdout)
    assert len({row["run"] for row in listed}) == 2
    store.rename_workspace(live.id, "store")
    listed = json.loads(rankscope(home, "runs", "list", "--workspace", "store", "--format", "json").stdout)
    assert len({row["run"] for row in listed}) == 2 and {row["workspace"] for row in listed} == {"store"}


@pytest.mark.parametrize("days", ["-1", "nan", "soon"])
def test_a_purge_age_that_is_not_a_number_of_days_exits_2(tmp_path, days):
    done = rankscope(tmp_path, "workspaces", "purge", "--older-than", days)
    assert done.returncode == 2 and "internal error" not in done.stderr and "--older-than" in done.stderr


def test_a_run_id_another_run_took_is_drawn_again_and_never_overwrites_its_file(tmp_path, monkeypatch):
    """Two machines drawing the same run id: the second run's file is published only under a
    free name, so the first run's values stay; the second takes the next id."""
    from types import SimpleNamespace

    from metrics_core.store import runs

    store = Store(tmp_path)
    saved = _save(store, "films")
    results = Dataset.build(dict(saved.models), saved.ground_truth).evaluate_all(Settings(k=2), curves=False)
    drawn = iter(["aaaaaaaa", "aaaaaaaa", "bbbbbbbb"])
    monkeypatch.setattr(runs, "secrets", SimpleNamespace(token_hex=lambda n: next(drawn)))
    first = save_run(store, saved, results, note="first")
    before = (tmp_path / "runs" / "aaaaaaaa.parquet").read_bytes()
    second = save_run(store, saved, {"m": results["m"]}, note="second")
    assert (first.id, second.id) == ("aaaaaaaa", "bbbbbbbb")
    assert (tmp_path / "runs" / "aaaaaaaa.parquet").read_bytes() == before
    assert [load_run(store, r).note for r in ("aaaaaaaa", "bbbbbbbb")] == ["first", "second"]


def test_a_setting_an_older_run_never_recorded_is_named_so_and_history_compares_runs_made_alike(tmp_path):
    """A run recorded before a setting existed has no record of it: the refusal says so in one
    line (not "(none) vs 0.01" per setting), and the History page's default pair is the newest run
    and the newest earlier one made alike."""
    from metrics_core.store import comparable_pair

    store = Store(tmp_path)
    truth = pd.DataFrame({"user_id": range(40), "item_id": [u % 20 for u in range(40)]})
    models = {"m": store.put_table("r.csv", random_lists(40, 20).to_csv(index=False).encode(), "recommendations")}
    saved = store.save_workspace("w", models, store.put_table("t.csv", truth.to_csv(index=False).encode(), "t"),
                                 columns=Columns())
    data = Dataset.build(dict(saved.models), saved.ground_truth)
    old, k10, alike, newest = (save_run(store, saved, data.evaluate_all(Settings(k=k), curves=False))
                               for k in (2, 10, 2, 2))
    with store.connect() as connection:  # (as an older release recorded it: without two later settings)
        settings = json.loads(connection.execute("SELECT settings FROM runs WHERE id = ?", (old.id,)).fetchone()[0])
        del settings["ee_patience"], settings["dcg_ties"]
        connection.execute("UPDATE runs SET settings = ? WHERE id = ?", (json.dumps(settings), old.id))
    with pytest.raises(InputError, match=rf"run {old.id} \(rankscope [^)]+\) has no record of dcg_ties, ee_patience, "
                                         "settings added after it was made") as refused:
        compare_runs(store, old.id, newest.id)
    assert "(none)" not in str(refused.value)
    assert comparable_pair(store, [old.id, k10.id, alike.id, newest.id]) == (alike.id, newest.id)
    assert comparable_pair(store, [old.id, k10.id, newest.id]) == (old.id, newest.id)  # (none alike: say why)
