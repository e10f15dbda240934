"""Saved workspaces and runs in the app: upload and save, reopen from the link (a reload, a
second browser, a restarted server), rename, delete, add a model, the upload summary, the
History page, and every page choice in the URL."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from driving import assert_clean, shown, start
from streamlit.testing.v1 import AppTest

from dashboard import state
from dashboard.glossary import label
from metrics_core.store import Store, list_runs, run_labels

RECS = b"user,item,pos\n1,a,1\n1,b,2\n2,a,1\n2,c,2\n3,c,1\n3,b,2\n"
TRUTH = b"user,item,stars\n1,b,5\n2,c,4\n3,c,5\n"


def restart_server() -> None:
    """What a restart loses: every cached dataset and evaluation, and the open store."""
    state.CACHE.clear()
    state._store.clear()


def upload_and_save(name: str = "shop", recs: bytes = RECS, truth: bytes = TRUTH) -> AppTest:
    at = start()
    at.switch_page("views/data.py").run()
    assert_clean(at)
    at.file_uploader(key="upload_recs_0").set_value([("model_a.csv", recs, "text/csv")])
    at.file_uploader(key="upload_truth_0").set_value(("truth.csv", truth, "text/csv"))
    at.run()
    next(t for t in at.text_input if t.label == "Save as workspace").set_value(name)
    at.number_input(key="threshold_stars").set_value(4.0)
    at.button(key="check_and_save").click().run()
    assert_clean(at)
    return at


def cards_of(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_a_saved_workspace_reopens_from_its_link_after_reload_and_restart():
    at = upload_and_save()
    assert at.success and "Saved and loaded 1 model" in at.success[0].value
    workspace_id = at.query_params["ws"]
    saved = Store().workspace(workspace_id)
    assert saved.name == "shop" and saved.user_count == 3
    at.switch_page("views/overview.py").run()
    assert_clean(at)
    cards = cards_of(at)
    assert cards[label("precision", 2)] == "0.5000"
    again = start(ws=workspace_id)  # a reload, or a colleague opening the link: a new session
    assert_clean(again)
    assert cards_of(again) == cards and "shop" in again.sidebar.markdown[0].value
    restart_server()
    after_restart = start(ws=workspace_id)
    assert_clean(after_restart)
    assert cards_of(after_restart) == cards


def test_the_load_report_stays_while_its_workspace_is_open_and_goes_with_it():
    """A rerun right after the save (any widget, a link update) must not take the report away;
    opening another workspace does."""
    at = upload_and_save()
    at.run()
    assert at.success and "Saved and loaded 1 model" in at.success[0].value
    assert any(h.value == "Validation report" for h in at.subheader)
    at.button(key=next(b.key for b in at.button if b.label == "Back to the demo workspace")).click().run()
    assert_clean(at)
    assert not any("Saved and loaded" in s.value for s in at.success)


def test_a_link_to_a_deleted_workspace_says_so_offers_the_trash_and_never_shows_the_demo():
    at = upload_and_save()
    workspace_id = at.query_params["ws"]
    Store().delete_workspace(workspace_id)
    trashed = start(ws=workspace_id)
    assert not trashed.exception
    assert trashed.error and "moved to the trash" in shown(trashed.error[0].value) and "shop" in trashed.error[0].value
    assert not trashed.metric, "no numbers of another workspace"
    trashed.button(key="restore_linked").click().run()
    assert_clean(trashed)
    assert trashed.metric and [w.id for w in Store().workspaces()] == [workspace_id]
    Store().delete_workspace(workspace_id)
    Store().purge_trash(older_than_days=0)
    gone = start(ws=workspace_id)
    assert gone.error and workspace_id in gone.error[0].value and "not in the store" in gone.error[0].value
    assert not gone.metric
    gone.switch_page("views/data.py").run()
    assert gone.error and workspace_id in gone.error[0].value


def test_the_same_file_uploaded_twice_is_stored_once():
    upload_and_save("first")
    upload_and_save("second")
    home = Store().home
    assert len(list((home / "tables").glob("*.parquet"))) == 2  # recommendations and ground truth
    assert sorted(w.name for w in Store().workspaces()) == ["first", "second"]


def test_rename_delete_and_open_from_the_saved_list():
    upload_and_save("first")
    at = upload_and_save("second")
    ids = {w.name: w.id for w in Store().workspaces()}
    at.selectbox(key="saved_choice").set_value(ids["first"]).run()
    at.text_input(key=f"rename_{ids['first']}").set_value("first, renamed")
    at.button(key="rename_confirm").click().run()
    assert_clean(at)
    assert Store().workspace(ids["first"]).name == "first, renamed"
    at.selectbox(key="saved_choice").set_value(ids["second"]).run()
    at.button(key="delete_confirm").click().run()
    assert_clean(at)
    assert Store().workspace(ids["second"]).deleted and [w.id for w in Store().trash()] == [ids["second"]]
    assert "Demo workspace" in at.markdown[0].value  # the open workspace was deleted: back to the demo
    at.selectbox(key="saved_choice").set_value(ids["first"]).run()
    next(b for b in at.button if b.label == "Open").click().run()
    assert at.query_params["ws"] == ids["first"] and "first, renamed" in shown(at.markdown[0].value)


def test_a_model_is_added_to_an_open_workspace_without_uploading_the_others():
    at = upload_and_save()
    workspace_id = at.query_params["ws"]
    at.file_uploader(key="replace_0").set_value(("model_b.csv", RECS.replace(b"3,c,1", b"3,a,1"), "text/csv"))
    at.run()
    next(b for b in at.button if b.label == "Add to the workspace").click().run()
    assert_clean(at)
    saved = Store().latest(workspace_id)
    assert list(saved.models) == ["model_a", "model_b"] and at.query_params["ws"] == saved.id != workspace_id
    assert at.success and "new version of shop" in at.success[0].value
    assert list(Store().workspace(workspace_id).models) == ["model_a"]  # the old link keeps its files
    old = start(ws=workspace_id)
    assert_clean(old)
    assert old.info and "A newer version" in old.info[0].value
    old.button(key="open_newest").click().run()
    assert old.query_params["ws"] == saved.id
    at.switch_page("views/compare.py").run()
    assert_clean(at)


def test_replacing_a_model_asks_first_and_says_what_changed():
    at = upload_and_save()
    workspace_id = at.query_params["ws"]
    at.file_uploader(key="replace_0").set_value(("svd_v2.csv", RECS.replace(b"3,c,1", b"3,a,1"), "text/csv"))
    at.run()
    at.selectbox(key="replace_target").set_value("model_a").run()
    button = next(b for b in at.button if b.label == "Replace model_a")
    assert button.disabled  # (until the replacement is confirmed)
    at.checkbox(key="replace_confirmed_0").check().run()
    next(b for b in at.button if b.label == "Replace model_a").click().run()
    assert_clean(at)
    message = shown(at.success[0].value)
    assert message.startswith("Replaced model_a (") and "→ svd_v2.csv)" in message and "new version of shop" in message
    assert Store().latest(workspace_id).id != workspace_id


def test_the_upload_summary_counts_and_warns_before_evaluating():
    scores_like_ranks = b"user,item,score\n1,a,1\n1,b,2\n2,x,1\n2,y,2\n"
    at = start()
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_recs_0").set_value([("ranked.csv", scores_like_ranks, "text/csv")])
    at.file_uploader(key="upload_truth_0").set_value(("truth.csv", b"user,item\n1,q\n2,r\n", "text/csv"))
    at.run()
    assert not at.exception
    summary = at.dataframe[-1].value
    assert summary.loc["ranked", "rows"] == "4" and summary.loc["ranked", "users"] == "2"
    assert summary.loc["ranked", "list length (min / median / max)"] == "2 / 2 / 2"
    warnings = shown(" ".join(w.value for w in at.warning))
    assert "looks like a rank" in warnings and "0.00% of the recommended items" in warnings
    assert any("sample list (user 1): b, a" in shown(c.value) for c in at.caption)


def test_history_records_runs_charts_them_and_compares_two():
    at = upload_and_save()
    at.switch_page("views/history.py").run()
    assert_clean(at)
    at.text_input(key="run_note").set_value("first")
    next(b for b in at.button if b.label == "Record run").click().run()
    assert at.success and "Recorded run" in at.success[0].value
    for k in (1, 2):  # a run at another K, then one at the first's K
        at.switch_page("views/overview.py").run()
        at.slider(key="k").set_value(k).run()
        at.switch_page("views/history.py").run()
        next(b for b in at.button if b.label == "Record run").click().run()
        assert not at.exception
    runs = list_runs(Store())
    assert list(runs["note"]) == ["first", "", ""] and list(runs["k"]) == [2, 1, 2]
    assert at.get("vega_lite_chart") or at.get("arrow_vega_lite_chart"), "the history chart"
    _, other_k, third = runs["run"]
    first_name, _, third_name = run_labels(runs)
    assert first_name == "first" and third_name.endswith(" · run 3")  # (named by the note, else by number)
    at.selectbox(key="history_second").set_value(third).run()
    assert_clean(at)
    assert any(f"{third_name} · model_a ties with first · model_a on ndcg" in shown(m.value) for m in at.markdown), \
        "the two runs at one K compared in words, by their names"
    assert at.text_input(key="run_note").value == ""  # (emptied once a run is recorded)
    at.selectbox(key="history_second").set_value(other_k).run()
    assert not at.exception and at.error and "k 2 vs 1" in shown(at.error[0].value)
    assert not any("trails" in m.value or "beats" in m.value for m in at.markdown), "unlike runs never compared"


def test_two_runs_are_compared_once_however_often_the_page_runs(monkeypatch):
    """Comparing two runs of 1M users takes seconds: the History page compares a pair once and
    reads it back on every later run of the page (a run never changes)."""
    import metrics_core.store

    compared = []
    real = metrics_core.store.compare_runs
    monkeypatch.setattr(metrics_core.store, "compare_runs",
                        lambda store, first, second, *rest, **named: compared.append((first, second)) or
                        real(store, first, second, *rest, **named))
    at = upload_and_save()
    at.switch_page("views/history.py").run()
    for _ in range(2):
        next(b for b in at.button if b.label == "Record run").click().run()
    assert_clean(at)
    assert len(compared) == 1 and any(" on ndcg" in shown(m.value) for m in at.markdown)
    for page in ("views/overview.py", "views/history.py", "views/history.py"):
        at.switch_page(page).run()
    assert_clean(at)
    assert len(compared) == 1 and any(" on ndcg" in shown(m.value) for m in at.markdown), "read back, not again"


def test_recording_a_run_of_a_workspace_deleted_meanwhile_is_a_message():
    at = upload_and_save()
    at.switch_page("views/history.py").run()
    Store().delete_workspace(at.query_params["ws"])  # from another tab or the command line
    next(b for b in at.button if b.label == "Record run").click().run()
    assert not at.exception
    assert at.error and "no longer in the store" in at.error[0].value
    assert list_runs(Store()).empty


def test_every_page_choice_survives_page_switches_and_is_in_the_url():
    at = start()
    at.switch_page("views/users.py").run()
    metric_box = at.selectbox(key="users_metric")
    other = "recall" if metric_box.value != "recall" else "precision"
    metric_box.set_value(other).run()
    at.session_state["compare_tab"] = "Is the difference real?"
    at.switch_page("views/compare.py").run()
    at.radio(key="test").set_value("t").run()
    at.sidebar.number_input(key="beta").set_value(2.0).run()
    at.switch_page("views/overview.py").run()
    at.switch_page("views/users.py").run()
    assert at.selectbox(key="users_metric").value == other
    assert at.query_params["test"] == "t" and at.query_params["beta"] == "2.0"
    assert at.query_params["users_metric"] == str(other)
    shared = start(**dict(at.query_params))
    shared.switch_page("views/compare.py").run()
    assert_clean(shared)
    assert shared.radio(key="test").value == "t" and shared.session_state["beta"] == 2.0


@pytest.mark.parametrize("seed", [0])
def test_runs_recorded_from_the_app_equal_the_library(seed):
    rng = np.random.default_rng(seed)
    recs = pd.DataFrame({"user": np.repeat(np.arange(30), 4), "item": rng.integers(0, 20, 120),
                         "pos": np.tile(np.arange(1, 5), 30)}).drop_duplicates(["user", "item"])
    truth = pd.DataFrame({"user": np.arange(30), "item": rng.integers(0, 20, 30), "stars": 5})
    at = upload_and_save("random", recs.to_csv(index=False).encode(), truth.to_csv(index=False).encode())
    at.switch_page("views/history.py").run()
    next(b for b in at.button if b.label == "Record run").click().run()
    from metrics_core import Columns, evaluate

    expected = evaluate(recs, truth, k=4, columns=Columns(user="user", item="item", rank="pos", score="__no_score__",
                                                         relevance="stars", threshold=4))
    run = list_runs(Store()).iloc[0]
    assert run["ndcg"] == pytest.approx(expected.metrics["ndcg"], abs=1e-12)


def test_saving_under_a_taken_name_never_replaces_silently_and_the_old_link_keeps_its_data():
    first = upload_and_save("shop")
    first_id = first.query_params["ws"]
    first.switch_page("views/overview.py").run()
    first_cards = cards_of(first)
    other = RECS.replace(b"3,c,1", b"3,a,1")
    at = start()
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_recs_0").set_value([("model_a.csv", other, "text/csv")])
    at.file_uploader(key="upload_truth_0").set_value(("truth.csv", TRUTH, "text/csv"))
    at.run()
    assert next(t for t in at.text_input if t.label == "Save as workspace").value == "model_a upload"
    next(t for t in at.text_input if t.label == "Save as workspace").set_value("shop").run()
    assert any("exists already" in shown(w.value) for w in at.warning)
    assert at.radio(key="if_exists_0").value == "version"  # the default never replaces
    at.number_input(key="threshold_stars").set_value(4.0)
    at.button(key="check_and_save").click().run()
    assert_clean(at)
    assert sorted(w.name for w in Store().workspaces()) == ["shop", "shop v2"]
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_recs_1").set_value([("model_a.csv", other, "text/csv")])
    at.file_uploader(key="upload_truth_1").set_value(("truth.csv", TRUTH, "text/csv"))
    at.run()
    next(t for t in at.text_input if t.label == "Save as workspace").set_value("shop").run()
    at.radio(key="if_exists_1").set_value("replace")
    at.number_input(key="threshold_stars").set_value(4.0)
    at.button(key="check_and_save").click().run()
    assert_clean(at)
    replaced = Store().named("shop")
    assert replaced.id != first_id and at.query_params["ws"] == replaced.id
    old = start(ws=first_id)  # the colleague's link: the colleague's files, and a word about the new version
    assert_clean(old)
    assert cards_of(old) == first_cards and old.info and "A newer version" in shown(old.info[0].value)


def test_the_threshold_is_proposed_from_the_grades_scale_and_a_change_is_checked():
    """Half-star ratings propose 4 (the default 1 made nearly every rated item relevant), with the
    distribution shown; another threshold is allowed with a warning giving its share of rows."""
    half_stars = b"user,item,rating\n1,b,4.5\n1,a,0.5\n2,c,3.5\n2,b,5\n3,c,2\n3,a,4\n"
    at = start()
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_recs_0").set_value([("model_a.csv", RECS, "text/csv")])
    at.file_uploader(key="upload_truth_0").set_value(("truth.csv", half_stars, "text/csv"))
    at.run()
    assert at.number_input(key="threshold_rating").value == 4.0
    caption = next(shown(c.value) for c in at.caption if c.value.startswith("rating"))
    assert "Ratings from 0.5 to 5: 4 and above is relevant" in caption and "50% of the ground truth's rows" in caption
    assert not [w for w in at.warning if "threshold" in w.value]
    at.number_input(key="threshold_rating").set_value(1.0).run()
    warning = next(shown(w.value) for w in at.warning if "threshold" in w.value)
    assert "differs from the 4 proposed for ratings" in warning and "83% of the rows" in warning


def test_item_feature_columns_start_as_the_command_line_takes_them():
    """Every numeric column of the item table is chosen to begin with (as the command line uses
    them), the text ones offered; the numbers then equal the command line's defaults."""
    at = start()
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_recs_0").set_value([("model_a.csv", RECS, "text/csv")])
    at.file_uploader(key="upload_truth_0").set_value(("truth.csv", TRUTH, "text/csv"))
    at.file_uploader(key="upload_items_0").set_value(
        ("items.csv", b"item,genre,length,year\na,drama,1.5,1999\nb,news,0.5,2001\nc,kids,2.0,2010\n", "text/csv"))
    at.run()
    chosen = at.multiselect(key="features_item")
    assert chosen.value == ["length", "year"] and "genre" in chosen.options
