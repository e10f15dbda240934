"""The beyond-accuracy metrics at every k equal the metrics evaluated at K = k, for every k,
on random data with what makes them differ (rank gaps, items unknown to training, items without
features or category, users without history, lists of one item) and every convention."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from metrics_core import Dataset, Settings
from metrics_core.at_k import filled, read_at
from tests.compiled import compiled_loops

CONVENTIONS = [
    {},
    {"novelty_unknown": "one_user", "arp_unknown": "leave_out", "arp_normalisation": "interactions",
     "diversity_divisor": "list", "serendipity_over": "list", "gini_over": "recommended", "entropy_base": 2.0},
    {"one_item_lists": "self", "exposure_browsing": "rbp", "rbp_p": 0.6, "exposure_target": "uniform"},
    {"one_item_lists": "self", "diversity_divisor": "list", "exposure_target": "training"},
    {"similarity": "hamming"},
    {"similarity": "cooccurrence"},
]
COVERED_ALWAYS = {"aggregate_diversity", "personalization", "coverage", "gini", "entropy", "entropy_normalised",
                  "novelty", "novelty_interactions", "arp", "arp_normalised", "serendipity_popularity",
                  "exposure_distance", "score_entropy"}
COVERED_BY_COSINE = {"diversity", "intra_list_similarity", "serendipity"}
EXPECTED_EXPOSURE = {"ee_disparity", "ee_relevance", "ee_loss",  # (accuracy metrics without a curve, beside them)
                     "11pt_avg", *(f"iprec_at_recall_{level / 10:.2f}" for level in range(11))}


def random_data(seed: int, n_users: int = 60, n_items: int = 40, length: int = 8, gaps: bool = True,
                ties: bool = False):
    """Lists with rank gaps and lists of one item, a ground truth, training data that misses a
    few items and users, and an item table without a few items (no features, no category)."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(n_users):
        size = 1 if user % 7 == 0 else int(rng.integers(1, length + 1))
        ranks = np.sort(rng.choice(np.arange(1, length + 1), size, replace=False)) if gaps and user % 5 == 0 else \
            np.arange(1, size + 1)
        for rank, item in zip(ranks, rng.choice(n_items, size, replace=False), strict=True):
            rows.append((f"u{user}", f"i{item}", int(rank), float(length - rank + rng.random())))
    recs = pd.DataFrame(rows, columns=["user_id", "item_id", "rank", "score"])
    if ties:  # (ordered by scores that tie in pairs: ties at the cut-off for every K)
        recs = recs.assign(score=((length - recs["rank"]) // 2).astype(float)).drop(columns="rank")
    truth = recs.sample(frac=0.35, random_state=seed)[["user_id", "item_id"]]
    train = pd.DataFrame({"user_id": [f"u{u}" for u in rng.integers(0, n_users - 5, 400)],
                          "item_id": [f"i{i}" for i in rng.integers(0, n_items - 4, 400)]})
    featured = np.arange(n_items - 3)
    items = pd.DataFrame({"item_id": [f"i{i}" for i in featured],
                          "genre": rng.choice(["a", "b", "c|a", "d"], len(featured)),
                          "x": rng.normal(size=len(featured)), "y": rng.integers(0, 3, len(featured))})
    return Dataset.build(recs, truth, train=train, items=items, feature_columns=["x", "y"])


@pytest.mark.parametrize("conventions", CONVENTIONS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or
                         "defaults")
@pytest.mark.parametrize("seed", range(3))
def test_every_k_equals_the_metric_evaluated_at_k(seed, conventions):
    data = random_data(seed, gaps=seed != 2)  # (lists without rank gaps read their lengths)
    model = data.models[0]
    curves = data.evaluate(model, Settings(k=3, **conventions), beyond_curves=True).beyond_curves
    covered = COVERED_ALWAYS | EXPECTED_EXPOSURE | \
        (COVERED_BY_COSINE if conventions.get("similarity", "cosine") == "cosine" else set())
    assert set(curves.values.columns) == covered
    assert list(curves.values.index) == list(range(1, data.lists[model].positions + 1))
    for k in curves.values.index:
        at_k = data.evaluate(model, Settings(k=int(k), **conventions), curves=False)
        values, users, sd = curves.at(int(k))
        assert set(values) == set(at_k.metrics) & covered, k
        for name, value in values.items():
            assert value == pytest.approx(at_k.metrics[name], rel=1e-12, abs=1e-12), (k, name)
        for name, count in users.items():
            column = at_k.per_user[name].dropna()
            assert count == len(column), (k, name)
            expected = column.std(ddof=1) if len(column) > 1 else np.nan
            assert sd[name] == pytest.approx(expected, rel=1e-6, abs=1e-9, nan_ok=True), (k, name)


def two_models(seed: int, gaps: bool, n_users: int = 60, n_items: int = 30, length: int = 8) -> Dataset:
    """Two models' lists over the same users, the first the primitive model by default: the second
    holds some of the first's items at other places, items of its own, and lists of other lengths;
    rank gaps (every fifth user of the first), lists of one item, users only one model lists, and
    scores that tie (minmax's equal lowest and highest)."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(n_users):
        mine = rng.choice(n_items, 1 if user % 7 == 0 else int(rng.integers(1, length + 1)), replace=False)
        ranks = np.sort(rng.choice(np.arange(1, length + 1), len(mine), replace=False)) \
            if gaps and user % 5 == 0 else np.arange(1, len(mine) + 1)
        rows += [("base", f"u{user}", f"i{item}", int(rank), float(length - rank + rng.random()))
                 for rank, item in zip(ranks, mine, strict=True)]
        if user % 11 == 3:
            continue  # (no list from the second model)
        kept = rng.permutation(mine)[:int(rng.integers(0, len(mine) + 1))]
        theirs = rng.permutation(np.union1d(kept, rng.choice(n_items, int(rng.integers(0, 4)))))[:length]
        rows += [("other", f"u{user}", f"i{item}", rank, float(rng.integers(0, 3)))
                 for rank, item in enumerate(theirs, start=1)]
    recs = pd.DataFrame(rows, columns=["model", "user_id", "item_id", "rank", "score"])
    truth = recs.sample(frac=0.4, random_state=seed)[["user_id", "item_id"]].drop_duplicates()
    return Dataset.build({name: frame.drop(columns="model") for name, frame in recs.groupby("model")}, truth)


@pytest.mark.parametrize("scale", ["rank", "minmax"])
@pytest.mark.parametrize("seed", range(3))
def test_the_primitive_model_metrics_at_every_k_equal_them_at_k(seed, scale):
    """Serendipity against the primitive model and unexpectedness at every k, for each model (the
    primitive itself scores 0) and either primitive model, equal the metrics evaluated at K = k."""
    data = two_models(seed, gaps=seed != 2)
    for primitive in data.models:
        for model in data.models:
            settings = Settings(k=3, primitive_scale=scale, primitive_model=primitive)
            curves = data.evaluate(model, settings, beyond_curves=True).beyond_curves
            for k in curves.values.index:
                at_k = data.evaluate(model, replace(settings, k=int(k)), curves=False)
                values, users, sd = curves.at(int(k))
                for name in ("serendipity_primitive", "unexpectedness"):
                    assert values[name] == pytest.approx(at_k.metrics[name], rel=1e-12, abs=1e-12), (k, name)
                    column = at_k.per_user[name].dropna()
                    assert users[name] == len(column), (k, name)
                    assert sd[name] == pytest.approx(column.std(ddof=1) if len(column) > 1 else np.nan, rel=1e-6,
                                                     abs=1e-9, nan_ok=True), (k, name)
                    if model == primitive:
                        assert values[name] == 0.0, (k, name)
            assert curves.values["unexpectedness"].notna().all()


def test_not_asked_for_there_is_none():
    data = random_data(0)
    assert data.evaluate(data.models[0], Settings(k=3)).beyond_curves is None
    assert data.evaluate(data.models[0], Settings(k=3), curves=False, beyond_curves=True).beyond_curves is None


@pytest.mark.parametrize("conventions", CONVENTIONS[:4], ids=range(4))
def test_a_k_read_from_the_curves_equals_the_evaluation_at_k(conventions):
    """Every metric read at another K equals the evaluation there, with the same users, notes (made
    from the counts the curves keep, or asked of the dataset) and t intervals; what cannot be read is
    named, and is what an evaluation at K has besides."""
    data = random_data(1, ties=conventions.get("one_item_lists") == "self")
    model = data.models[0]
    base = data.evaluate(model, Settings(k=3, **conventions), beyond_curves=True)
    said = set()
    for k in range(1, data.lists[model].positions + 1):
        settings = Settings(k=k, **conventions)
        at_k, read = data.evaluate(model, settings, curves=False), read_at(base, k)
        assert read.k == k and read.users == at_k.users
        assert read.warnings == at_k.warnings == data.warnings_at(model, settings), k
        said |= {note.code for note in at_k.warnings}
        assert set(read.metrics) | set(read.missing) == set(at_k.metrics)
        assert set(base.metrics) <= set(read.metrics) | set(read.missing) | set(read.skipped)
        frame = at_k.to_frame()
        for name, value in read.metrics.items():
            assert value == pytest.approx(at_k.metrics[name], rel=1e-12, abs=1e-12), (k, name)
            assert read.users_of(name) == at_k.users_of(name), (k, name)
            interval = read.interval(name)
            if interval is not None:
                assert interval == pytest.approx((frame.at[name, "low"], frame.at[name, "high"]), rel=1e-6), (k, name)
        assert not {"ndcg", "novelty", "coverage", "gini", "personalization", "ee_loss"} & set(read.missing)
    assert {"seen_in_training", "short_lists"} <= said
    assert ("ties_at_cutoff" in said) == (conventions.get("one_item_lists") == "self")


def test_counted_place_by_place_when_the_count_tables_would_not_fit(monkeypatch):
    from metrics_core.metrics import beyond_curves

    data = random_data(2)
    model = data.models[0]
    tables = data.evaluate(model, Settings(k=3), beyond_curves=True).beyond_curves.values
    monkeypatch.setattr(beyond_curves, "PLACE_COUNTS_BYTES", 0)
    columns = data.evaluate(model, Settings(k=3), beyond_curves=True).beyond_curves.values
    pd.testing.assert_frame_equal(tables, columns)


@pytest.mark.parametrize("seed", range(3))
def test_the_compiled_loops_at_k_give_the_numpy_values(seed, monkeypatch):
    """Novelty, ARP, popularity serendipity, diversity and intra-list similarity per user at K,
    by one compiled pass over the rows (large lists) and by numpy's gathers (small ones)."""

    data = random_data(seed, gaps=seed != 1)
    columns = ["novelty", "arp", "serendipity_popularity", "diversity", "intra_list_similarity"]
    for model in data.models:
        for k in (1, 3, 8):
            compiled_loops(monkeypatch, False)
            by_numpy = data.evaluate(model, Settings(k=k), curves=False).per_user[columns]
            compiled_loops(monkeypatch)
            compiled = data.evaluate(model, Settings(k=k), curves=False).per_user[columns]
            pd.testing.assert_frame_equal(compiled, by_numpy, rtol=1e-12, atol=1e-12)
            assert by_numpy.notna().any().all() or k == 1  # (diversity needs two items)


def test_past_the_kept_scores_the_notes_are_left_to_the_tables():
    """Lists built with the scores K = 3 reads (the first four) cannot say whether the lists tie
    at K = 6: no note is made up there."""
    rng = np.random.default_rng(4)
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(30), 8), "item_id": np.tile(np.arange(8), 30),
                         "score": rng.integers(0, 3, 240).astype(float)})
    truth = pd.DataFrame({"user_id": np.arange(30), "item_id": rng.integers(0, 8, 30)})
    data = Dataset.build(recs, truth, score_positions=Settings(k=3).score_positions)
    base = data.evaluate(data.models[0], Settings(k=3), beyond_curves=True)
    assert read_at(base, 2).warnings == data.evaluate(data.models[0], Settings(k=2), curves=False).warnings
    assert read_at(base, 3).warnings == base.warnings and any(n.code == "ties_at_cutoff" for n in base.warnings)
    assert read_at(base, 6).warnings is None


@pytest.mark.parametrize("read_only", [False, True])
def test_the_loops_meet_the_types_make_compiled(read_only, monkeypatch):
    """Every compiled loop of the beyond-accuracy metrics (at every k, and per row at K, calibration's
    among them) is called with argument types ``compile_all`` (``make``) compiled, lists mapped
    read-only included: none is compiled again at its first use in the app."""
    from metrics_core.inputs import kernels
    from metrics_core.metrics import prefix_kernels

    prefix_kernels.compile_all()
    kernels.compile_all()
    loops = {name: getattr(prefix_kernels, name) for name in dir(prefix_kernels)
             if hasattr(getattr(prefix_kernels, name), "signatures")}
    loops.update(mix_rows=kernels.mix_rows, miscalibration_rows=kernels.miscalibration_rows)
    before = {name: len(loop.signatures) for name, loop in loops.items()}
    compiled_loops(monkeypatch)  # (the per-row loops at K too)
    data = random_data(0)
    if read_only:
        for lists in data.lists.values():
            lists.items.flags.writeable = lists.hit.flags.writeable = False
    for model in data.models:
        for k in (3, 8):
            data.evaluate(model, Settings(k=k), beyond_curves=True)
    both = two_models(0, gaps=True)  # (the primitive-model loop: two models, scores float64 here)
    for model in both.models:
        for scale in ("rank", "minmax"):
            both.evaluate(model, Settings(k=3, primitive_scale=scale), beyond_curves=True)
    assert {name: len(loop.signatures) - before[name] for name, loop in loops.items()} == dict.fromkeys(loops, 0)


def test_a_few_per_user_columns_at_k_equal_the_whole_evaluations():
    """``Dataset.per_user_at`` computes the columns asked for alone (the app's Users page at a new
    K): each equals the whole evaluation's column, on the same users, with its hits."""
    from metrics_core.metrics import registry

    data = random_data(3)
    model = data.models[0]
    for settings in (Settings(k=4), Settings(k=2, fbeta="of_means", users_without_relevant="zero")):
        whole = data.evaluate(model, settings, curves=False).per_user
        for column in [*registry.per_user_columns().values(), "relevant"]:
            if column not in whole.columns:
                continue
            few = data.per_user_at(model, settings, [column])
            assert list(few.columns) == list(dict.fromkeys([column, "hits", "evaluated"])), column
            pd.testing.assert_frame_equal(few, whole.loc[few.index, few.columns], check_exact=False, rtol=1e-12,
                                          check_dtype=False,  # (hits: float in the whole, where NaN joins it)
                                          obj=column)
            assert whole.loc[~whole.index.isin(few.index), column].isna().all(), column  # (the rest: no value)
        mixed = [c for c in ("ndcg", "ap", "novelty", "diversity", "listed", "relevant") if c in whole.columns]
        few = data.per_user_at(model, settings, mixed)  # (accuracy and beyond-accuracy columns: joined, the rest not)
        assert list(few.columns) == [*mixed, "hits", "evaluated"] and "novelty" in mixed
        assert (~few["evaluated"]).any() or settings.users_without_relevant == "zero"  # (then: joined)
        pd.testing.assert_frame_equal(few, whole.loc[few.index, few.columns], check_exact=False, rtol=1e-12,
                                      check_dtype=False)


@pytest.mark.parametrize("conventions", CONVENTIONS, ids=range(len(CONVENTIONS)))
def test_what_a_read_k_misses_is_computed_alone_and_fills_it(conventions):
    """``Dataset.metrics_at`` with a read K's ``missing`` computes those metrics alone, and the read
    K it fills has every metric of the evaluation at K with its value, users and t interval; so
    does the read K filled with its accuracy metrics and, without the per-user join, its others."""
    from metrics_core.metrics import registry

    data = random_data(2)
    model = data.models[0]
    base = data.evaluate(model, Settings(k=3, **conventions), beyond_curves=True)
    for k in (1, 2, 5, data.lists[model].positions):
        settings = Settings(k=k, **conventions)
        at_k, read = data.evaluate(model, settings, curves=False), read_at(base, k)
        assert read.missing  # (score entropy, calibration, the whole-list accuracy metrics, ...)
        alone = data.metrics_at(model, settings, read.missing)
        assert set(alone.metrics) | set(alone.skipped) == set(read.missing), k
        beyond = [name for name in read.missing if registry.METRICS[name].family != "accuracy"]
        assert beyond  # (without the join: the beyond-accuracy metrics the app's read K lacks)
        unjoined = data.metrics_at(model, settings, beyond, notes=False, joined=False)
        accuracy = data.metrics_at(model, settings, [name for name in read.missing if name not in beyond])
        for whole in (filled(read, alone), filled(filled(read, accuracy), unjoined)):
            assert whole.missing == [] and set(whole.metrics) == set(at_k.metrics), k
            frame = at_k.to_frame()
            for name, value in at_k.metrics.items():
                assert whole.metrics[name] == pytest.approx(value, rel=1e-12, abs=1e-12, nan_ok=True), (k, name)
                assert whole.users_of(name) == at_k.users_of(name), (k, name)
                expected = frame.loc[name, ["low", "high"]].to_numpy(dtype=float)
                interval = whole.interval(name)
                if interval is not None:
                    assert interval == pytest.approx(tuple(expected), rel=1e-6), (k, name)
                elif name in alone.metrics:  # (computed: an interval wherever the evaluation gives one)
                    assert np.isnan(expected).all(), (k, name)


@pytest.mark.parametrize("conventions", CONVENTIONS, ids=range(len(CONVENTIONS)))
def test_each_metric_computed_alone_equals_the_whole_evaluation(conventions):
    """Every metric asked of ``metrics_at`` by itself has the whole evaluation's value and per-user
    column, and nothing else is reported (the groups of the beyond-accuracy pass run alone)."""
    from metrics_core.metrics import registry

    data = random_data(4)
    model = data.models[0]
    settings = Settings(k=4, **conventions)
    whole = data.evaluate(model, settings, curves=False)
    for name in [*whole.metrics, *whole.skipped]:
        alone = data.metrics_at(model, settings, [name])
        assert set(alone.metrics) | set(alone.skipped) == {name}, name
        if name in whole.skipped:
            assert alone.skipped[name] == whole.skipped[name], name
            continue
        assert alone.metrics[name] == pytest.approx(whole.metrics[name], rel=1e-12, abs=1e-12), name
        column = registry.METRICS[name].per_user
        if column:
            pd.testing.assert_series_equal(alone.per_user[column], whole.per_user.loc[alone.per_user.index, column],
                                           check_exact=False, rtol=1e-12, obj=name)


def test_a_metric_computed_alone_refuses_what_the_evaluation_refuses():
    """A category column the item table lacks is refused by ``metrics_at`` as by ``evaluate``,
    whichever beyond-accuracy metrics are asked for (novelty reads no category)."""
    from metrics_core import InputError

    data = random_data(5)
    model = data.models[0]
    settings = Settings(k=3, category_column="no_such_column")
    with pytest.raises(InputError, match="no_such_column") as whole:
        data.evaluate(model, settings)
    with pytest.raises(InputError, match="no_such_column") as alone:
        data.metrics_at(model, settings, ["novelty"])
    assert str(alone.value) == str(whole.value)


def test_metrics_at_refuses_what_evaluate_refuses_joined_or_not():
    """An unknown model is an InputError naming the models, whether the per-user values are joined
    with the evaluated users' or not (a KeyError before), as from ``evaluate``."""
    from metrics_core.errors import InputError

    data = random_data(0)
    with pytest.raises(InputError, match="no model named 'nope'") as by_evaluate:
        data.evaluate("nope", Settings(k=3))
    for joined in (True, False):
        with pytest.raises(InputError, match="no model named 'nope'") as alone:
            data.metrics_at("nope", Settings(k=3), ["novelty"], joined=joined)
        assert str(alone.value) == str(by_evaluate.value)
