"""Text one user types is shown to others as text (issue #42): workspace names, model names,
notes and URL values never become a link, an image or markup on any page; URL values that
are not valid fall back to their defaults with a message; a model name with a colon or a dot
draws its charts; a read-only server offers no way to change the store.

Every Markdown-bearing element of every page is rendered as GitHub-flavoured Markdown with
bare-URL autolinks (markdown-it-py, as Streamlit's renderer does) and checked for links and
images that point at the hostile host."""

from __future__ import annotations

import pytest
from driving import assert_clean, open_tab, shown, start
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from metrics_core.store import Store, save_run

HOST = "evil.example"
WORKSPACE = f"[click me](https://{HOST}/ws) ![x](https://{HOST}/ws.png)"
MODELS = {"model_a.csv": f"![pixel](https://{HOST}/a.png)", "model_b.csv": f"bert:base www.{HOST} **b**"}
NOTE = f"<img src=https://{HOST}/n.png> [note](https://{HOST}/note)"
RECS = b"user,item,pos\n1,a,1\n1,b,2\n2,a,1\n2,c,2\n3,c,1\n3,b,2\n"
OTHER = b"user,item,pos\n1,b,1\n1,a,2\n2,c,1\n2,a,2\n3,b,1\n3,c,2\n"
TRUTH = b"user,item,stars\n1,b,5\n2,c,4\n3,c,5\n"
PAGES = ["views/summary.py", "views/overview.py", "views/users.py", "views/popularity.py", "views/scores.py",
         "views/cases.py", "views/compare.py", "views/history.py", "views/data.py"]
RENDER = MarkdownIt("gfm-like")


def rendered_texts(at: AppTest) -> list[str]:
    """Every piece of Markdown the page shows: element bodies and widget, metric and expander labels."""
    bodies = [e.value for kind in ("markdown", "caption", "error", "warning", "info", "success", "subheader",
                                   "title", "header") for e in getattr(at, kind)]
    labels = [e.label for kind in ("metric", "expander", "button", "text_input", "selectbox", "radio",
                                   "multiselect", "number_input", "slider") for e in getattr(at, kind)]
    options = [option for radio in at.radio for option in radio.options]  # (radio options are Markdown too)
    return [str(text) for text in bodies + labels + options if text]


def assert_no_markup_from(at: AppTest, page: str) -> None:
    for text in rendered_texts(at):
        html = RENDER.render(text)
        assert HOST not in html or ("href" not in html and "<img" not in html), (page, text, html)


@pytest.fixture
def hostile_workspace() -> AppTest:
    at = start()
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_recs_0").set_value([(name, data, "text/csv") for name, data in
                                                      zip(MODELS, (RECS, OTHER), strict=True)])
    at.file_uploader(key="upload_truth_0").set_value(("truth.csv", TRUTH, "text/csv"))
    at.run()
    for file_name, model in MODELS.items():
        at.text_input(key=f"name_{file_name}").set_value(model)
    next(t for t in at.text_input if t.label == "Save as workspace").set_value(WORKSPACE)
    at.number_input[0].set_value(4.0)
    at.button(key="check_and_save").click().run()
    assert_clean(at)
    store = Store()
    saved = store.workspace(at.query_params["ws"])
    assert saved.name == WORKSPACE and list(saved.models) == list(MODELS.values())
    from metrics_core import Dataset, Settings

    data = Dataset.build(dict(saved.models), saved.ground_truth, columns=saved.columns)
    for _ in range(2):
        save_run(store, saved, data.evaluate_all(Settings(k=2), curves=False), note=NOTE)
    return start(ws=saved.id)


def test_hostile_names_and_notes_are_text_on_every_page(hostile_workspace):
    at = hostile_workspace
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert not [e for e in at.error if "went wrong" in e.value], page
        assert_no_markup_from(at, page)
    at.switch_page("views/overview.py").run()
    assert WORKSPACE in shown(at.sidebar.markdown[0].value)  # shown exactly as typed


def test_a_colon_or_a_dot_in_a_model_name_draws_the_compare_charts(hostile_workspace):
    at = hostile_workspace
    at.switch_page("views/compare.py").run()
    assert_clean(at)
    for tab in ("Is the difference real?", "User by user", "Every cut-off"):  # (no training data: no segments)
        open_tab(at, tab)
        assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart"), tab


@pytest.mark.parametrize(("query", "problem"), [
    ({"k": "-1"}, "k=-1"), ({"k": "ten"}, "k=ten"), ({"beta": "nan"}, "beta=nan"), ({"beta": "inf"}, "beta=inf"),
    ({"rbp_p": "7"}, "rbp_p=7"), ({"gain": "cubic"}, "gain=cubic"), ({"preset": "<b>x</b>"}, "preset=<b>x</b>"),
    ({"resamples": "-5"}, "resamples=-5"), ({"card_intervals": "maybe"}, "card_intervals=maybe"),
    ({"compare_tab": "<b>tab</b>"}, "compare_tab=<b>tab</b>"),
])
def test_a_link_value_that_is_not_valid_falls_back_to_the_default_with_a_message(query, problem):
    at = start(**query)
    assert not at.exception and not [e for e in at.error if "went wrong" in e.value]
    assert any(problem in shown(w.value) for w in at.warning), [w.value for w in at.warning]
    assert at.metric, "the page is drawn with the default"
    if "k" in query:
        assert at.slider(key="k").value == 10


@pytest.mark.parametrize("value", [f"[link](https://{HOST})", f"![x](https://{HOST}/x.png)", "<script>x</script>",
                                   "a" * 5000])
def test_a_hostile_workspace_link_is_named_as_text(value):
    at = start(ws=value)
    assert not at.exception and at.error and not at.metric
    assert_no_markup_from(at, "overview")
    at.switch_page("views/data.py").run()
    assert not at.exception
    assert_no_markup_from(at, "data")


def test_a_read_only_server_offers_no_change_to_the_store(monkeypatch):
    store = Store()
    sha = store.put_table("r.csv", RECS, "recommendations")
    from metrics_core import Columns

    saved = store.save_workspace("shared", {"m": sha}, store.put_table("t.csv", TRUTH, "ground truth"),
                                 columns=Columns(user="user", item="item", rank="pos", relevance="stars", threshold=4))
    monkeypatch.setenv("RANKSCOPE_READ_ONLY", "1")
    from dashboard import state

    state._store.clear()
    try:
        at = start(ws=saved.id)
        assert_clean(at)
        at.switch_page("views/data.py").run()
        assert_clean(at)
        assert not at.get("file_uploader") and any("read-only" in i.value for i in at.info)
        labels = {b.label for b in at.button}
        assert "Open" in labels and not labels & {"Rename", "Move to the trash", "Save", "Restore"}
        at.switch_page("views/history.py").run()
        record = next(b for b in at.button if b.label == "Record run")
        assert record.disabled
    finally:
        state._store.clear()


def _upload(name: str, recs: bytes, truth: bytes) -> AppTest:
    at = start()
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_recs_0").set_value([(name, recs, "application/octet-stream")])
    at.file_uploader(key="upload_truth_0").set_value(("truth.csv", truth, "text/csv"))
    return at.run()


def test_a_list_column_uploaded_as_recommendations_is_named_not_a_crash(tmp_path):
    import pandas as pd

    pd.DataFrame({"user_id": [1, 2], "item_id": [[1, 2], [3]], "rank": [1, 1]}).to_parquet(tmp_path / "l.parquet")
    at = _upload("lists.parquet", (tmp_path / "l.parquet").read_bytes(), b"user_id,item_id\n1,1\n")
    assert not at.exception and not [e for e in at.error if "went wrong" in e.value]
    assert any("holds list" in shown(w.value) for w in at.warning)
    at.button(key="check_and_save").click().run()
    assert not at.exception and at.error and "list, struct or map" in shown(at.error[0].value)


def test_ids_beyond_64_bits_upload_and_evaluate_as_on_the_command_line():
    big = 2**64
    recs = f"user_id,item_id,rank\n1,{big + 5},1\n1,{big + 6},2\n2,7,1\n".encode()
    at = _upload("big.csv", recs, f"user_id,item_id\n1,{big + 5}\n2,{big + 6}\n".encode())
    at.button(key="check_and_save").click().run()
    assert_clean(at)
    at.switch_page("views/overview.py").run()
    assert_clean(at)
    from dashboard.glossary import label

    assert {m.label: m.value for m in at.metric}[label("recall", 2)] == "0.5000"
