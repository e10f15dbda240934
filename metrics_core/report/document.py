"""One self-contained HTML report of an evaluation, and every number as JSON or CSV.

The charts are Vega-Lite specs rendered in the page by Vega-Embed, whose JavaScript is
inlined from the installed ``vl-convert-python`` package: the file opens offline and loads
no script or style from the network. No Streamlit here: the CLI and the app both use it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import json
from dataclasses import asdict
from pathlib import Path

import altair as alt
import pandas as pd

from metrics_core import __version__, charts
from metrics_core.intervals import LEVEL
from metrics_core.jsonable import plain
from metrics_core.metrics import registry
from metrics_core.report.cases import CaseStudy, study_html
from metrics_core.result import Evaluation
from metrics_core.stats.compare import Comparison
from metrics_core.stats.verdict import LEAD_METRIC, SUMMARY_METRICS, half_width, verdict


def fingerprint(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def file_fingerprints(paths: dict[str, str | Path | None]) -> dict[str, str]:
    return {name: fingerprint(Path(path).read_bytes()) for name, path in paths.items()
            if path is not None and Path(path).is_file()}


def numbers(results: dict[str, Evaluation], comparison: Comparison | None = None, **context) -> dict:
    """Every number of the evaluation as one JSON-ready dict."""
    first = next(iter(results.values()))
    out = {"rankscope_version": __version__, "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
           "settings": asdict(first.settings), "encoding": asdict(first.encoding), **context,
           "models": {name: {**r.to_dict(), "curves": r.curves.reset_index().to_dict(orient="list")}
                      for name, r in results.items()}}
    if comparison is not None:
        out["comparison"] = comparison.to_dict()
    return plain(out)


def numbers_csv(results: dict[str, Evaluation], comparison: Comparison | None = None) -> str:
    """A long table: model, metric, value, and the comparison columns where there is one."""
    rows = [{"model": name, "metric": metric, "value": value} for name, r in results.items()
            for metric, value in r.metrics.items()]
    frame = pd.DataFrame(rows)
    if comparison is not None and len(comparison.rows):
        extra = comparison.rows.drop(columns=["value"]).rename(columns={"users": "paired_users"})
        frame = frame.merge(extra, on=["model", "metric"], how="left")
    return frame.to_csv(index=False)


def report_html(results: dict[str, Evaluation], comparison: Comparison | None = None, title: str = "rankscope report",
                fingerprints: dict[str, str] | None = None, workspace: str | None = None,
                cases: CaseStudy | None = None, served: dict[str, pd.DataFrame] | None = None,
                gaps: dict[str, str] | None = None, served_by: str | None = None) -> str:
    """The report as one HTML string, in the order a reader needs it: which model wins (the
    verdicts), the headline metrics with their intervals, the curves and the comparison, a few
    best and worst cases (``cases``, from :func:`metrics_core.report.cases.case_study`), who is served
    among popular and niche items, or the groups of the item column ``served_by`` (``served``, from
    :func:`metrics_core.stats.served.items_by_model`) and
    between user groups (``gaps``, from :func:`metrics_core.stats.served.gap_sentences`), every
    metric (one row per metric, one column per model: it wraps at any number of models), notes
    about the data, and last the settings and the fingerprint of every input file. The title
    names the workspace and the date; it prints to PDF from a browser (print styles)."""
    import vl_convert as vlc

    models = list(results)
    first = next(iter(results.values()))
    k = first.k
    created = dt.datetime.now(dt.UTC)
    heading = f"{workspace} · {title}" if workspace else title

    figures: list[tuple[str, alt.TopLevelMixin]] = []
    lead = registry.METRICS[LEAD_METRIC].label
    curves = pd.concat([r.curves[[LEAD_METRIC]].rename(columns={LEAD_METRIC: "value"}).assign(model=name).reset_index()
                        for name, r in results.items()], ignore_index=True)
    figures.append((f"{lead} at every cut-off", charts.metric_curves(curves, lead, k, models)))
    if comparison is not None:
        for metric in comparison.intervals["metric"].unique():
            part = comparison.intervals[comparison.intervals.metric == metric]
            called = registry.label(metric, k)
            figures.append((f"{called} with intervals", charts.intervals(part, called, models, comparison.level)))
    figures += _beyond_figures(results, k)
    per_user = registry.per_user_columns()
    headline = [m for m in SUMMARY_METRICS if any(m in r.metrics for r in results.values())]
    verdicts = [verdict(results, m) for m in headline if m in per_user and len(models) > 1]
    summary = pd.DataFrame({registry.label(m, k): [_with_interval(results[name], m) for name in models]
                            for m in headline}, index=pd.Index(models, name="model"))
    every = pd.DataFrame({name: r.metrics for name, r in results.items()})
    every.index = pd.Index([registry.label(m, k) for m in every.index], name="metric")
    sections = [
        f"<h1>{html.escape(heading)}</h1>",
        f"<p class='meta'>{created:%Y-%m-%d %H:%M} UTC · {len(models)} model{'s' * (len(models) > 1)} · "
        f"{first.users['evaluated']:,} users evaluated · K = {k} · rankscope {__version__}</p>",
    ]
    if verdicts:
        calls = "".join(f"<li><b>{html.escape(v.label)}</b>: {html.escape(v.sentence())}</li>" for v in verdicts)
        sections += ["<h2>Which model wins</h2>", f"<ul class='verdicts'>{calls}</ul>"]
    sections += ["<h2>Headline metrics</h2>",
                 "<p class='meta'>Each value ± the half-width of its 95% interval (the t interval of the mean over "
                 "users; coverage, a count over the catalog, has none).</p>", _table(summary)]
    sections.append("<h2>Charts</h2>")
    calls = []
    for index, (name, figure) in enumerate(figures):
        sections.append(f"<h3>{html.escape(name)}</h3><div class='chart' id='chart{index}'></div>")
        spec = script_json(figure.properties(width=640).to_dict())
        calls.append(f"vegaEmbed('#chart{index}', {spec}, {{actions: false, renderer: 'svg'}});")
    if comparison is not None and len(comparison.rows):
        readable = "".join(f"<li>{html.escape(comparison.sentence(row.model, row.metric))}</li>"
                           for row in comparison.rows.itertuples())
        sections += [f"<h2>Against the baseline ({html.escape(comparison.baseline)})</h2>", f"<ul>{readable}</ul>",
                     _table(comparison.rows.set_index(["model", "metric"]), "{:.4g}")]
    if cases is not None:
        sections += ["<h2>Best and worst cases</h2>", study_html(cases)]
    if gaps:
        lines = "".join(f"<li><b>{html.escape(name)}</b>: {html.escape(sentence)}</li>"
                        for name, sentence in gaps.items())
        sections += ["<h2>Who is served: user groups</h2>", f"<ul>{lines}</ul>"]
    if served is not None:
        group = "third" if served_by is None else "group"
        sections += ["<h2>Who is served: popular and niche items</h2>" if served_by is None else
                     f"<h2>Who is served: items by {html.escape(served_by)}</h2>",
                     "<p class='meta'>The items with training interactions in thirds by popularity (head: the most "
                     "interacted)." if served_by is None else
                     f"<p class='meta'>The items grouped by the item table's {html.escape(served_by)} (an item of "
                     "several counting a share in each).",
                     f" Recall of each {group}'s relevant items in the top {k}, over the users with some:</p>",
                     _table(served["recall"].map(lambda v: f"{v:.4f}" if pd.notna(v) else "–")),
                     f"<p class='meta'>Each {group}'s share of the recommendations:</p>",
                     _table(served["recommended"].map(lambda v: f"{v:.1%}"))]
    sections += ["<h2>Every metric</h2>", _table(every.map(lambda v: f"{v:.4f}" if isinstance(v, float) else v)),
                 "<h2>Users</h2>", _table(pd.DataFrame({n: r.users for n, r in results.items()}))]
    notes = "".join(f"<li><b>{html.escape(n)}</b>: {html.escape(note.message)}</li>"
                    for n, r in results.items() for note in r.warnings)
    if notes:
        sections += ["<h2>Notes about the data</h2>", f"<ul>{notes}</ul>"]
    if fingerprints:
        sections += ["<h2>Input files (SHA-256, first 16 hex digits)</h2>",
                     _table(pd.Series(fingerprints, name="file · sha256").to_frame())]
    sections += ["<h2>Settings</h2>",
                 _table(pd.Series({**asdict(first.settings), **asdict(first.encoding)}, name="value").to_frame())]
    version = alt.SCHEMA_VERSION.lstrip("v").rsplit(".", 1)[0]
    bundle = vlc.javascript_bundle(vl_version=version if version in vlc.get_vegalite_versions() else None)
    bundle = bundle.replace("</script", "<\\/script")
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(heading)} ({created:%Y-%m-%d})</title><style>{STYLE}</style></head><body>"
        + "\n".join(sections)
        + f"<script>{bundle}</script><script>{''.join(calls)}</script></body></html>"
    )


CHARTED_BEYOND = ("calibration", "exposure_distance", "ee_loss")  # the families the app draws on its own pages


def _beyond_figures(results: dict[str, Evaluation], k: int) -> list[tuple[str, alt.TopLevelMixin]]:
    """Miscalibration and expected exposure loss (means over users: each model's t interval) and
    the exposure distance (a value over the catalog: a point, no interval) of the models that
    have them."""
    figures = []
    for metric in CHARTED_BEYOND:
        rows = [{"model": name, **result.to_frame().loc[metric, ["value", "low", "high"]].to_dict()}
                for name, result in results.items() if metric in result.metrics]
        if not rows:
            continue
        frame = pd.DataFrame(rows).rename(columns={"low": "ci_low", "high": "ci_high"})
        called, models = registry.label(metric, k), list(frame["model"])
        figures.append((f"{called} by model", charts.intervals(frame, called, models, LEVEL, "t interval")
                        if registry.METRICS[metric].per_user else charts.points(frame, called, models)))
    return figures


def _with_interval(result: Evaluation, metric: str) -> str:
    """``0.1874 ± 0.0147``: the value and the half-width of its 95% t interval (the value alone
    for a metric that is not a mean of per-user values, "–" when the model has none)."""
    value = result.metrics.get(metric)
    if value is None or pd.isna(value):
        return "–"
    half = half_width(result, metric)
    return f"{value:.4f}" if half is None else f"{value:.4f} ± {half:.4f}"


def script_json(value) -> str:
    """JSON to embed inside a ``<script>`` element: ``<``, ``>`` and ``&`` as JSON escapes, so that
    no text from the data (a model named ``<!--<script>`` or ``</script>``) can end the element or
    switch the HTML parser into another state; the parsed value is unchanged.

    >>> script_json({"model": "</script>&"})
    '{"model": "\\\\u003c/script\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(value)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _table(frame: pd.DataFrame, number_format: str | None = None) -> str:
    formatters = None
    if number_format:
        formatters = {c: number_format.format for c in frame.columns if pd.api.types.is_float_dtype(frame[c])}
    return frame.to_html(classes="numbers", border=0, na_rep="–", escape=True, formatters=formatters)


STYLE = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #1f2430; padding: 0 1rem; }
h1 { font-size: 1.8rem; margin-bottom: 0.2rem; } h2 { margin-top: 2rem; border-bottom: 1px solid #e3e6ee; }
.meta { color: #6b7280; } .verdicts li { margin: 0.4rem 0; }
table.numbers { border-collapse: collapse; font-size: 0.9rem; margin: 0.5rem 0; max-width: 100%; }
table.numbers th, table.numbers td { padding: 0.3rem 0.6rem; border-bottom: 1px solid #eef0f5; text-align: right;
                                     overflow-wrap: anywhere; }
table.numbers th { background: #f4f6fa; } .chart { margin: 1rem 0; max-width: 100%; overflow: hidden; }
.chart svg { max-width: 100%; height: auto; }
.hit { background: #dcf5e3; font-weight: 600; padding: 0 0.2rem; border-radius: 3px; }
table.case-list td, table.case-list th { text-align: left; } table.case-list td:first-child { text-align: right; }
.case { margin: 0.8rem 0 1.2rem; break-inside: avoid; }
@media print {
  body { margin: 0; max-width: none; font-size: 10pt; }
  h2 { break-after: avoid; } table.numbers, .chart, li { break-inside: avoid; }
  table.numbers { font-size: 8pt; }
}
"""


def write_report(path: str | Path, results: dict[str, Evaluation], comparison: Comparison | None = None,
                 fingerprints: dict[str, str] | None = None, workspace: str | None = None,
                 cases: CaseStudy | None = None, served: dict[str, pd.DataFrame] | None = None,
                 gaps: dict[str, str] | None = None, served_by: str | None = None) -> Path:
    path = Path(path)
    path.write_text(report_html(results, comparison, fingerprints=fingerprints, workspace=workspace, cases=cases,
                                served=served, gaps=gaps, served_by=served_by), encoding="utf-8")
    return path
