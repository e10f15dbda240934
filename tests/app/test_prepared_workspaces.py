"""``rankscope workspaces prepare``: a saved workspace whose kept evaluation no longer applies (an
upgrade of rankscope, or nothing kept) is evaluated ahead, at the settings its bare link opens
at, and then opens from what was kept: nothing read, encoded or evaluated, the same numbers as
the app's own evaluation (issue #43: the first open of a saved workspace in seconds)."""

from __future__ import annotations

import re
import shutil

import pytest
from driving import assert_clean, shown, start
from test_saved_from_cli import saved

from metrics_core import Dataset
from metrics_core.cli import main
from metrics_core.store import encoded


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "store"
    monkeypatch.setenv("RANKSCOPE_HOME", str(home))
    from dashboard import state

    state._store.clear()
    state.CACHE.clear()
    return home


@pytest.fixture
def evaluated(monkeypatch):
    calls = []
    evaluate_all = Dataset.evaluate_all
    monkeypatch.setattr(Dataset, "evaluate_all", lambda *args, **kwargs: calls.append(1) or
                        evaluate_all(*args, **kwargs))
    return calls


def test_a_prepared_workspace_opens_on_its_kept_evaluation_with_the_apps_own_numbers(
        tmp_path, capsys, monkeypatch, home, evaluated):
    from dashboard import state

    monkeypatch.setattr(encoded, "KEEP_MIN_CELLS", 1)  # (its encoded tables are kept too, as a large one's are)
    workspace, linked = saved(tmp_path, capsys, "--k", "5")  # (its printed link opens at K = 5, the bare one at 10)
    shutil.rmtree(home / "results")  # (as after an upgrade: what was kept names another release)
    shutil.rmtree(home / "encoded")
    evaluated.clear()

    assert main(["workspaces", "prepare", workspace]) == 0
    said = capsys.readouterr().err
    assert f"prepared; open it in the app: http://localhost:8501/?ws={workspace}" in said
    assert evaluated == [1, 1] and len(list((home / "results").glob("*.json"))) == 2  # (both views)
    assert len(list((home / "encoded").glob("*/manifest.json"))) == 1

    for settings in ({}, linked):  # the bare link, then the one `evaluate --save` printed
        opened = start(page=None, ws=workspace, **settings)
        assert_clean(opened)
        overview = opened.switch_page("views/overview.py").run()
        assert_clean(overview)
        assert any(f"NDCG@{settings.get('k', 10)}" in shown(m.value) for m in overview.markdown)
    assert evaluated == [1, 1]  # (read from what was kept)
    kept = [m.value for m in overview.markdown]

    state.CACHE.clear()
    shutil.rmtree(home / "results")
    again = start(page=None, ws=workspace, **linked).switch_page("views/overview.py").run()
    assert_clean(again)
    assert evaluated == [1, 1, 1]  # (the app's own evaluation at the same settings)
    assert [m.value for m in again.markdown] == kept


def test_prepare_skips_what_is_kept_and_force_evaluates_again(tmp_path, capsys, home, evaluated):
    workspace, _ = saved(tmp_path, capsys)  # (at the defaults: the command kept what the bare link opens)
    evaluated.clear()
    assert main(["workspaces", "prepare", workspace]) == 0
    assert "was already prepared" in capsys.readouterr().err and evaluated == []
    assert main(["workspaces", "prepare", "--force", "from the shell"]) == 0  # (by name too)
    assert "prepared;" in capsys.readouterr().err and evaluated == [1]


def test_prepare_all_goes_on_past_a_workspace_it_cannot_read_and_names_it(tmp_path, capsys, home, evaluated):
    from metrics_core.store import Store

    good, _ = saved(tmp_path, capsys, "--k", "5")
    (tmp_path / "truth.csv").write_text("user_id,item_id\n1,2\n3,4\n")
    assert main(["evaluate", "--recommendations", f"svd={tmp_path / 'svd.csv'}", "--ground-truth",
                 str(tmp_path / "truth.csv"), "--save", "damaged later", "--k", "5"]) == 0
    damaged = Store().named("damaged later")
    damaged.ground_truth.path.write_bytes(b"PAR1 not a Parquet file")  # (a disk fault, a hand edit)
    capsys.readouterr()
    evaluated.clear()
    assert main(["workspaces", "prepare", "--all"]) == 1
    said = capsys.readouterr().err
    assert f"'damaged later' ({damaged.id}) was not prepared: " in said
    assert "is damaged (its SHA-256 is not the one it was stored with): the file you uploaded is not at fault" \
        in said  # (the store's copy named as the app names it when it opens the workspace)
    assert f"'from the shell' ({good}) prepared" in said and evaluated == [1]


def test_prepare_refuses_what_it_cannot_do(tmp_path, capsys, home, monkeypatch):
    workspace, _ = saved(tmp_path, capsys)
    assert main(["workspaces", "prepare"]) == 2
    assert "name the workspaces to prepare, or give --all" in capsys.readouterr().err
    assert main(["workspaces", "prepare", workspace, "--all"]) == 2
    capsys.readouterr()
    assert main(["workspaces", "prepare", "no such workspace"]) == 2
    assert "no live workspace is named or numbered 'no such workspace'" in capsys.readouterr().err
    assert main(["workspaces", "delete", workspace]) == 0
    assert main(["workspaces", "prepare", workspace]) == 2
    assert re.search(r"workspaces restore ID", capsys.readouterr().err)
    assert main(["workspaces", "restore", workspace]) == 0
    monkeypatch.setenv("RANKSCOPE_READ_ONLY", "1")
    assert main(["workspaces", "prepare", workspace]) == 2
    assert "read-only" in capsys.readouterr().err.lower()
