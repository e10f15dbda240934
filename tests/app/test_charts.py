"""Chart builders: titles, axis titles, tooltips, and one colour per model everywhere."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from dashboard import charts

MODELS = ["a", "b", "c"]


def spec(chart) -> dict:
    return json.loads(chart.to_json())


def walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def encodings(chart) -> list[dict]:
    return [n["encoding"] for n in walk(spec(chart)) if "encoding" in n]


def check(chart) -> dict:
    tree = spec(chart)
    titles = [n["title"] for n in walk(tree) if "title" in n and isinstance(n.get("title"), str)]
    assert titles, "chart has titles"
    assert any("tooltip" in e for e in encodings(chart)), "chart has tooltips"
    for encoding in (e for e in encodings(chart) if "tooltip" in e):  # the data layers, not rules
        for channel in ("x", "y"):
            if channel in encoding and "field" in encoding[channel]:
                assert "title" in encoding[channel], f"{channel} axis has a title"
    return tree


def colours(chart) -> dict:
    for encoding in encodings(chart):
        scale = encoding.get("color", {}).get("scale", {})
        if scale.get("domain") == MODELS:
            return dict(zip(scale["domain"], scale["range"], strict=True))
    raise AssertionError("no model colour scale")


def test_every_chart_is_labelled_and_models_keep_their_colours():
    rng = np.random.default_rng(0)
    curves = pd.DataFrame({"model": np.repeat(MODELS, 5), "k": np.tile(np.arange(1, 6), 3), "value": rng.random(15)})
    values = pd.DataFrame({"model": np.repeat(MODELS, 20), "value": rng.random(60), "segment": "x"})
    tail = pd.DataFrame({"bucket": np.tile(np.arange(1, 11), 3), "training": 10.0, "recommended": rng.random(30),
                         "model": np.repeat(MODELS, 10)})
    built = [charts.metric_curves(curves, "NDCG", 3, MODELS), charts.distribution(values, "NDCG@3", MODELS),
             charts.distribution(values, "NDCG@3", MODELS, by="segment"), charts.long_tail(tail, MODELS)]
    for chart in built:
        check(chart)
    assert len({json.dumps(colours(c), sort_keys=True) for c in built}) == 1


def test_the_long_tail_log_axis_is_ticked_at_powers_of_ten():
    tail = pd.DataFrame({"bucket": np.tile(np.arange(10), 2), "training": np.tile(np.geomspace(850, 1, 10), 2),
                         "recommended": np.geomspace(1_200, 0.5, 20), "model": np.repeat(["a", "b"], 10)})
    spec = charts.long_tail(tail, ["a", "b"]).to_dict()
    assert spec["layer"][0]["encoding"]["y"]["axis"]["values"] == [0, 1, 10, 100, 1_000, 10_000]


def test_bias_score_and_scatter_charts():
    dist = pd.DataFrame({"value": ["x", "y", "x", "y"], "group": ["recommendations"] * 2 + ["catalog"] * 2,
                         "share": [0.7, 0.3, 0.5, 0.5]})
    check(charts.bias(dist, "genre", "genre: recommendations vs catalog"))
    hist = pd.DataFrame({"model": "a", "part": ["top 10", "rest"], "bin_start": [0.0, 0.0], "bin_end": [1.0, 1.0],
                         "share": [1.0, 1.0]})
    check(charts.score_histograms(hist, ["a"]))
    pair = pd.DataFrame({"user": ["1", "2"], "a": [0.1, 0.2], "b": [0.3, 0.1]})
    check(charts.scatter(pair, "a", "b", "NDCG"))
