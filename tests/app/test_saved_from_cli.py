"""A workspace saved from the command line (``evaluate --save``) opens in the app from the link
it prints, at the command's settings, from the evaluation the command kept: no table is read and
nothing evaluated before the Summary shows, and the numbers equal the app's own evaluation
(issue #43: large data goes through the command line, and its first open is the kept one)."""

from __future__ import annotations

import re
import shutil
import time
from urllib.parse import parse_qsl, urlparse

import numpy as np
import pandas as pd
from driving import assert_clean, shown, start

from dashboard.state import Key
from metrics_core import Dataset
from metrics_core.cli import main


def write_files(folder):
    rng = np.random.default_rng(5)
    users = np.repeat(np.arange(200), 12)
    for name in ("svd", "popular"):
        pd.DataFrame({"user_id": users, "item_id": rng.integers(0, 80, len(users)), "score": rng.random(len(users))}
                     ).drop_duplicates(["user_id", "item_id"]).to_csv(folder / f"{name}.csv", index=False)
    pd.DataFrame({"user_id": np.repeat(np.arange(200), 4), "item_id": rng.integers(0, 80, 800)}
                 ).drop_duplicates().to_csv(folder / "truth.csv", index=False)


def saved(tmp_path, capsys, *options: str) -> tuple[str, dict[str, str]]:
    write_files(tmp_path)
    code = main(["evaluate", "--recommendations", f"svd={tmp_path / 'svd.csv'}", "--recommendations",
                 f"popular={tmp_path / 'popular.csv'}", "--ground-truth", str(tmp_path / "truth.csv"),
                 "--save", "from the shell", *options])
    assert code == 0
    link = re.search(r"open it in the app: (\S+)", capsys.readouterr().err).group(1)
    query = dict(parse_qsl(urlparse(link).query))
    return query.pop("ws"), query


def test_the_printed_link_opens_on_the_kept_evaluation_at_the_commands_settings(tmp_path, capsys, monkeypatch):
    home = tmp_path / "store"
    monkeypatch.setenv("RANKSCOPE_HOME", str(home))
    from dashboard import state

    state._store.clear()
    state.CACHE.clear()
    workspace, settings = saved(tmp_path, capsys, "--k", "5", "--gain", "exponential")
    assert settings == {"k": "5", "gain": "exponential"}
    assert len(list((home / "results").glob("*.json"))) == 1
    evaluated = []
    evaluate_all = Dataset.evaluate_all
    monkeypatch.setattr(Dataset, "evaluate_all", lambda *args, **kwargs: evaluated.append(1) or
                        evaluate_all(*args, **kwargs))
    opened = start(page=None, ws=workspace, **settings)
    assert_clean(opened)
    assert evaluated == []
    kept = ([m.value for m in opened.markdown], opened.dataframe[0].value)
    assert any("NDCG@5" in shown(text) for text in kept[0])
    overview = opened.switch_page("views/overview.py").run()
    assert_clean(overview)
    assert evaluated == [] and any("NDCG@5" in shown(m.value) for m in overview.markdown)
    overview.toggle(key=Key.CARD_INTERVALS).set_value(False).run()
    overview.slider(key="k").set_value(3).run()  # a new K: read from the command's curves, beyond-accuracy ones too
    assert_clean(overview)
    texts = [shown(m.value) for m in overview.markdown]
    assert evaluated == [] and any("NDCG@3" in t for t in texts) and any("Personalization@3" in t for t in texts)

    state.CACHE.clear()
    shutil.rmtree(home / "results")  # the app's own evaluation at the same settings
    again = start(page=None, ws=workspace, **settings)
    assert_clean(again)
    assert evaluated == [1]
    assert [m.value for m in again.markdown] == kept[0] and again.dataframe[0].value.equals(kept[1])
    deadline = time.monotonic() + 30
    while not list((home / "results").glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.1)  # (the app keeps its own too, under the same name the command used)
    assert len(list((home / "results").glob("*.json"))) == 1


def test_a_setting_the_app_cannot_set_keeps_nothing_and_says_so(tmp_path, capsys, monkeypatch):
    home = tmp_path / "store"
    monkeypatch.setenv("RANKSCOPE_HOME", str(home))
    write_files(tmp_path)
    code = main(["evaluate", "--recommendations", str(tmp_path / "svd.csv"), "--ground-truth",
                 str(tmp_path / "truth.csv"), "--save", "ideal", "--ndcg-ideal", "all_relevant"])
    assert code == 0
    assert "the app opens it at its own settings" in capsys.readouterr().err
    assert not list((home / "results").glob("*.json"))


def test_the_command_keeps_a_large_dataset_so_the_link_reads_no_table(tmp_path, capsys, monkeypatch):
    """Above the size worth keeping, ``--save`` also keeps the encoded dataset (every score, and
    their counts per position for the Scores page): the printed link opens the pages that need the
    tables without reading one or counting a score."""
    home = tmp_path / "store"
    monkeypatch.setenv("RANKSCOPE_HOME", str(home))
    from dashboard import state
    from dashboard.workspace import Workspace
    from metrics_core.metrics import scores
    from metrics_core.store import encoded

    monkeypatch.setattr(encoded, "KEEP_MIN_CELLS", 0)
    state._store.clear()
    state.CACHE.clear()
    workspace, settings = saved(tmp_path, capsys)
    assert settings == {} and len(list((home / "encoded").glob("*/manifest.json"))) == 1
    reads, counts = [], []
    build = Workspace.build
    monkeypatch.setattr(Workspace, "build", lambda *args, **kwargs: reads.append(1) or build(*args, **kwargs))
    count = scores.place_histograms
    monkeypatch.setattr(scores, "place_histograms", lambda *args, **kwargs: counts.append(1) or count(*args, **kwargs))
    opened = start(page="views/scores.py", ws=workspace)
    assert_clean(opened)
    for page in ("views/popularity.py", "views/cases.py", "views/users.py"):
        opened.switch_page(page).run()
        assert_clean(opened)
    assert reads == [] and counts == []
