"""Scores: how scores are distributed in the top K and below, and per-user score entropy."""

import pandas as pd
import streamlit as st

from dashboard import charts, components, state
from dashboard.summaries import SCORE_BINS, model_column
from dashboard.text import plain

settings, models = state.settings(), state.model_names()
# A new K (issue #43): read from the first evaluation's curves, with score entropy per user computed alone.
read = state.read_at_k([]) or state.evaluations(settings)
dataset = state.dataset()
k = settings.k

st.title("Scores")
scored = [m for m in models if dataset.lists[m].scores is not None]
for name in models:
    if name not in scored:
        st.info(f"**{plain(name)}** gives ranks only, so there are no scores to show. Add a score column to see them.")
if scored:
    def drawn() -> tuple:
        """The score histograms of every scored model, and the score entropy's distribution."""
        histograms = pd.concat([dataset.score_distribution(name, k, bins=SCORE_BINS).assign(model=name)
                                for name in scored],
                               ignore_index=True)
        results = state.with_per_user(read, ["score_entropy"])
        entropies = {name: results[name].per_user["score_entropy"].dropna().to_numpy() for name in scored}
        values = pd.concat([pd.DataFrame({"model": model_column(name, models, len(column)), "value": column})
                            for name, column in entropies.items()], ignore_index=True)
        return (charts.score_histograms(histograms, scored),
                charts.distribution(values, f"score entropy@{k}", models))

    histograms, entropy = state.memo("scores", (), drawn)
    components.chart(histograms, "scores", "dl_scores")
    st.markdown(f"Score entropy is the entropy of the softmax of each user's top-{k} scores: near 0 when one item "
                f"dominates, up to ln {k} = {__import__('math').log(k):.2f} when all are equally likely.")
    components.chart(entropy, "score_entropy", "dl_entropy")
