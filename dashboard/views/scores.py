"""Scores: how scores are distributed in the top K and below, and score entropy (per user, or
pooled over every user's top K under ``score_entropy="pooled"``, as the Evidently preset has it)."""

import math

import pandas as pd
import streamlit as st

from dashboard import charts, components, state
from dashboard.glossary import fmt
from dashboard.summaries import model_column
from dashboard.text import plain
from metrics_core.metrics.scores import SCORE_BINS

settings, models = state.settings(), state.model_names()
pooled = settings.score_entropy == "pooled"  # (one value per model: no per-user distribution)
# A new K (issue #43): read from the first evaluation's curves, with score entropy computed alone.
read = state.read_at_k(["score_entropy"] if pooled else []) or state.evaluations(settings)
dataset = state.dataset()
k = settings.k

st.title("Scores")
scored = [m for m in models if dataset.lists[m].scores is not None]
for name in models:
    if name not in scored:
        st.info(f"**{plain(name)}** gives ranks only, so there are no scores to show. Add a score column to see them.")
if scored:
    def drawn() -> tuple:
        """The score histograms of every scored model, and the score entropy's distribution over
        users (None when it is pooled)."""
        histograms = pd.concat([dataset.score_distribution(name, k, bins=SCORE_BINS).assign(model=name)
                                for name in scored],
                               ignore_index=True)
        if pooled:
            return charts.score_histograms(histograms, scored), None
        per_user = state.values_at_k(read, ["score_entropy"])
        entropies = {name: per_user[name]["score_entropy"].dropna().to_numpy() for name in scored}
        values = pd.concat([pd.DataFrame({"model": model_column(name, models, len(column)), "value": column})
                            for name, column in entropies.items()], ignore_index=True)
        return (charts.score_histograms(histograms, scored),
                charts.distribution(values, f"score entropy@{k}", models))

    histograms, entropy = state.memo("scores", (), drawn)
    components.chart(histograms, "scores", "dl_scores")
    if pooled:
        st.markdown(f"Score entropy is pooled here (`score_entropy = pooled`): the entropy of one softmax over "
                    f"every user's top-{k} scores together, so it grows with the number of users and compares "
                    "runs of the same size only.")
        for column, name in zip(st.columns(min(4, len(scored))) * len(scored), scored, strict=False):
            column.metric(plain(name), fmt("score_entropy", read[name].metrics.get("score_entropy")), border=True)
    else:
        st.markdown(f"Score entropy is the entropy of the softmax of each user's top-{k} scores: near 0 when one "
                    f"item dominates, up to ln {k} = {math.log(k):.2f} when all are equally likely.")
        components.chart(entropy, "score_entropy", "dl_entropy")
