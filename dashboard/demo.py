"""The demo workspace: a small, realistic, deterministic world and three models.

A catalog of films with titles, genres, years and a Zipf popularity; users with an age
group, a country and a taste over genres; a training history with timestamps; held-out
ratings (1-5) as the ground truth; and three models of clearly different character:

* ``popularity``: the most watched films the user has not seen (one list for everyone);
* ``personalised``: popularity blended with the user's genre profile from training;
* ``diverse``: the personalised candidates re-ranked so that genres repeat less.

``python -m dashboard.demo DIR`` writes the CSV files; the same seed gives the same bytes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

GENRES = ["Drama", "Comedy", "Thriller", "Romance", "Sci-Fi", "Animation", "Documentary", "Horror"]
ADJECTIVES = ["Silent", "Crimson", "Last", "Hidden", "Golden", "Broken", "Distant", "Electric", "Quiet", "Wild",
              "Frozen", "Secret", "Burning", "Velvet", "Paper", "Iron", "Midnight", "Summer", "Lonely", "Bright"]
NOUNS = ["Harbor", "Garden", "Signal", "Orchard", "Frontier", "Letter", "Machine", "River", "Kingdom", "Archive",
         "Lighthouse", "Circus", "Mirror", "Voyage", "Station", "Horizon", "Island", "Promise", "Engine", "Forest"]
COUNTRIES = ["DE", "FR", "GB", "PL", "ES", "IT", "NL", "SE"]
AGE_GROUPS = ["18-24", "25-34", "35-44", "45-54", "55+"]
MODELS = ("popularity", "personalised", "diverse")
TOP_K = 20
DAY = 86_400
START = 1_700_000_000  # 2023-11-14


def generate(n_users: int = 1500, n_items: int = 800, seed: int = 7) -> dict[str, pd.DataFrame]:
    """Every table of the demo workspace, by name."""
    rng = np.random.default_rng(seed)
    items = _items(rng, n_items)
    users = _users(rng, n_users)
    taste = rng.dirichlet(np.full(len(GENRES), 0.4), size=n_users)
    genre_of = items["genre"].map({g: i for i, g in enumerate(GENRES)}).to_numpy()
    train, truth = _interactions(rng, items, taste, genre_of)
    tables = {"items": items, "users": users, "train": train, "ground_truth": truth}
    seen = set(zip(train.user_id, train.item_id, strict=True))
    for name, scores in _model_scores(rng, train, items, genre_of, n_users).items():
        tables[f"recs_{name}"] = _top_k(scores, seen, items, genre_of, diverse=name == "diverse")
    return tables


def _items(rng, n_items):
    titles, used = [], set()
    while len(titles) < n_items:
        title = f"The {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}"
        if title in used:
            title = f"{title} {rng.integers(2, 5)}"
        if title not in used:
            used.add(title)
            titles.append(title)
    popularity = 1.0 / np.arange(1, n_items + 1) ** 0.9
    rng.shuffle(popularity)
    return pd.DataFrame({
        "item_id": np.arange(1, n_items + 1),
        "title": titles,
        "genre": rng.choice(GENRES, size=n_items, p=[.2, .18, .14, .12, .1, .1, .06, .1]),
        "year": rng.integers(1975, 2024, size=n_items),
        "popularity": np.round(popularity / popularity.max(), 5),
    })


def _users(rng, n_users):
    return pd.DataFrame({
        "user_id": np.arange(1, n_users + 1),
        "age_group": rng.choice(AGE_GROUPS, size=n_users, p=[.15, .3, .25, .18, .12]),
        "country": rng.choice(COUNTRIES, size=n_users),
    })


def _interactions(rng, items, taste, genre_of):
    n_users, n_items = len(taste), len(items)
    activity = np.clip(rng.lognormal(3.0, 0.7, size=n_users).astype(int), 6, 150)
    logits = np.log(items["popularity"].to_numpy())[None, :] + np.log(taste[:, genre_of] + 1e-3) * 1.5
    gumbel = logits + rng.gumbel(size=(n_users, n_items))
    order = np.argsort(-gumbel, axis=1)
    rows = []
    for user in range(n_users):  # the generator, not a metric: a loop keeps it readable
        chosen = order[user, : activity[user]]
        times = np.sort(rng.uniform(0, 180, size=len(chosen))) * DAY + START
        rows.append(pd.DataFrame({"user_id": user + 1, "item_id": chosen + 1, "timestamp": times.astype(np.int64),
                                  "affinity": taste[user, genre_of[chosen]]}))
    log = pd.concat(rows, ignore_index=True)
    cutoff = log.groupby("user_id")["timestamp"].transform(lambda t: t.quantile(0.8))
    train = log[log.timestamp <= cutoff][["user_id", "item_id", "timestamp"]].reset_index(drop=True)
    test = log[log.timestamp > cutoff].reset_index(drop=True)
    rating = 1 + 4 * test["affinity"].rank(pct=True) + rng.normal(0, 0.8, size=len(test))
    truth = pd.DataFrame({"user_id": test.user_id, "item_id": test.item_id,
                          "rating": np.clip(np.round(rating), 1, 5).astype(int)})
    return train, truth


def _model_scores(rng, train, items, genre_of, n_users):
    n_items = len(items)
    counts = np.bincount(train.item_id - 1, minlength=n_items).astype(float)
    profile = np.zeros((n_users, len(GENRES)))
    np.add.at(profile, (train.user_id.to_numpy() - 1, genre_of[train.item_id.to_numpy() - 1]), 1.0)
    profile = (profile + 0.5) / (profile + 0.5).sum(axis=1, keepdims=True)
    log_pop = np.log1p(counts)
    personalised = 0.55 * log_pop[None, :] + 2.2 * np.log(profile[:, genre_of]) + rng.normal(0, 0.35,
                                                                                          (n_users, n_items))
    return {"popularity": np.broadcast_to(counts, (n_users, n_items)).copy(),
            "personalised": personalised, "diverse": personalised}


def _top_k(scores, seen, items, genre_of, diverse):
    n_users, _ = scores.shape
    scores = scores.copy()
    for user, item in seen:
        scores[user - 1, item - 1] = -np.inf
    candidates = np.argsort(-scores, axis=1, kind="stable")[:, : TOP_K * 4]
    picked = _rerank_by_genre(scores, candidates, genre_of) if diverse else candidates[:, :TOP_K]
    value = np.take_along_axis(scores, picked, axis=1)
    return pd.DataFrame({
        "user_id": np.repeat(np.arange(1, n_users + 1), TOP_K),
        "item_id": picked.ravel() + 1,
        "score": np.round(value.ravel(), 4),
        "rank": np.tile(np.arange(1, TOP_K + 1), n_users),
    })


def _rerank_by_genre(scores, candidates, genre_of, penalty=0.9):
    """Greedy re-ranking: each pick lowers the score of its genre's remaining candidates."""
    n_users = len(candidates)
    base = np.take_along_axis(scores, candidates, axis=1)
    genres = genre_of[candidates]
    taken = np.zeros_like(base, dtype=bool)
    used = np.zeros((n_users, len(GENRES)))
    picked = np.empty((n_users, TOP_K), dtype=np.int64)
    rows = np.arange(n_users)
    for position in range(TOP_K):
        adjusted = np.where(taken, -np.inf, base - penalty * used[rows[:, None], genres])
        best = np.argmax(adjusted, axis=1)
        picked[:, position] = candidates[rows, best]
        taken[rows, best] = True
        used[rows, genres[rows, best]] += 1
    return picked


def write(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, table in generate().items():
        table.to_csv(directory / f"{name}.csv", index=False)


if __name__ == "__main__":
    write(Path(sys.argv[1] if len(sys.argv) > 1 else "data"))
