"""Inputs that used to give silent wrong numbers, internal errors, or a CI gate that passed:
ids beyond int64, NaN gates, TREC grades, ids that cannot match, duplicate columns, a huge K,
output paths, and the report's embedded data."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics_core import Columns, InputError, evaluate
from metrics_core.stats.gates import check_gates

BIG = 2**63


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metrics_core", *args], capture_output=True, text=True, timeout=120)


def strict_json(text: str):
    """Parse JSON refusing NaN and Infinity, as strict readers (JavaScript, jq, Go) do."""
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")
    return json.loads(text, parse_constant=refuse)


# 1. ids at or above 2**63


def test_unsigned_ids_above_int64_next_to_small_ids_never_collide():
    recs = pd.DataFrame({"user_id": [1, 1, 1], "item_id": np.array([BIG + 1, BIG + 2, 5], dtype=np.uint64),
                         "rank": [1, 2, 3]})
    truth = pd.DataFrame({"user_id": [1, 1, 1], "item_id": np.array([2**62, 6, 7], dtype=np.int64)})
    assert evaluate(recs, truth, k=3).metrics["recall"] == 0.0  # was 1.0: the ids went through float64
    truth = pd.DataFrame({"user_id": [1, 1, 1], "item_id": np.array([BIG + 1, BIG + 3, 5], dtype=np.uint64)})
    assert evaluate(recs, truth, k=3).metrics["recall"] == pytest.approx(2 / 3)


def test_csv_ids_beyond_int64_are_read_as_exact_text(tmp_path):
    (tmp_path / "recs.csv").write_text(f"user_id,item_id,rank\n1,{BIG + 5},1\n1,{BIG + 6},2\n1,7,3\n")
    (tmp_path / "truth.csv").write_text(f"user_id,item_id\n1,{BIG + 5}\n1,{2**64 + 3}\n1,8\n")
    done = run("evaluate", "--recommendations", str(tmp_path / "recs.csv"), "--ground-truth",
               str(tmp_path / "truth.csv"), "--k", "3")
    assert done.returncode == 0, done.stderr
    assert strict_json(done.stdout)["models"]["recs"]["metrics"]["recall"] == pytest.approx(1 / 3)


def test_decimal_ids_too_large_for_a_float_are_an_error():
    recs = pd.DataFrame({"user_id": [1], "item_id": [float(2**60)], "rank": [1]})
    with pytest.raises(InputError, match="above 2\\^53 stored as a decimal number"):
        evaluate(recs, pd.DataFrame({"user_id": [1], "item_id": [1]}))


# 4. ids that cannot match


def test_whitespace_around_text_ids_and_integral_decimals_still_match(tmp_path):
    recs = pd.DataFrame({"user_id": [" u1 ", "u1", "u1"], "item_id": ["a ", " 4.00", "c"], "rank": [1, 2, 3]})
    truth = pd.DataFrame({"user_id": ["u1", "u1"], "item_id": ["a", 4]})
    result = evaluate(recs, truth, k=3)
    assert result.metrics["recall"] == 1.0 and result.users["evaluated"] == 1
    (tmp_path / "sys.run").write_text("q1 Q0 4.0 1 2.0 s\nq1 Q0 9 2 1.0 s\n")
    (tmp_path / "truth.csv").write_text("user_id,item_id\nq1,4\n")
    assert evaluate(tmp_path / "sys.run", tmp_path / "truth.csv", k=2).metrics["recall"] == 1.0


def test_a_list_column_used_as_ids_is_refused(tmp_path):
    pd.DataFrame({"user_id": [1, 2], "item_id": [[1, 2], [3]], "rank": [1, 1]}).to_parquet(tmp_path / "r.parquet")
    with pytest.raises(InputError) as error:
        evaluate(tmp_path / "r.parquet", pd.DataFrame({"user_id": [1], "item_id": [1]}))
    assert "list, struct or map" in str(error.value) and "item_id" in str(error.value)


@pytest.mark.parametrize(("recs_items", "truth_items", "cause"), [
    (["001", "002", "x"], [1, 2, 3], "leading zeros"),
    ([1, 2, 3], ["i1", "i2", "i3"], "are numbers and the ground truth's are text"),
    (["A", "B", "C"], ["a", "b", "c"], "letter case"),
    ([-1, -2, -3], [1, 2, 3], "differ in their sign"),
    (["-1", "-2", "x"], [1, 2, 3], "prefixes or suffixes"),
])
def test_ids_that_never_match_get_a_warning_naming_the_cause(recs_items, truth_items, cause):
    recs = pd.DataFrame({"user_id": [1, 1, 1], "item_id": recs_items, "rank": [1, 2, 3]})
    truth = pd.DataFrame({"user_id": [1, 1, 1], "item_id": truth_items})
    notes = [n for n in evaluate(recs, truth, k=3).warnings if n.code == "id_mismatch"]
    assert len(notes) == 1, [n.message for n in evaluate(recs, truth, k=3).warnings]
    assert cause in notes[0].message and "Example item ids" in notes[0].message


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
@pytest.mark.parametrize("table", ["recommendations", "ground truth"])
def test_a_missing_id_column_is_named_with_every_column_of_the_file(tmp_path, suffix, table):
    """Only the columns a table needs are read, yet the message lists all the file's columns,
    among which the user finds the one to map (here 'userId', never read)."""
    good = {"recommendations": pd.DataFrame({"user_id": [1, 2], "item_id": [3, 4], "rank": [1, 1]}),
            "ground truth": pd.DataFrame({"user_id": [1, 2], "item_id": [3, 4]})}
    bad = good[table].rename(columns={"user_id": "userId"}).assign(note=["x", "y"])
    paths = {}
    for name, frame in {**good, table: bad}.items():
        paths[name] = tmp_path / f"{name.replace(' ', '_')}{suffix}"
        frame.to_parquet(paths[name]) if suffix == ".parquet" else frame.to_csv(paths[name], index=False)
    done = run("evaluate", "--recommendations", str(paths["recommendations"]), "--ground-truth",
               str(paths["ground truth"]))
    assert done.returncode == 2
    assert f"{table}" in done.stderr and "missing column 'user_id'" in done.stderr
    assert "(the table has: " + ", ".join(bad.columns) + ")" in done.stderr


def test_swapped_columns_are_named():
    recs = pd.DataFrame({"user_id": [10, 10, 11], "item_id": [1, 2, 3], "rank": [1, 2, 1]})
    truth = pd.DataFrame({"user_id": [1, 2, 3], "item_id": [10, 11, 12]})
    notes = [n.message for n in evaluate(recs, truth, k=3).warnings if n.code == "id_mismatch"]
    assert notes and "swapped columns" in notes[0]


def test_the_cli_prints_the_id_warning(tmp_path):
    (tmp_path / "r.csv").write_text("user_id,item_id,rank\n1,007,1\n1,x,2\n")
    (tmp_path / "t.csv").write_text("user_id,item_id\n1,7\n")
    done = run("evaluate", "--recommendations", str(tmp_path / "r.csv"), "--ground-truth", str(tmp_path / "t.csv"))
    assert done.returncode == 0
    assert "warning" in done.stderr and "leading zeros" in done.stderr


def test_matching_data_gets_no_id_warning(three_users):
    recs, truth, _ = three_users
    assert not [n for n in evaluate(recs, truth, k=3).warnings if n.code == "id_mismatch"]


INTS = st.one_of(st.integers(0, 2**64 - 1), st.integers(-(2**63), 2**63 - 1), st.integers(0, 50))
TEXTS = st.one_of(st.text(alphabet="abXY019_-", min_size=1, max_size=5),
                  st.integers(0, 999).map(lambda i: f"{i:04d}"))


def render(value, how: int):
    """The same id as another file might write it: as it is, as text, or as text with spaces."""
    if how == 0:
        return value
    text = str(value)
    return text if how == 1 else f"  {text} "


def canonical(value) -> str:
    return value.strip() if isinstance(value, str) else str(value)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pool=st.lists(st.one_of(INTS, TEXTS), min_size=1, max_size=8, unique_by=canonical), data=st.data())
def test_ids_match_exactly_as_text_or_are_reported(pool, data):
    """Random ids (beyond int64, negative, zero-padded, spaced, text) match exactly when their
    text is equal, never otherwise; when nothing matches the user is warned."""
    truth_ids = data.draw(st.lists(st.sampled_from(pool), min_size=1, unique_by=canonical))
    recs_ids = data.draw(st.lists(st.sampled_from(pool), min_size=1, unique_by=canonical))
    rendered = [render(v, data.draw(st.integers(0, 2))) for v in recs_ids]
    recs = pd.DataFrame({"user_id": [1] * len(rendered), "item_id": pd.Series(rendered, dtype=object),
                         "rank": range(1, len(rendered) + 1)})
    truth = pd.DataFrame({"user_id": [1] * len(truth_ids), "item_id": pd.Series(truth_ids, dtype=object)})
    result = evaluate(recs, truth, k=len(rendered))
    expected = len({canonical(v) for v in recs_ids} & {canonical(v) for v in truth_ids})
    assert int(result.per_user["hits"].iloc[0]) == expected
    warned = any(n.code == "id_mismatch" for n in result.warnings)
    assert warned == (expected == 0)


# 2. gates on NaN, strict JSON, argument ranges


def test_a_gate_with_a_nan_side_fails_and_says_why():
    gates = check_gates(["ndcg < 0.3", "ndcg > nan"], {"A": {"ndcg": float("nan")}, "B": {"ndcg": 0.5}}, "A")
    by = {(g.gate, g.model): g for g in gates}
    assert by[("ndcg < 0.3", "A")].failed and "not a number" in by[("ndcg < 0.3", "A")].message()
    assert not by[("ndcg < 0.3", "B")].failed
    assert by[("ndcg > nan", "B")].failed


def test_cli_gate_on_nan_exits_1_and_json_has_no_nan(tmp_path, three_users):
    recs, truth, _ = three_users
    recs.to_csv(tmp_path / "a.csv", index=False)
    truth.to_csv(tmp_path / "t.csv", index=False)
    done = run("compare", "--recommendations", f"A={tmp_path / 'a.csv'}", "--recommendations",
               f"B={tmp_path / 'a.csv'}", "--ground-truth", str(tmp_path / "t.csv"), "--k", "3",
               "--bootstrap", "20", "--fail-if", "ndcg < nan")
    assert done.returncode == 1, done.stderr
    assert "not a number" in done.stderr
    out = strict_json(done.stdout)
    assert all(g["failed"] and g["right"] is None for g in out["gates"])


def test_json_never_holds_nan_or_infinity():
    from metrics_core.jsonable import plain

    assert plain({"a": float("nan"), "b": [np.float64("inf"), np.int64(3)], "c": np.array([1.5, np.nan])}) == \
        {"a": None, "b": [None, 3], "c": [1.5, None]}


@pytest.mark.parametrize(("option", "value"), [("--beta", "inf"), ("--beta", "nan"), ("--beta", "0"),
                                               ("--beta", "-1"), ("--bootstrap", "-1"), ("--seed", "-3")])
def test_out_of_range_options_exit_2_with_a_message(tmp_path, three_users, option, value):
    recs, truth, _ = three_users
    recs.to_csv(tmp_path / "a.csv", index=False)
    truth.to_csv(tmp_path / "t.csv", index=False)
    done = run("compare", "--recommendations", f"A={tmp_path / 'a.csv'}", "--ground-truth",
               str(tmp_path / "t.csv"), f"{option}={value}")
    assert done.returncode == 2
    assert option in done.stderr and "Traceback" not in done.stderr


def test_settings_refuse_an_infinite_beta():
    from metrics_core import Settings

    with pytest.raises(InputError, match="finite"):
        Settings(beta=float("inf"))


# 3. TREC qrels grades


def test_qrels_grades_always_count_and_zero_or_negative_is_judged_non_relevant(tmp_path):
    (tmp_path / "sys.run").write_text("q1 Q0 d1 1 3.0 s\nq1 Q0 d2 2 2.0 s\nq1 Q0 d3 3 1.0 s\n")
    (tmp_path / "t.qrels").write_text("q1 0 d1 0\nq1 0 d2 -1\nq1 0 d3 2\nq1 0 d4 1\n")
    result = evaluate(tmp_path / "sys.run", tmp_path / "t.qrels", k=3)
    assert result.per_user.loc["q1", "relevant"] == 2  # d3 and d4; d1 (0) and d2 (-1) are judged non-relevant
    assert result.per_user.loc["q1", "hits"] == 1
    assert result.metrics["precision"] == pytest.approx(1 / 3)
    # the grade is the gain, as trec_eval's ndcg: DCG = 2 / log2(4), IDCG = 2 + 1 / log2(3)
    assert result.metrics["ndcg"] == pytest.approx((2 / 2) / (2 + 1 / np.log2(3)))
    stricter = evaluate(tmp_path / "sys.run", tmp_path / "t.qrels", k=3, columns=Columns(threshold=2))
    assert stricter.per_user.loc["q1", "relevant"] == 1


def test_negative_grades_outside_qrels_are_still_an_error():
    with pytest.raises(InputError, match="negative grade"):
        evaluate(pd.DataFrame({"user_id": [1], "item_id": [1], "rank": [1]}),
                 pd.DataFrame({"user_id": [1], "item_id": [1], "g": [-1]}), columns=Columns(relevance="g"))


# 5. duplicate column names


def test_duplicate_column_names_are_an_error_in_every_format(tmp_path):
    (tmp_path / "r.csv").write_text("user_id,item_id,rank,rank\n1,a,1,2\n")
    with pytest.raises(InputError, match="'rank' occurs more than once"):
        evaluate(tmp_path / "r.csv", pd.DataFrame({"user_id": [1], "item_id": ["a"]}))
    frame = pd.DataFrame([[1, "a", 1, 2]], columns=["user_id", "item_id", "rank", "rank"])
    with pytest.raises(InputError, match="'rank' occurs more than once"):
        evaluate(frame, pd.DataFrame({"user_id": [1], "item_id": ["a"]}))
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table([[1], ["a"], [1], [2]], names=["user_id", "item_id", "rank", "rank"]),
                   tmp_path / "r.parquet")
    with pytest.raises(InputError, match="'rank' occurs more than once"):
        evaluate(tmp_path / "r.parquet", pd.DataFrame({"user_id": [1], "item_id": ["a"]}))


# 6. memory does not grow with K beyond the longest list


def test_a_huge_k_runs_in_the_memory_of_the_longest_list(tmp_path):
    (tmp_path / "r.csv").write_text("user_id,item_id,rank\n1,a,1\n1,b,2\n2,c,1\n")
    (tmp_path / "t.csv").write_text("user_id,item_id,g\n1,b,2\n2,c,1\n2,d,3\n")
    code = (
        "import sys; from metrics_core.cli import main\n"
        f"code = main(['evaluate', '--recommendations', r'{tmp_path / 'r.csv'}', '--ground-truth', "
        f"r'{tmp_path / 't.csv'}', '--relevance-column', 'g', '--k', '100000000'])\n"
        "peak = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"  # this process's own peak
        "print('peak', int(peak) // 1024, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    peak_mib = int(done.stderr.split("peak")[-1])
    assert peak_mib < 400, peak_mib  # a users x K array would need 800 MB per user
    out = strict_json(done.stdout)
    assert out["k"] == 100_000_000
    assert out["models"]["r"]["metrics"]["precision"] == pytest.approx(2 / 2 / 1e8)
    ndcg_user_2 = (1 / 1) / (3 + 1 / np.log2(3))  # the ideal list holds both grades, whatever K
    ndcg_user_1 = (2 / np.log2(3)) / 2
    assert out["models"]["r"]["metrics"]["ndcg"] == pytest.approx((ndcg_user_1 + ndcg_user_2) / 2)


def test_curves_with_k_beyond_every_list_end_with_k(three_users):
    recs, truth, _ = three_users
    result = evaluate(recs, truth, k=1000)
    assert list(result.curves.index) == [1, 2, 3, 1000]
    assert result.curves.loc[1000, "recall"] == result.curves.loc[3, "recall"]
    assert result.curves.loc[1000, "precision"] == pytest.approx(result.curves.loc[3, "precision"] * 3 / 1000)


# 7. output paths checked before any work


@pytest.mark.parametrize("flag", ["--output", "--json", "--csv"])
def test_report_into_a_missing_folder_exits_2_before_writing(tmp_path, three_users, flag):
    recs, truth, _ = three_users
    recs.to_csv(tmp_path / "a.csv", index=False)
    truth.to_csv(tmp_path / "t.csv", index=False)
    outputs = {"--output": str(tmp_path / "report.html"), "--json": str(tmp_path / "n.json"),
               "--csv": str(tmp_path / "n.csv")}
    outputs[flag] = str(tmp_path / "missing_dir" / "x")
    args = [item for pair in outputs.items() for item in pair]
    done = run("report", "--recommendations", str(tmp_path / "a.csv"), "--ground-truth", str(tmp_path / "t.csv"),
               "--bootstrap", "10", *args)
    assert done.returncode == 2, done.stderr
    assert "does not exist" in done.stderr and "missing_dir" in done.stderr
    assert not any((tmp_path / name).exists() for name in ("report.html", "n.json", "n.csv"))


# 8. the report's embedded data


def test_a_hostile_model_name_cannot_break_the_report(three_users):
    from metrics_core.report.document import report_html

    recs, truth, _ = three_users
    name = "<!--<script>"
    results = {name: evaluate(recs, truth, k=3), "</script><b>x</b>": evaluate(recs, truth, k=3)}
    page = report_html(results)
    scripts = page.split("<script>")[1:]
    chart_calls = scripts[-1].split("</script>")[0]
    assert "<" not in chart_calls and ">" not in chart_calls.replace("=>", "")
    assert page.count("</script>") == 2  # only the two elements' own end tags
    spec = chart_calls[chart_calls.index("{"):chart_calls.index(", {actions")]  # (the first chart: NDCG@k by model)
    assert name in json.dumps(json.loads(spec))  # the data itself is unchanged


def test_with_both_tables_wrong_the_recommendations_error_comes_first_and_the_truth_is_still_checked():
    """The ground truth is read on a thread while the last model's ids are checked: a model's
    error is still the one raised, and a ground truth read so is checked as before."""
    recs = pd.DataFrame({"user_id": [1, None], "item_id": [1, 2], "rank": [1, 2]})
    truth = pd.DataFrame({"user_id": [1, 2], "item": [1, 2]})
    with pytest.raises(InputError) as raised:
        evaluate(recs, truth, k=2)
    assert "recommendations" in str(raised.value) and "no id" in str(raised.value)
    with pytest.raises(InputError) as raised:
        evaluate(recs.dropna(), truth, k=2)
    assert "ground truth" in str(raised.value) and "'item_id'" in str(raised.value)
