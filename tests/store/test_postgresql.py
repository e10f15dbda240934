"""What only a PostgreSQL catalog has: writers on many processes (as on many machines) sharing one
catalog, the migration of a SQLite catalog into it, and its own failures (a server that cannot
be reached, a URL of another kind, an empty catalog opened read-only). The rest of the store's
suite runs on both engines (conftest.py)."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metrics_core import Columns, InputError, Settings
from metrics_core.store import Store
from metrics_core.store.database import SQLITE
from metrics_core.store.runs import RunModel, list_runs, load_run, record_run

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.postgresql_only

TRUTH = "user_id,item_id\n1,a\n2,a\n3,c\n"
WRITERS, RUNS_EACH = 20, 50


def rankscope(home, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metrics_core", *args], capture_output=True, text=True, timeout=180,
                          env={**os.environ, "RANKSCOPE_HOME": str(home), **env})


def _recs(version: int) -> bytes:
    return f"user_id,item_id,rank\n1,a,1\n2,b,1\n3,c,{1 + version % 3}\n".encode()


def _write_runs(home: str, writer: int, ready) -> None:
    """One writer (a machine): every run it records follows a save of the shared workspace, a
    new version of it every fifth run."""
    ready.wait()
    store = Store(home)
    truth = store.put_table("truth.csv", TRUTH.encode(), "ground truth")
    per_user = pd.DataFrame({"ndcg": [0.5, 1.0, 0.0]}, index=pd.Index(["1", "2", "3"], name="user"))
    for run in range(RUNS_EACH):
        if run % 5 == 0:
            model = store.put_table(f"w{writer}r{run}.csv", _recs(writer * RUNS_EACH + run), "recommendations")
            saved = store.save_workspace("shared", {"m": model}, truth, columns=Columns(), user_count=3,
                                         if_exists="replace")
        record_run(store, saved.id, saved.name, saved.fingerprint, Settings(k=3),
                   [RunModel("m", {"ndcg": 0.5}, {}, {"evaluated": 3}, per_user)], note=f"{writer}:{run}")


def test_twenty_writers_saving_one_workspace_and_a_thousand_runs_lose_nothing(tmp_path):
    Store(tmp_path)
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    workers = [context.Process(target=_write_runs, args=(str(tmp_path), w, ready)) for w in range(WRITERS)]
    for worker in workers:
        worker.start()
    ready.set()
    for worker in workers:
        worker.join(300)
    assert [w.exitcode for w in workers] == [0] * WRITERS
    store = Store(tmp_path)
    with store.connect() as connection:
        runs = connection.execute("SELECT id, note, workspace_id, per_user FROM runs").fetchall()
        ids = {row["id"] for row in connection.execute("SELECT id FROM workspaces")}
    assert len(runs) == WRITERS * RUNS_EACH and len({row["id"] for row in runs}) == len(runs)
    assert sorted(row["note"] for row in runs) == sorted(f"{w}:{r}" for w in range(WRITERS) for r in range(RUNS_EACH))
    assert all(row["workspace_id"] in ids for row in runs), "every run's workspace version is kept"
    assert all((tmp_path / "runs" / row["per_user"]).is_file() for row in runs)
    assert len(list((tmp_path / "runs").glob("*.parquet"))) == len(runs), "no run's file overwritten"
    live = store.workspaces()
    assert [w.name for w in live] == ["shared"], "one live workspace under the name"
    assert len(store.versions(live[0].id)) == len(ids), "every version in one chain"
    assert len(list_runs(store, "shared")) == len(runs), "the runs of every version are the workspace's"
    assert load_run(store, runs[0]["id"]).models["m"]["metrics"] == {"ndcg": 0.5}


def _sqlite_store_with_runs(home) -> Store:
    from metrics_core import Dataset
    from metrics_core.store import save_run

    store = Store(home, catalog=SQLITE)
    rng = np.random.default_rng(3)
    truth = store.put_table("truth.csv", TRUTH.encode(), "ground truth")
    for name in ("films", "books"):
        model = store.put_table(f"{name}.csv", _recs(int(rng.integers(3))), "recommendations")
        saved = store.save_workspace(name, {"m": model}, truth, columns=Columns(), user_count=3)
        for k in (1, 2):
            save_run(store, saved, Dataset.build(dict(saved.models), saved.ground_truth).evaluate_all(
                Settings(k=k), curves=False), note=f"{name} at {k}")
    store.delete_workspace(store.named("books").id)  # (the trash is copied too)
    return store


def test_migrate_copies_a_sqlite_catalog_into_postgresql_with_every_entry_point_agreeing(tmp_path):
    url = os.environ.pop("RANKSCOPE_CATALOG")  # (the store starts on SQLite; restored by monkeypatch)
    _sqlite_store_with_runs(tmp_path)
    listed = {what: rankscope(tmp_path, *what.split(), "--format", "json").stdout
              for what in ("workspaces list", "workspaces trash", "runs list")}
    moved = rankscope(tmp_path, "store", "migrate", "--to", url)
    assert moved.returncode == 0, moved.stderr
    assert "copied 2 workspace(s)" in moved.stderr and "4 run(s)" in moved.stderr
    assert "RANKSCOPE_CATALOG" in moved.stderr
    on_postgresql = {what: rankscope(tmp_path, *what.split(), "--format", "json", RANKSCOPE_CATALOG=url).stdout
                     for what in listed}
    assert on_postgresql == listed and json.loads(listed["runs list"])
    assert rankscope(tmp_path, "store", "check", RANKSCOPE_CATALOG=url).returncode == 0
    again = rankscope(tmp_path, "store", "migrate", "--to", url)
    assert again.returncode == 2 and "not empty" in again.stderr and "nothing was copied" in again.stderr
    store = Store(tmp_path, catalog=url)
    assert [w.name for w in store.trash()] == ["books"] and store.restore_workspace(store.trash()[0].id).live
    (tmp_path / "runs" / f"{load_run(store, list_runs(store)['run'].iloc[0]).id}.parquet").unlink()
    checked = rankscope(tmp_path, "store", "check", RANKSCOPE_CATALOG=url)
    assert checked.returncode == 1 and "missing" in checked.stdout


def test_an_unreachable_server_and_a_foreign_url_are_named_with_the_fix(tmp_path):
    unreachable = "postgresql://rankscope:s3cret@127.0.0.1:1/rankscope"
    done = rankscope(tmp_path, "workspaces", "list", RANKSCOPE_CATALOG=unreachable)
    assert done.returncode == 2 and "cannot use the catalog database" in done.stderr
    assert "RANKSCOPE_CATALOG" in done.stderr and "s3cret" not in done.stderr and "Traceback" not in done.stderr
    checked = rankscope(tmp_path, "store", "check", RANKSCOPE_CATALOG=unreachable)
    assert checked.returncode == 1 and "cannot be read" in checked.stdout and "s3cret" not in checked.stdout
    in_query = rankscope(tmp_path, "runs", "list",
                         RANKSCOPE_CATALOG="postgresql://rankscope@127.0.0.1:1/rankscope?password=s3cret")
    assert in_query.returncode == 2 and "s3cret" not in in_query.stderr and "password=***" in in_query.stderr
    foreign = rankscope(tmp_path, "runs", "list", RANKSCOPE_CATALOG="mysql://me@db/rankscope")
    assert foreign.returncode == 2 and "not a catalog URL" in foreign.stderr


def test_an_empty_catalog_opened_read_only_says_how_to_make_it(tmp_path):
    with pytest.raises(InputError, match="cannot upgrade it"):
        Store(tmp_path, read_only=True)
    Store(tmp_path)
    assert Store(tmp_path, read_only=True).workspaces() == []


def test_the_app_saves_and_reopens_a_workspace_from_the_postgresql_catalog(tmp_path):
    """The app's Data page saves into the PostgreSQL catalog; the link opens it in a new session,
    and the History page records a run there."""
    from streamlit.testing.v1 import AppTest

    app = str(ROOT / "dashboard" / "app.py")
    at = AppTest.from_file(app, default_timeout=120)
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_recs_0").set_value([("model_a.csv", _recs(0), "text/csv")])
    at.file_uploader(key="upload_truth_0").set_value(("truth.csv", TRUTH.encode(), "text/csv"))
    at.run()
    next(t for t in at.text_input if t.label == "Save as workspace").set_value("team ranker")
    at.button(key="check_and_save").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    workspace_id = at.query_params["ws"]
    store = Store(tmp_path / "elsewhere")  # (the catalog lists it whichever home asks)
    assert store.catalog.kind == "postgresql" and store.workspace(workspace_id).name == "team ranker"
    opened = AppTest.from_file(app, default_timeout=120)
    opened.query_params["ws"] = workspace_id
    opened.switch_page("views/history.py").run()
    opened.button(key=next(b.key for b in opened.button if b.label == "Record run")).click().run()
    assert not opened.exception and not opened.error
    assert list_runs(Store(), "team ranker")["workspace_id"].tolist() == [workspace_id]


def test_a_read_only_server_needs_no_more_than_select_on_the_catalog(tmp_path):
    """A demo server (RANKSCOPE_READ_ONLY=1) connected as a role that may only read the catalog's
    tables opens and lists workspaces; the database itself refuses that role any write."""
    import psycopg

    from metrics_core.store.move import copy_catalog

    url = os.environ["RANKSCOPE_CATALOG"]
    copy_catalog(_sqlite_store_with_runs(tmp_path), Store(tmp_path, catalog=url))
    schema_name = url.rsplit("%3D", 1)[1]
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("DO $$ BEGIN CREATE ROLE reader LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        admin.execute(f"GRANT USAGE ON SCHEMA {schema_name} TO reader")
        admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema_name} TO reader")
    reader_url = url.replace("rankscope@", "reader@", 1)
    store = Store(tmp_path, catalog=reader_url, read_only=True)
    assert [w.name for w in store.workspaces()] == ["films"] and len(list_runs(store)) == 4
    with pytest.raises(psycopg.errors.InsufficientPrivilege), psycopg.connect(reader_url) as reader:
        reader.execute("DELETE FROM workspaces")


def test_a_store_reuses_its_connection_and_opens_another_after_the_server_drops_it(tmp_path, monkeypatch):
    """Listing workspaces again and again opens no new connection; one the server closed (a
    restart) is found when next used after a pause, and replaced without an error."""
    import psycopg

    from metrics_core.store import database

    real, opened = psycopg.connect, []
    monkeypatch.setattr(psycopg, "connect", lambda *a, **k: opened.append(1) or real(*a, **k))
    store = Store(tmp_path)
    truth = store.put_table("truth.csv", TRUTH.encode(), "ground truth")
    for name in ("films", "books", "songs"):
        store.save_workspace(name, {"m": store.put_table(f"{name}.csv", _recs(len(name)), "recs")}, truth,
                             columns=Columns())
    before = len(opened)
    for _ in range(10):
        assert len(store.workspaces()) == 3
    assert len(opened) == before, "one connection per thread, reused"
    pid = store.catalog._local.raw.info.backend_pid
    with real(os.environ["RANKSCOPE_CATALOG"], autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    monkeypatch.setattr(database, "IDLE_CHECK_SECONDS", 0.0)  # (as after a pause)
    assert len(store.workspaces()) == 3 and len(opened) == before + 1
