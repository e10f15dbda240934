"""The report's best and worst cases: a few users, the leader's and the runner-up's top K side by
side, relevant items marked, and what each list missed (see :mod:`metrics_core.stats.examples`
for how the users are picked)."""

from __future__ import annotations

import html
from dataclasses import dataclass

import pandas as pd

from metrics_core.engines.memory.cases import Case
from metrics_core.metrics import registry
from metrics_core.result import Evaluation
from metrics_core.stats.examples import Examples, telling_users
from metrics_core.stats.verdict import LEAD_METRIC


@dataclass(frozen=True)
class CaseStudy:
    """The picked users (``examples``) and each one's case, read from the dataset at K; ``item_column``
    names the items (a title) when the item table has one, else items show by id."""

    examples: Examples
    cases: dict[object, Case]
    k: int
    item_column: str | None


def case_study(dataset, results: dict[str, Evaluation], metric: str = LEAD_METRIC, n: int = 3) -> CaseStudy | None:
    """The best and worst cases of ``metric`` for the report (None when there is nothing to pick from)."""
    examples = telling_users(results, metric, n)
    if examples is None or not (examples.best or examples.worst):
        return None
    k = next(iter(results.values())).k
    item_column = _item_column(dataset)
    users = [*examples.best, *examples.worst]
    found = dataset.cases(users, k=k, history=0, item_columns=[item_column] if item_column else None,
                          models=list(examples.models))
    return CaseStudy(examples, dict(zip(users, found, strict=True)), k, item_column)


def _item_column(dataset) -> str | None:
    """``title`` when the item table has it, else its first text column other than the item id."""
    table = dataset.item_table
    if table is None:
        return None
    if "title" in table.columns:
        return "title"
    text = [c for c in table.columns if c != dataset.columns.item and pd.api.types.is_string_dtype(table[c])]
    return text[0] if text else None


def study_html(study: CaseStudy) -> str:
    """The section's HTML: how the users were picked, then one block per user."""
    examples, k = study.examples, study.k
    called = registry.label(examples.metric, k)
    if examples.runner_up is None:
        intro = (f"The users with the highest and the lowest {called} for {examples.leader} (ties: more relevant "
                 "items first).")
    else:
        intro = (f"Where {examples.leader} gains most over {examples.runner_up} on {called}, and where it loses "
                 "most: it wins on average and still loses for some users.")
    parts = [f"<p class='meta'>{html.escape(intro)} Relevant items are marked <span class='hit'>hit</span>.</p>"]
    for heading, users in (("Best cases", examples.best), ("Worst cases", examples.worst)):
        if users:
            parts.append(f"<h3>{heading}</h3>")
            parts += [_user_html(study, user) for user in users]
    return "\n".join(parts)


def _user_html(study: CaseStudy, user) -> str:
    examples, case = study.examples, study.cases[user]
    values = examples.values.loc[user]
    scores = ", ".join(f"{html.escape(str(m))} {values[m]:.4f}" for m in examples.models)
    columns = {}
    for model in examples.models:
        recs = case.recommendations[case.recommendations.model == model]
        columns[model] = [_item_cell(row, study.item_column) for row in recs.to_dict("records")]
    length = max((len(c) for c in columns.values()), default=0)
    rows = "".join("<tr><td>" + str(rank + 1) + "</td>"
                   + "".join(f"<td>{cells[rank] if rank < len(cells) else ''}</td>" for cells in columns.values())
                   + "</tr>" for rank in range(length))
    head = "".join(f"<th>{html.escape(str(m))}</th>" for m in examples.models)
    missed = "; ".join(f"{html.escape(str(m))} missed {int((case.missed.model == m).sum())}" for m in examples.models)
    relevant = int(pd.Series(case.missed.model == examples.leader).sum()
                   + case.recommendations[case.recommendations.model == examples.leader].relevant.sum())
    return (f"<div class='case'><p><b>User {html.escape(str(user))}</b> · {relevant} relevant item"
            f"{'s' * (relevant != 1)} · {html.escape(registry.label(examples.metric, study.k))}: {scores}</p>"
            f"<table class='numbers case-list'><tr><th>rank</th>{head}</tr>{rows}</table>"
            f"<p class='meta'>Relevant items outside the top {study.k}: {missed}.</p></div>")


def _item_cell(row: dict, item_column: str | None) -> str:
    name = row.get(item_column) if item_column else None
    text = html.escape(str(name if name is not None and not pd.isna(name) else row["item_id"]))
    return f"<span class='hit'>{text}</span>" if row["relevant"] else text
