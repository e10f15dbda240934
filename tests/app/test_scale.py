"""Every page on a workspace of the size people bring (issue #43): 20,000 users x 4 models with
training interactions, item and user features, opened from its link; every page drawn, K
changed twice, no error, and no chart sending more than 5,000 rows to the browser (the pages
summarise per-user values on the server)."""

from __future__ import annotations

import json
import re
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from driving import start
from large import record_runs, save_large_workspace
from streamlit.testing.v1 import AppTest

from dashboard import progress
from dashboard.state import Key
from dashboard.summaries import MAX_CHART_ROWS
from dashboard.workspace import Workspace
from metrics_core.stats.segments import segment_choices

PAGES = ["views/summary.py", "views/overview.py", "views/users.py", "views/popularity.py", "views/scores.py",
         "views/cases.py", "views/compare.py", "views/history.py", "views/data.py"]


@pytest.fixture(scope="module")
def large_workspace(tmp_path_factory) -> tuple[str, str]:
    home = tmp_path_factory.mktemp("large_store")
    workspace_id = save_large_workspace(home)
    record_runs(home, workspace_id)  # (History compares two runs of 20,000 users x 4 models)
    return str(home), workspace_id


def chart_rows(at: AppTest) -> list[int]:
    """The rows of every chart's data on the page (Arrow datasets and inline values)."""
    counts = []
    for chart in [*at.get("arrow_vega_lite_chart"), *at.get("vega_lite_chart")]:
        for dataset in chart.proto.datasets:
            counts.append(pa.ipc.open_stream(dataset.data.data).read_all().num_rows)
        inline = json.loads(chart.proto.spec or "{}").get("data", {})
        if isinstance(inline, dict) and "values" in inline:
            counts.append(len(inline["values"]))
    return counts


def test_every_page_at_20000_users_and_4_models_sends_summaries_not_users(large_workspace, monkeypatch):
    """Also: a new K is read from the first evaluation's curves, with what a page shows that they
    lack (a few aggregates, the per-user values of the metrics it draws or tests) computed alone:
    no page evaluates every metric at a new K (issue #43), and every number equals a whole
    evaluation's at that K."""
    home, workspace_id = large_workspace
    monkeypatch.setenv("RANKSCOPE_HOME", home)
    from dashboard import state
    from metrics_core import Dataset

    state._store.clear()
    state.CACHE.clear()
    asked = []
    evaluate_all = Dataset.evaluate_all
    monkeypatch.setattr(Dataset, "evaluate_all", lambda self, settings=None, curves=True, progress=None,
                        beyond_curves=False: (asked.append((settings.k, curves)) or
                                              evaluate_all(self, settings, curves, progress, beyond_curves)))
    at = start(ws=workspace_id)
    at.toggle(key=Key.CARD_INTERVALS).set_value(False).run()  # (as above 50,000 users: the cards are read at K)
    for k in (10, 5, 20):
        at.switch_page("views/overview.py").run()
        at.slider(key="k").set_value(k).run()
        for page in PAGES:
            at.switch_page(page).run()
            assert not at.exception, (page, [e.value for e in at.exception])
            assert not at.error, (page, [e.value for e in at.error])
            rows = chart_rows(at)
            assert all(n <= MAX_CHART_ROWS for n in rows), (page, k, rows)
            if page == "views/history.py":  # (the newest two runs, compared for each model)
                assert sum("night 2 · " in m.value and " on ndcg" in m.value for m in at.markdown) == 4
    at.switch_page("views/users.py").run()
    assert chart_rows(at), "the Users page draws its charts"
    assert asked == [(10, True)], asked
    monkeypatch.setattr(Dataset, "evaluate_all", evaluate_all)
    data = next(value for key, value in state.CACHE._entries.items() if key.startswith("data:"))[0]
    read = [key for key in state.CACHE._entries if key.startswith("at_k:")]
    assert read, "a new K on the Overview and Popularity is read from the curves"
    for key in read:  # (every number read at a new K is the whole evaluation's there)
        at_k = state.CACHE._entries[key][0]
        whole = data.evaluate_all(next(iter(at_k.values())).settings)
        for name, result in at_k.items():
            assert result.metrics == pytest.approx({m: whole[name].metrics[m] for m in result.metrics}, rel=1e-12,
                                                   abs=1e-15), (key, name)
    alone = [key for key in state.CACHE._entries if key.startswith(("metrics_at:", "per_user:"))]
    settings = next(iter(state.CACHE._entries[read[0]][0].values())).settings
    assert {key.split(":")[0] for key in alone} == {"metrics_at", "per_user"}, alone
    for key in alone:  # (what was computed alone: the whole evaluation's numbers, per user too)
        computed = state.CACHE._entries[key][0]
        if key.startswith("per_user:"):  # (kept per model: the key ends with the model's name)
            computed = {next(name for name in data.models if key.endswith(f":{name!r}")): computed}
        some = next(iter(computed.values()))
        whole = data.evaluate_all(some.settings if key.startswith("metrics_at:") else  # (the same settings but K)
                                  replace(settings, k=int(re.search(r"\('k', (\d+)\)", key).group(1))))
        for name, result in computed.items():
            if key.startswith("metrics_at:"):
                assert result.metrics == pytest.approx({m: whole[name].metrics[m] for m in result.metrics},
                                                       rel=1e-12), (key, name)
                result = result.per_user
            pd.testing.assert_frame_equal(result, whole[name].per_user.loc[result.index, result.columns],
                                          check_dtype=False, rtol=1e-12, obj=f"{key} {name}")
    for key, (results, _, _) in list(state.CACHE._entries.items()):
        if key.startswith("evaluations:"):
            whole = data.evaluate_all(next(iter(results.values())).settings)
            for name, result in results.items():
                assert result.metrics == pytest.approx(whole[name].metrics, rel=1e-12, nan_ok=True), (key, name)
                pd.testing.assert_frame_equal(result.curves, whole[name].curves)
                pd.testing.assert_frame_equal(result.per_user, whole[name].per_user, rtol=1e-12)


def test_segment_choices_of_a_saved_workspace_are_known_before_its_tables_are_read(large_workspace, monkeypatch):
    """The Users page offers its slices without waiting for the tables: from what the saved
    workspace holds, the same choices as the read dataset gives."""
    home, workspace_id = large_workspace
    monkeypatch.setenv("RANKSCOPE_HOME", home)
    from dashboard import state

    state._store.clear()
    state.CACHE.clear()
    at = start(ws=workspace_id)  # (the evaluation kept in the store, if no other test kept it)
    deadline = time.monotonic() + 60
    while (not list((Path(home) / "results").glob("*.json")) or progress._RUNNING) and time.monotonic() < deadline:
        time.sleep(0.1)  # (and whatever this open started meanwhile is done)
    saved = state.store().workspace(workspace_id)
    expected = segment_choices(Workspace.from_saved(saved).build())
    state.CACHE.clear()  # a restarted server, whose tables are not read (nothing reads them meanwhile here)
    monkeypatch.setattr(state, "_prepare_dataset", lambda ws: None)
    at.switch_page("views/users.py").run()
    assert not [key for key in state.CACHE._entries if key.startswith(f"data:{saved.fingerprint}")]
    assert list(at.selectbox(key="users_segment").options) == ["nobody (all users)", *expected]
    assert len(expected) == 2  # activity, country
