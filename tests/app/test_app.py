"""The app as a user drives it, headless (streamlit.testing.v1.AppTest)."""

from __future__ import annotations

import pytest
from driving import assert_clean, open_tab, shown, start
from streamlit.testing.v1 import AppTest

from dashboard.glossary import fmt, label
from dashboard.state import COMPARE_TABS
from dashboard.workspace import demo_workspace
from metrics_core import Settings

PAGES = ["views/summary.py", "views/overview.py", "views/users.py", "views/popularity.py", "views/scores.py",
         "views/cases.py", "views/compare.py", "views/data.py"]


@pytest.fixture(scope="module")
def demo_results():
    dataset = demo_workspace().build()
    return {k: dataset.evaluate_all(Settings(k=k)) for k in (10, 5)}


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_the_demo_workspace(page):
    at = start()
    assert_clean(at)
    at.switch_page(page).run()
    assert_clean(at)
    assert at.title, "every page has a title"


@pytest.mark.parametrize("tab", COMPARE_TABS)
def test_every_compare_tab_renders_and_is_kept_in_the_link(tab):
    at = start("views/compare.py", compare_tab=tab)
    assert_clean(at)
    assert at.query_params["compare_tab"] == tab
    assert at.dataframe or at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart") or at.get("download_button")


def test_overview_cards_equal_metrics_core(demo_results):
    at = start()
    model = at.selectbox(key="model").value
    result = demo_results[10][model]
    cards = {m.label: m.value for m in at.metric}
    for name in ("precision", "recall", "ndcg", "map", "mrr", "hit_rate", "coverage", "novelty", "diversity"):
        assert cards[label(name, 10)] == fmt(name, result.metrics[name]), name
    assert len(at.metric) == 12 and label("lauc", 10) not in cards  # (the essential few, until asked for every one)
    at.toggle(key="every_metric").set_value(True).run()
    cards = {m.label: m.value for m in at.metric}
    assert len(at.metric) >= 18 and cards[label("lauc", 10)] == fmt("lauc", result.metrics["lauc"])
    assert at.query_params["every_metric"] == "True"


def test_popularity_shows_exposure_by_genre_and_every_metric_card_has_the_new_families(demo_results):
    at = start()
    at.toggle(key="every_metric").set_value(True).run()
    model = at.selectbox(key="model").value
    cards = {m.label: m.value for m in at.metric}
    for name in ("calibration", "exposure_distance"):
        assert cards[label(name, 10)] == fmt(name, demo_results[10][model].metrics[name]), name
    at.switch_page("views/popularity.py").run()
    assert_clean(at)
    said = " ".join(shown(m.value) for m in at.markdown)
    model = at.selectbox(key="model").value
    distance = fmt("exposure_distance", demo_results[10][model].metrics["exposure_distance"])
    assert f"{label('exposure_distance')}: {distance}" in said and "genre" in said
    assert any(subheader.value == "Exposure by item group" for subheader in at.subheader)
    loss = fmt("ee_loss", demo_results[10][model].metrics["ee_loss"])  # (expected exposure, item by item)
    assert f"{label('ee_loss')}: {loss}" in said and "TREC Fair Ranking" in said


def test_moving_k_recomputes_and_is_shared_by_the_url(demo_results):
    at = start()
    at.slider(key="k").set_value(5).run()
    assert_clean(at)
    model = at.selectbox(key="model").value
    cards = {m.label: m.value for m in at.metric}
    assert cards[label("ndcg", 5)] == fmt("ndcg", demo_results[5][model].metrics["ndcg"])
    assert at.query_params["k"] == ["5"] or at.query_params["k"] == "5"


def test_settings_come_from_query_parameters(demo_results):
    at = start(k="5", model="diverse", baseline="personalised")
    assert at.slider(key="k").value == 5
    assert at.selectbox(key="model").value == "diverse"
    cards = {m.label: m.value for m in at.metric}
    assert cards[label("recall", 5)] == fmt("recall", demo_results[5]["diverse"].metrics["recall"])


def test_choices_survive_page_switches():
    at = start()
    at.slider(key="k").set_value(7).run()
    at.switch_page("views/compare.py").run()
    at.switch_page("views/overview.py").run()
    assert at.slider(key="k").value == 7
    assert_clean(at)


def test_preset_fills_in_its_conventions():
    at = start()
    at.selectbox(key="preset").set_value("trec_eval").run()
    assert_clean(at)
    assert at.selectbox(key="ap_denominator").value == "relevant"
    # (trec_eval's averaging: a choice the sidebar offers, shown as chosen)
    assert at.radio(key="users_without_relevant").value == "zero_if_judged"
    assert at.radio(key="users_without_list").value == "drop"


def upload(at: AppTest, recs: bytes, truth: bytes) -> AppTest:
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_recs_0").set_value([("model_a.csv", recs, "text/csv")])
    at.file_uploader(key="upload_truth_0").set_value(("truth.csv", truth, "text/csv"))
    return at.run()


def test_upload_map_and_evaluate_your_own_files():
    at = upload(start(), b"user,item,pos\n1,a,1\n1,b,2\n2,a,1\n2,c,2\n", b"user,item,stars\n1,b,5\n2,c,2\n")
    assert_clean(at)
    chosen = {box.label.split(" (")[0]: box.value for box in at.selectbox}
    assert chosen["User column"] == "user" and chosen["Item column"] == "item"
    assert chosen["Rank column"] == "pos" and chosen["Score column"] == "(none)"
    assert chosen["Relevance grade in the ground truth"] == "stars"
    at.number_input[0].set_value(3.0)
    at.button(key="check_and_save").click().run()
    assert_clean(at)
    assert at.success and "loaded 1 model" in at.success[0].value
    at.switch_page("views/overview.py").run()
    assert_clean(at)
    cards = {m.label: m.value for m in at.metric}
    assert cards[label("precision", 2)] == "0.5000"  # K is capped at the longest list (2); user 2 has no relevant item


def test_bad_upload_shows_a_message_with_the_rows_and_keeps_the_workspace():
    at = upload(start(), b"user_id,item_id,rank\n1,a,1\n1,b,1\n", b"user_id,item_id\n1,a\n")
    at.button(key="check_and_save").click().run()
    assert not at.exception
    assert at.error and "share a rank" in at.error[0].value
    assert at.dataframe, "the offending rows are shown"
    at.switch_page("views/overview.py").run()
    assert_clean(at)
    assert "Demo workspace" in at.sidebar.markdown[0].value


def test_unreadable_upload_is_a_message():
    at = upload(start(), b"\x00\x01\x02garbage", b"user_id,item_id\n1,a\n")
    assert not at.exception
    assert at.error


def test_cases_page_opens_a_linked_user():
    at = start(case_user="12")
    at.switch_page("views/cases.py").run()
    assert_clean(at)


def test_compare_page_tests_significance_and_reads_it_out():
    at = start(baseline="popularity", compare_tab="Is the difference real?")
    at.switch_page("views/compare.py").run()
    assert_clean(at)
    sentences = [shown(m.value) for m in at.markdown if "beats popularity" in shown(m.value)]
    assert any("personalised beats popularity on ndcg@10" in s and "Holm" in s for s in sentences)
    assert not at.get("download_button") or not any(e.label == "HTML report (works offline)"
                                                    for e in at.get("download_button")), "the other tabs do not run"
    assert any(e.label == "HTML report (works offline)" for e in open_tab(at, "Export").get("download_button"))
    open_tab(at, "Is the difference real?")
    at.radio(key="test").set_value("t").run()
    assert_clean(at)
    at.selectbox(key="correction").set_value("bonferroni").run()
    assert any("Bonferroni" in m.value for m in at.markdown)


def test_compare_page_shows_how_alike_the_lists_are():
    from metrics_core.stats.overlap import per_user

    at = start(baseline="popularity", model_b="diverse", compare_tab="User by user")
    at.switch_page("views/compare.py").run()
    assert_clean(at)
    dataset = demo_workspace().build()
    for measure, name in (("jaccard", "Jaccard@10"), ("rbo", "RBO@10")):
        at.radio(key="overlap_measure").set_value(measure).run()
        assert_clean(at)
        mean = per_user(dataset, "popularity", "diverse", 10, measure).mean()
        assert any(f"Mean {name} of diverse and popularity: {mean:.3f}" in c.value for c in at.caption)


def test_overview_cards_show_confidence_intervals():
    at = start(every_metric="True")
    captions = [c.value for c in at.caption if "95% CI" in c.value]
    assert len(captions) >= 10


def test_a_link_with_a_user_opens_that_users_case():
    at = start()
    at.switch_page("views/cases.py").run()
    first = at.selectbox(key="case_user").value
    at.query_params["case_user"] = "12" if first != "12" else "13"
    at.switch_page("views/cases.py").run()
    assert_clean(at)
    assert at.selectbox(key="case_user").value == at.query_params["case_user"]


def test_upload_without_rank_or_score_asks_for_one():
    at = upload(start(), b"user_id,item_id,when\n1,a,3\n", b"user_id,item_id\n1,a\n")
    assert not at.exception
    assert next(b for b in at.selectbox if b.label.startswith("Rank column")).value == "(none)"
    assert next(b for b in at.selectbox if b.label.startswith("Score column")).value == "(none)"
    assert at.error and "Choose the rank column or the score column" in at.error[0].value  # said before any click
    assert not [b for b in at.button if b.key == "check_and_save"]


@pytest.mark.parametrize("preset", ["evidently", "rectools", "recommenders", "torchmetrics"])
def test_each_peer_preset_renders_the_analysis_pages(preset):
    at = start(preset=preset)
    assert_clean(at)
    for page in ("views/overview.py", "views/compare.py", "views/users.py"):
        at.switch_page(page).run()
        assert_clean(at)
    at.switch_page("views/compare.py").run()
    for tab in COMPARE_TABS:
        open_tab(at, tab)


def test_similarity_and_primitive_model_choices_reach_the_numbers():
    at = start(every_metric="True")
    at.selectbox(key="similarity").set_value("cooccurrence").run()
    at.selectbox(key="primitive_model").set_value("diverse").run()
    assert_clean(at)
    assert at.query_params["similarity"] == "cooccurrence" and at.query_params["primitive_model"] == "diverse"
    dataset = demo_workspace().build()
    chosen = Settings(k=10, similarity="cooccurrence", primitive_model="diverse")
    expected = dataset.evaluate(at.selectbox(key="model").value, chosen).metrics
    cards = {metric.label: metric.value for metric in at.metric}
    for name in ("diversity", "unexpectedness", "serendipity_primitive"):
        assert cards[label(name, 10)] == fmt(name, expected[name]), name


def test_sessions_share_one_demo_evaluation(monkeypatch):
    """Twenty people opening the demo: the data is read and joined once, and each setting
    evaluated once, for every session (issue #42: under load, sessions must share their work)."""
    from dashboard import state
    from metrics_core import Dataset

    state.CACHE.clear()
    builds, evaluations = [], []
    build, evaluate_all = Dataset.build, Dataset.evaluate_all
    monkeypatch.setattr(Dataset, "build", staticmethod(lambda *a, **k: builds.append(1) or build(*a, **k)))
    monkeypatch.setattr(Dataset, "evaluate_all", lambda self, *a, **k: evaluations.append(1) or evaluate_all(
        self, *a, **k))
    for _ in range(3):
        at = start()
        assert_clean(at)
        assert at.metric
    assert len(builds) == 1 and len(evaluations) == 1


def test_the_summary_opens_first_with_the_librarys_verdict():
    """A workspace opens on the Summary: every model x the headline metrics with intervals, and
    the verdict on NDCG in the library's words (issue #44)."""
    from dashboard import state
    from metrics_core.stats.verdict import verdict

    state.CACHE.clear()  # (the one evaluation in the cache is then this run's)
    at = start(page=None)
    assert_clean(at)
    assert at.title[0].value == "Summary"
    results = state.CACHE.peek(next(key for key in state.CACHE._entries if key.startswith("evaluations:")))
    expected = verdict(results, "ndcg").sentence()
    callouts = [element.value for element in [*at.success, *at.info]]
    assert [shown(text) for text in callouts] == [expected]
    table = at.dataframe[0].value
    assert list(table.index) == list(results) and list(table.columns)[:2] == ["NDCG@10", "Recall@10"]
    assert all(" ± " in cell for cell in table["NDCG@10"])  # (each value with its interval)
    bullets = " ".join(shown(m.value) for m in at.markdown)
    assert verdict(results, "recall").sentence() in bullets


def test_a_change_that_rounds_to_zero_reads_no_change():
    """A card's delta that rounds to zero at its precision says "no change", grey and without an
    arrow; others are signed (issue #44: "Fall-out −0.0000" read as noise)."""
    from dashboard.glossary import change_text

    assert change_text("fall_out", -0.00000004) == "no change" and change_text("ndcg", 0.0) == "no change"
    assert change_text("ndcg", -0.00051) == "−0.0005" and change_text("aggregate_diversity", 3.0) == "+3"
    at = start()
    at.selectbox(key="model").set_value(at.selectbox(key="baseline").value).run()  # (the baseline: no deltas)
    assert all(metric.proto.delta == "" for metric in at.metric)


def test_presentation_mode_hides_the_settings_and_keeps_their_values():
    """Presentation mode (a switch, kept in the link): no settings in the sidebar, larger type, the
    numbers of the values set before; switched off, the settings come back as they were."""
    at = start(page=None, k="5", present="True")
    assert_clean(at)
    assert at.title[0].value == "Summary" and not at.get("slider") and at.toggle(key="present").value
    assert any("font-size" in str(element.proto) for element in at.get("html"))
    assert "NDCG@5" in at.dataframe[0].value.columns  # (K = 5 from the link, though its slider is hidden)
    at.switch_page("views/overview.py").run()
    assert_clean(at)
    at.toggle(key="present").set_value(False).run()
    assert at.slider(key="k").value == 5 and at.query_params["present"] == "False"


def test_users_page_says_how_far_apart_the_slices_are():
    """Sliced by activity, the Users page says which group is served best and worst and by how
    much, as the library's served() computes it for the chosen model."""
    from dashboard.glossary import PER_USER_LABELS
    from dashboard.text import plain
    from metrics_core.stats.segments import ACTIVITY, user_segments
    from metrics_core.stats.served import served

    at = start(model="personalised", users_metric="ndcg", users_segment=ACTIVITY)
    at.switch_page("views/users.py").run()
    assert_clean(at)
    dataset = demo_workspace().build()
    result = dataset.evaluate("personalised", Settings(k=10))
    expected = served(result.per_user["ndcg"], user_segments(dataset, ACTIVITY), resamples=200).sentence(
        f"{PER_USER_LABELS['ndcg']}@10")
    assert any(plain(expected) in c.value for c in at.caption), [c.value for c in at.caption]


def test_popularity_page_shows_how_head_mid_and_tail_items_are_served():
    at = start(model="popularity")
    at.switch_page("views/popularity.py").run()
    assert_clean(at)
    assert any("Who is served" in h.value for h in at.subheader)
    expected = demo_workspace().build().served_items("popularity", Settings(k=10)).set_index("group")
    shown_tables = [frame.value for frame in at.dataframe if "recall" in getattr(frame.value, "columns", [])]
    assert shown_tables and shown_tables[0]["recall"].tolist() == pytest.approx(expected["recall"].tolist(),
                                                                                 nan_ok=True)
    assert "title" not in at.selectbox(key="served_by").options  # (a column of distinct values groups nothing)
    at.selectbox(key="served_by").set_value("genre").run()  # the items grouped by an item attribute instead
    assert_clean(at)
    by_genre = demo_workspace().build().served_items("popularity", Settings(k=10), by="genre").set_index("group")
    shown_tables = [frame.value for frame in at.dataframe if "recall" in getattr(frame.value, "columns", [])]
    assert list(shown_tables[0].index) == list(by_genre.index) and len(by_genre) > 3
    assert shown_tables[0]["hits"].tolist() == pytest.approx(by_genre["hits"].tolist(), nan_ok=True)
    assert at.query_params["served_by"] == "genre"


def test_compare_page_shows_who_is_served_among_popular_and_niche_items():
    at = start(compare_tab="Who is served")
    at.switch_page("views/compare.py").run()
    assert_clean(at)
    assert any("Who is served" in h.value for h in at.subheader)
    recall = [frame.value for frame in at.dataframe if "tail" in getattr(frame.value, "columns", [])]
    assert len(recall) == 2 and list(recall[0].index) == ["popularity", "personalised", "diverse"]


def test_compare_page_says_how_far_apart_the_segments_are_for_both_models():
    from metrics_core.stats.segments import ACTIVITY

    at = start(baseline="popularity", segment_model="personalised", compare_segment=ACTIVITY,
               compare_tab="Who gains, who loses")
    at.switch_page("views/compare.py").run()
    assert_clean(at)
    lines = [m.value for m in at.markdown if "higher for" in m.value]
    assert any(line.startswith("- **popularity**") for line in lines)
    assert any(line.startswith("- **personalised**") for line in lines)
    at.selectbox(key="segment_model").set_value("diverse").run()  # (the other model's gap, not the one drawn before)
    lines = [m.value for m in at.markdown if "higher for" in m.value]
    assert any(line.startswith("- **diverse**") for line in lines)
    assert not any(line.startswith("- **personalised**") for line in lines)
