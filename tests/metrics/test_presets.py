"""Each preset reproduces its peer: the peers' numbers on generated data (computed by the peers
themselves in their own environment, .venv-peers, built by ``make peers-venv``; skipped when it
is absent), and the peers' documented examples transcribed as expected values."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metrics_core import Dataset, Settings, evaluate
from metrics_core.settings import encoding_for

ROOT = Path(__file__).resolve().parents[2]
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"
PEERS_READY = ROOT / ".venv-peers" / ".installed"  # written only once every peer is installed
K = 5


def peer_data(seed: int = 0) -> dict[str, pd.DataFrame]:
    """Lists of 12 by rank with distinct positive scores; every relevant item is listed (as
    torchmetrics, which only sees scored items, needs); some users have no relevant item; some
    recommended items are unknown to training; training pairs are distinct and never
    recommended to the same user (Recommenders requires it)."""
    rng = np.random.default_rng(seed)
    n_users, n_items = 150, 80
    rows, truth = [], []
    for user in range(n_users):
        listed = rng.choice(n_items, 12, replace=False)
        scores = np.sort(rng.random(12))[::-1] + 0.01
        rows += [(user, int(item), rank + 1, float(score))
                 for rank, (item, score) in enumerate(zip(listed, scores, strict=True))]
        if user % 7:
            truth += [(user, int(item)) for item in rng.choice(listed, rng.integers(1, 5), replace=False)]
    recs = pd.DataFrame(rows, columns=["user_id", "item_id", "rank", "score"])
    train = pd.DataFrame({"user_id": rng.integers(0, n_users + 20, 2500),
                          "item_id": rng.integers(0, n_items - 6, 2500)})
    train = train.drop_duplicates().merge(recs[["user_id", "item_id"]], how="left", indicator=True)
    train = train[train["_merge"] == "left_only"].drop(columns="_merge")  # nothing recommended was seen
    return {
        "recs": recs,
        "truth": pd.DataFrame(truth, columns=["user_id", "item_id"]),
        "train": train.reset_index(drop=True),
        "items": pd.DataFrame({"item_id": np.arange(n_items), "genre": rng.integers(0, 4, n_items),
                               "year": rng.integers(1990, 1994, n_items)}),
    }


@pytest.fixture(scope="module")
def peers(tmp_path_factory) -> tuple[dict, dict]:
    if not PEERS_READY.exists():
        pytest.skip("the peers' environment is absent (make peers-venv)")
    data = peer_data()
    folder = tmp_path_factory.mktemp("peers")
    for name, frame in data.items():
        frame.to_csv(folder / f"{'truth' if name == 'truth' else name}.csv", index=False)
    done = subprocess.run([str(PEERS_PYTHON), str(ROOT / "tests" / "peers" / "run_peers.py"), str(folder), str(K)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return data, json.loads(done.stdout.strip().splitlines()[-1])


def ours(data: dict, preset: str) -> dict[str, float]:
    dataset = Dataset.build({"model": data["recs"]}, data["truth"], train=data["train"], items=data["items"],
                            feature_columns=["genre", "year"], encoding=encoding_for(preset))
    return dataset.evaluate("model", Settings(k=K, preset=preset)).metrics


@pytest.mark.parametrize("preset", ["rectools", "recommenders", "torchmetrics"])
def test_preset_reproduces_its_peer(peers, preset):
    data, numbers = peers
    mine = ours(data, preset)
    for metric, theirs in numbers[preset].items():
        if preset == "recommenders" and metric == "coverage":
            continue  # it divides by the training items but counts recommended items outside them
        tolerance = 1e-6 if preset == "torchmetrics" else 1e-9  # torchmetrics computes in float32
        assert mine[metric] == pytest.approx(theirs, abs=tolerance), (preset, metric)


def test_the_defaults_differ_from_the_peers_where_the_readme_says(peers):
    """The presets matter: rankscope's defaults give other numbers for these metrics."""
    data, numbers = peers
    mine = ours(data, "rankscope")
    assert mine["ndcg"] != pytest.approx(numbers["rectools"]["ndcg"], abs=1e-6)  # K relevant items in the ideal
    assert mine["novelty"] != pytest.approx(numbers["rectools"]["novelty"], abs=1e-6)  # cold items
    assert mine["map"] != pytest.approx(numbers["torchmetrics"]["map"], abs=1e-6)  # AP over the hits


# The peers' documented examples, transcribed (their docstrings; the inputs are theirs).

def test_rectools_mean_inv_user_freq_docstring_example():
    recs = pd.DataFrame({"user_id": [1, 2, 2, 3, 3], "item_id": [3, 2, 3, 1, 2], "rank": [1, 1, 2, 1, 2]})
    prev = pd.DataFrame({"user_id": [1, 1, 2, 3], "item_id": [1, 2, 1, 1]})
    truth = pd.DataFrame({"user_id": [1, 2, 3], "item_id": [1, 1, 1]})
    for k, expected in ((1, [1.5849625, 1.5849625, 0.0]), (3, [1.5849625, 1.5849625, 0.79248125])):
        result = evaluate(recs, truth, k=k, train=prev, preset="rectools")
        np.testing.assert_allclose(result.per_user.loc[[1, 2, 3], "novelty"], expected, atol=1e-7)


def test_rectools_avg_rec_popularity_docstring_example():
    recs = pd.DataFrame({"user_id": [1, 1, 2, 2, 3, 3], "item_id": [1, 2, 3, 1, 1, 2], "rank": [1, 2, 1, 2, 1, 2]})
    prev = pd.DataFrame({"user_id": [1, 1, 2, 2, 3, 4], "item_id": [1, 2, 1, 3, 1, 2]})
    truth = pd.DataFrame({"user_id": [1, 2, 3], "item_id": [1, 1, 1]})
    np.testing.assert_allclose(evaluate(recs, truth, k=1, train=prev, preset="rectools").per_user["arp"],
                               [3.0, 1.0, 3.0])
    np.testing.assert_allclose(evaluate(recs, truth, k=3, train=prev, preset="rectools").per_user["arp"],
                               [2.5, 2.0, 2.5])


def test_torchmetrics_docstring_examples():
    # retrieval_average_precision(tensor([0.2, 0.3, 0.5]), tensor([True, False, True])) == 0.8333
    recs = pd.DataFrame({"user_id": [0, 0, 0], "item_id": [1, 2, 3], "score": [0.2, 0.3, 0.5]})
    truth = pd.DataFrame({"user_id": [0, 0], "item_id": [1, 3]})
    result = evaluate(recs, truth, k=3, preset="torchmetrics")
    assert result.metrics["map"] == pytest.approx(0.8333, abs=1e-4)
    # retrieval_normalized_dcg(tensor([.1, .2, .3, 4, 70]), tensor([10, 0, 0, 1, 5])) == 0.6957
    recs = pd.DataFrame({"user_id": [0] * 5, "item_id": [1, 2, 3, 4, 5], "score": [0.1, 0.2, 0.3, 4, 70]})
    truth = pd.DataFrame({"user_id": [0, 0, 0], "item_id": [1, 4, 5], "grade": [10, 1, 5]})
    from metrics_core.inputs.columns import Columns

    result = evaluate(recs, truth, k=5, preset="torchmetrics", columns=Columns(relevance="grade"))
    assert result.metrics["ndcg"] == pytest.approx(0.6957, abs=1e-4)


def test_recommenders_novelty_by_its_definition():
    """Σ c_i·−log2(n_i / N) / Σ c_i: two recommendations of a once-seen item among N = 4 rows."""
    recs = pd.DataFrame({"user_id": [1, 2], "item_id": [10, 10], "rank": [1, 1]})
    train = pd.DataFrame({"user_id": [1, 2, 3, 3], "item_id": [10, 11, 11, 12]})
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": [10, 11]})
    assert evaluate(recs, truth, k=1, train=train, preset="recommenders").metrics["novelty_interactions"] == \
        pytest.approx(-math.log2(1 / 4))


def test_rectools_partial_auc_and_pap_docstring_examples():
    """RecTools 0.19's PartialAUC and PAP docstrings (insufficient_handling="ignore", their default)."""
    recs = pd.DataFrame({"user_id": [1, 1, 2, 2, 2, 3, 3], "item_id": [1, 2, 3, 1, 2, 3, 2],
                         "rank": [1, 2, 1, 2, 3, 1, 2]})
    truth = pd.DataFrame({"user_id": [1, 1, 2, 2, 3, 3], "item_id": [1, 2, 1, 3, 1, 2]})
    for k, expected in ((1, [1.0, 1.0, 0.0]), (3, [1.0, 1.0, 1 / 3])):
        per_user = evaluate(recs, truth, k=k, preset="rectools").per_user
        assert per_user["pauc"].tolist() == pytest.approx(expected, abs=1e-12)
        assert per_user["pap"].tolist() == pytest.approx(expected, abs=1e-12)
