"""A new K on the Overview is read from the first evaluation's curves (issue #43: a K change in a
blink on a large workspace), with the numbers an evaluation at that K shows; what the curves do
not hold (every metric, the bootstrap intervals) evaluates at K."""

from __future__ import annotations

import pandas as pd
from driving import assert_clean, open_tab, shown, start

from dashboard.state import COMPARE_TABS, Key
from metrics_core import Dataset


def evaluations_made(monkeypatch) -> list[int]:
    """The K of every evaluation of every model from now on (``Dataset.evaluate_all`` spied on)."""
    evaluated = []
    evaluate_all = Dataset.evaluate_all
    monkeypatch.setattr(Dataset, "evaluate_all", lambda *args, **kwargs: evaluated.append(args[1].k) or
                        evaluate_all(*args, **kwargs))
    return evaluated


def new_k_on(page: str | None, k: int, monkeypatch, **query):
    """``page`` opened afresh (an empty cache) from a link with ``query``, then K = ``k`` chosen,
    without an error and without any evaluation; returns the app and the K of the evaluations made
    from then on."""
    from dashboard import state

    state.CACHE.clear()
    at = start(page, **query)
    assert_clean(at)
    evaluated = evaluations_made(monkeypatch)
    at.slider(key="k").set_value(k).run()
    assert_clean(at)
    assert evaluated == []
    return at, evaluated


def evaluate_at_k(at, page: str) -> None:
    """Every model evaluated at the current K (the Overview's card intervals ask for it), then back
    on ``page`` with the intervals off again."""
    at.switch_page("views/overview.py").run()
    at.toggle(key=Key.CARD_INTERVALS).set_value(True).run()
    assert_clean(at)
    at.toggle(key=Key.CARD_INTERVALS).set_value(False).run()
    at.switch_page(page).run()
    assert_clean(at)


def cards(at) -> dict[str, tuple[str, str]]:
    return {metric.label: (metric.value, metric.delta) for metric in at.metric}


def test_a_new_k_reads_the_cards_from_the_curves_and_they_equal_an_evaluation_there(monkeypatch):
    from dashboard import state

    state.CACHE.clear()
    at = start()
    at.toggle(key=Key.CARD_INTERVALS).set_value(False).run()
    assert_clean(at)
    evaluated = evaluations_made(monkeypatch)
    at.slider(key="k").set_value(5).run()
    assert_clean(at)
    assert evaluated == []
    read = cards(at)
    assert "NDCG@5" in read and "Novelty@5" in read and "Diversity@5" in read, list(read)
    at.toggle(key=Key.CARD_INTERVALS).set_value(True).run()  # (bootstrap intervals: the per-user values at K)
    assert_clean(at)
    assert evaluated == [5]
    assert cards(at) == read
    at.slider(key="k").set_value(7).run()  # (intervals on: evaluated at K)
    assert evaluated == [5, 7]
    at.toggle(key=Key.CARD_INTERVALS).set_value(False).run()
    at.toggle(key=Key.EVERY_METRIC).set_value(True).run()  # (K = 7 is known now: its evaluation is shown)
    at.slider(key="k").set_value(3).run()  # (every metric: those without a curve computed alone at K = 3)
    assert_clean(at)
    assert evaluated == [5, 7]
    every = cards(at)
    assert {"LRAP@3", "Calibration@3", "Score entropy@3", "11-pt avg precision"} & set(every), list(every)
    at.toggle(key=Key.CARD_INTERVALS).set_value(True).run()  # (K = 3 evaluated: the same cards)
    assert evaluated == [5, 7, 3]
    assert cards(at) == every


def test_a_new_k_on_the_popularity_page_reads_its_cards_and_they_equal_an_evaluation_there(monkeypatch):

    at, evaluated = new_k_on("views/popularity.py", 4, monkeypatch)
    read = cards(at), [m.value for m in at.markdown]
    assert any("Expected exposure loss" in text or "EE-L" in text for text in read[1]), read[1]
    evaluate_at_k(at, "views/popularity.py")  # (now from the evaluation at K = 4: the same numbers)
    assert evaluated == [4]
    assert (cards(at), [m.value for m in at.markdown]) == read


def test_a_card_draws_a_fall_as_a_fall_in_the_colour_of_its_meaning():
    """A change is written with a minus sign (−), which Streamlit does not read as negative: each
    card says its arrow and colour outright, down for a fall, green for an improvement (a fall of
    Gini, where lower is better) and red for a worsening."""
    from streamlit.proto.Metric_pb2 import Metric

    from dashboard.glossary import METRICS, label

    at = start(baseline="personalised", model="popularity")
    assert_clean(at)
    named = {label(name, 10): name for name in METRICS}
    seen = set()
    for card in at.metric:
        delta = card.proto.delta
        if not delta or delta == "no change":
            continue
        name, falling = named[card.label], delta.startswith("−")
        direction = Metric.MetricDirection.DOWN if falling else Metric.MetricDirection.UP
        assert card.proto.direction == direction, card.label
        better = METRICS[name].higher_is_better
        expected = Metric.MetricColor.GRAY if better is None else (
            Metric.MetricColor.GREEN if falling != better else Metric.MetricColor.RED)
        assert card.proto.color == expected, (card.label, delta)
        seen.add((falling, card.proto.color))
    assert (True, Metric.MetricColor.RED) in seen, seen  # (the popularity model falls behind on accuracy)


def test_history_says_no_two_runs_are_alike_without_an_error_until_the_user_chooses_two(tmp_path, monkeypatch):
    """Runs at different settings only: the page compares none by default and says why, as
    information; two unlike runs chosen by the user are refused as an error, naming the difference."""
    from test_kept_evaluations import saved_workspace

    from dashboard import state
    from metrics_core import Settings
    from metrics_core.store import Store, save_run

    monkeypatch.setenv("RANKSCOPE_HOME", str(tmp_path))
    state._store.clear()
    state.CACHE.clear()
    store = Store(tmp_path)
    saved = store.workspace(saved_workspace(tmp_path))
    data = state.Workspace.from_saved(saved).build()
    at_5, at_10 = (save_run(store, saved, data.evaluate_all(Settings(k=k), curves=False)) for k in (5, 10))
    history = start("views/history.py", ws=saved.id)
    assert not history.error, [e.value for e in history.error]
    assert any("No two of these runs were made alike" in shown(i.value) for i in history.info)
    history.selectbox(key=Key.HISTORY_FIRST).set_value(at_10.id).run()
    history.selectbox(key=Key.HISTORY_SECOND).set_value(at_5.id).run()
    assert any("k 10 vs 5" in shown(e.value) for e in history.error)


def test_the_users_page_at_a_new_k_computes_its_one_metric_and_shows_what_an_evaluation_shows(monkeypatch):
    """A new K on the Users page: the chosen metric's per-user values at K alone, no evaluation of
    every metric; the page (chart, cards, worst and best users) is the one an evaluation at K draws."""
    from dashboard import state

    at, evaluated = new_k_on("views/users.py", 6, monkeypatch)
    drawn = ([m.value for m in at.metric], [m.value for m in at.markdown], at.get("vega_lite_chart") and
             [c.proto.spec for c in at.get("vega_lite_chart")])
    for key in [key for key in state.CACHE._entries if key.startswith("users:")]:  # (what the page drew: again)
        state.CACHE._entries.pop(key)
    evaluate_at_k(at, "views/users.py")  # (now drawn from the evaluation at K = 6)
    assert evaluated == [6]
    assert ([m.value for m in at.metric], [m.value for m in at.markdown], at.get("vega_lite_chart") and
            [c.proto.spec for c in at.get("vega_lite_chart")]) == drawn


def test_the_summary_at_a_new_k_computes_its_headline_metrics_alone_and_says_what_an_evaluation_says(monkeypatch):
    from dashboard import state

    at, evaluated = new_k_on(None, 7, monkeypatch)
    drawn = [m.value for m in at.markdown], at.dataframe[0].value, [s.value for s in [*at.success, *at.info]]
    assert any("@7" in text for text in drawn[0])
    for key in [key for key in state.CACHE._entries if key.startswith("summary:")]:  # (what the page drew: again)
        state.CACHE._entries.pop(key)
    evaluate_at_k(at, "views/summary.py")  # (now from the evaluation at K = 7)
    assert evaluated == [7]
    again = [m.value for m in at.markdown], at.dataframe[0].value, [s.value for s in [*at.success, *at.info]]
    assert again[0] == drawn[0] and again[2] == drawn[2]
    pd.testing.assert_frame_equal(again[1], drawn[1])


def drawn_by(at) -> tuple:
    """What a page shows: its texts, numbers, tables and chart specs."""
    return ([m.value for m in at.markdown], [m.value for m in at.caption], [(m.label, m.value) for m in at.metric],
            [frame.value for frame in at.dataframe], [c.proto.spec for c in at.get("vega_lite_chart")])


def assert_drawn_alike(first: tuple, second: tuple) -> None:
    assert first[:3] == second[:3] and first[4] == second[4]
    assert len(first[3]) == len(second[3])
    for one, other in zip(first[3], second[3], strict=True):
        pd.testing.assert_frame_equal(one, other, check_exact=False, rtol=1e-12)


def forget_drawn(prefixes: tuple[str, ...]) -> None:
    """What pages drew and computed at this K forgotten: they draw it again from an evaluation."""
    from dashboard import state

    for key in [key for key in state.CACHE._entries if key.startswith(prefixes)]:
        state.CACHE._entries.pop(key)


def test_the_scores_page_at_a_new_k_computes_score_entropy_alone_and_draws_what_an_evaluation_draws(monkeypatch):
    at, evaluated = new_k_on("views/scores.py", 3, monkeypatch)
    drawn = drawn_by(at)
    assert drawn[4] and any("ln 3" in text for text in drawn[0])
    forget_drawn(("scores:",))
    evaluate_at_k(at, "views/scores.py")
    assert evaluated == [3]
    assert_drawn_alike(drawn_by(at), drawn)


def test_compare_at_a_new_k_computes_its_tested_metrics_alone_and_shows_what_an_evaluation_shows(monkeypatch):
    """A new K on Compare: the table's metrics read or computed alone, the tested metrics' and the
    scatter's per-user values computed alone; every tab's tables, sentences and charts are those an
    evaluation at K draws."""
    at, evaluated = new_k_on("views/compare.py", 4, monkeypatch)
    open_tab(at, "Is the difference real?").multiselect(key=Key.TESTED_METRICS).set_value(
        ["ndcg", "novelty", "calibration"]).run()
    open_tab(at, "User by user").selectbox(key=Key.SCATTER_METRIC).set_value("score_entropy").run()
    assert_clean(at)
    assert evaluated == []
    drawn = {tab: drawn_by(open_tab(at, tab)) for tab in COMPARE_TABS}
    options = (open_tab(at, "Is the difference real?").multiselect(key=Key.TESTED_METRICS).options,
               open_tab(at, "User by user").selectbox(key=Key.SCATTER_METRIC).options)
    assert any("Score entropy" in str(frame.columns.tolist()) for frame in drawn["Side by side"][3])
    assert any("novelty" in text for text in drawn["Is the difference real?"][0])
    from dashboard import state

    forget_drawn(("compare_pair:", "compare_segments:", "segment_gaps:"))
    state._comparison.clear()  # (the paired tests and intervals: again, from the evaluation)
    evaluate_at_k(at, "views/compare.py")
    assert evaluated == [4]
    assert (open_tab(at, "Is the difference real?").multiselect(key=Key.TESTED_METRICS).options,
            open_tab(at, "User by user").selectbox(key=Key.SCATTER_METRIC).options) == options
    for tab in COMPARE_TABS:
        assert_drawn_alike(drawn_by(open_tab(at, tab)), drawn[tab])


def test_a_tab_of_two_models_computes_their_per_user_values_alone_and_the_others_later(monkeypatch):
    """User by user and Who gains, who loses compare the baseline with one model: at a new K they
    compute those two models' per-user values, and a tab that tests every model then computes
    only the others (each model's values are kept on their own)."""
    from dashboard import state

    asked = []
    per_user_at = Dataset.per_user_at
    monkeypatch.setattr(Dataset, "per_user_at", lambda self, name, settings, columns: asked.append(
        (name, settings.k, tuple(columns))) or per_user_at(self, name, settings, columns))
    at, evaluated = new_k_on("views/compare.py", 6, monkeypatch, compare_tab="User by user")
    baseline, other = at.selectbox(key=Key.BASELINE).value, at.selectbox(key=Key.MODEL_B).value
    models = at.selectbox(key=Key.BASELINE).options
    assert len(models) > 2
    column = at.selectbox(key=Key.SCATTER_METRIC).value
    assert sorted(asked) == sorted([(baseline, 6, (column,)), (other, 6, (column,))]), asked
    asked.clear()
    open_tab(at, "Who gains, who loses")
    metric, challenger = at.selectbox(key=Key.SEGMENT_METRIC).value, at.selectbox(key=Key.SEGMENT_MODEL).value
    assert sorted(asked) == sorted([(name, 6, (state.METRIC_COLUMNS[metric],)) for name in (baseline, challenger)])
    asked.clear()
    at.session_state[Key.TESTED_METRICS] = [metric]
    open_tab(at, "Is the difference real?")
    assert sorted(name for name, _, _ in asked) == sorted(set(models) - {baseline, challenger}), asked
    assert evaluated == []


def test_compare_computes_who_is_served_and_the_overlap_once_per_k_and_only_on_their_tabs(monkeypatch):
    """Who is served and the overlap matrix depend on K alone: Compare computes each once per K
    (kept with what the page drew), whatever else the page reruns for, and only when their tab is open."""
    from metrics_core.stats import overlap, served

    calls = []
    items_by_model, matrix = served.items_by_model, overlap.matrix
    monkeypatch.setattr(served, "items_by_model", lambda *a, **kw: calls.append("served") or items_by_model(*a, **kw))
    monkeypatch.setattr(overlap, "matrix", lambda *a, **kw: calls.append("overlap") or matrix(*a, **kw))
    at, _ = new_k_on("views/compare.py", 6, monkeypatch, compare_tab="Who is served")  # (at K = 10, then K = 6)
    assert calls == ["served"] * 2, calls
    assert any("Who is served" in h.value for h in at.subheader) and len(at.dataframe) == 2
    open_tab(at, "User by user")
    open_tab(at, "Who is served")
    assert calls == ["served"] * 2 + ["overlap"], calls
    at.slider(key="k").set_value(4).run()
    assert_clean(at)
    open_tab(at, "User by user")
    open_tab(at, "Side by side")
    assert calls == ["served"] * 2 + ["overlap"] + ["served", "overlap"], calls


def test_scores_under_pooled_score_entropy_shows_one_value_per_model_at_every_k(monkeypatch):
    """The Evidently preset pools score entropy over every user's top K (no per-user values): the
    Scores page shows each model's pooled value, the evaluation's, and a new K reads it without an
    evaluation (it failed with "Something went wrong" before)."""
    from dataclasses import replace

    from dashboard import state
    from dashboard.glossary import fmt

    state.CACHE.clear()
    at = start("views/scores.py", preset="evidently")
    assert_clean(at)
    data = next(value for key, value in state.CACHE._entries.items() if key.startswith("data:"))[0]
    first = next(value for key, value in state.CACHE._entries.items() if key.startswith("evaluations:"))[0]
    settings = next(iter(first.values())).settings
    assert settings.score_entropy == "pooled"
    evaluated = evaluations_made(monkeypatch)
    for k in (10, 4):
        if k != 10:
            at.slider(key="k").set_value(k).run()
            assert_clean(at)
        shown = {metric.label: metric.value for metric in at.metric}
        expected = data.evaluate_all(replace(settings, k=k), curves=False)
        assert shown == {name: fmt("score_entropy", result.metrics["score_entropy"])
                         for name, result in expected.items()}, k
        assert any("pooled" in text.value for text in at.markdown)
    assert evaluated == [10, 4]  # (the two made here, to compare with: the page made none)
