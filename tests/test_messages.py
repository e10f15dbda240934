"""Messages that name the real problem: delimiters, decimal commas, TREC field counts, and the
app's own words for uploaded files and its choices; the server's exposure settings."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from metrics_core import InputError, evaluate
from metrics_core.inputs.read import read_bytes, read_notes

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "dashboard" / "app.py")
TRUTH = pd.DataFrame({"user_id": [1, 2], "item_id": ["b", "c"]})


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metrics_core", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_other_delimiters_are_sniffed_and_said(tmp_path, sep):
    path = tmp_path / "recs.csv"
    path.write_text(sep.join(["user_id", "item_id", "score"]) + "\n"
                    + "\n".join(sep.join(row) for row in (["1", "a", "0.9"], ["1", "b", "0.5"], ["2", "c", "0.7"])))
    result = evaluate(path, TRUTH, k=2)
    assert result.metrics["recall"] == 1.0
    notes = [n.message for n in result.warnings if n.code == "read_format"]
    assert notes and "between columns" in notes[0] and "recs.csv" in notes[0]


def test_decimal_commas_are_read_in_semicolon_files_and_named_in_comma_files(tmp_path):
    (tmp_path / "eu.csv").write_text("user_id;item_id;score\n1;a;0,9\n1;b;0,95\n2;c;1,5\n")
    frame, _ = read_bytes((tmp_path / "eu.csv").read_bytes(), "eu.csv", "recommendations")
    assert frame["score"].tolist() == [0.9, 0.95, 1.5]
    assert "decimal comma" in read_notes(frame)[0].message
    assert evaluate(tmp_path / "eu.csv", TRUTH, k=1).per_user.loc[1, "hits"] == 1  # b (0,95) ranks above a (0,9)
    (tmp_path / "quoted.csv").write_text('user_id,item_id,score\n1,a,"0,9"\n1,b,"0,5"\n')
    with pytest.raises(InputError) as error:
        evaluate(tmp_path / "quoted.csv", TRUTH)
    assert "decimal comma" in str(error.value) and "column 'score'" in str(error.value)


def test_a_single_column_holding_a_delimiter_says_so():
    frame = pd.DataFrame({"user_id;item_id;rank": ["1;a;1"]})
    with pytest.raises(InputError) as error:
        evaluate(frame, TRUTH)
    assert "separated by ';'" in str(error.value)


@pytest.mark.parametrize(("text", "expected"), [
    ("q1 Q0 d1 1 2.0 run\nq1 Q0 d2 2 1.5 run extra\n", "found 7 on line 2"),
    ("q1 Q0 d1 1 2.0 run\n\nq1 Q0 d2 2 1.5\n", "found 5 on line 3"),
])
def test_trec_runs_with_the_wrong_number_of_fields_name_the_line(tmp_path, text, expected):
    (tmp_path / "sys.run").write_text(text)
    (tmp_path / "t.qrels").write_text("q1 0 d1 1\n")
    done = run("evaluate", "--recommendations", str(tmp_path / "sys.run"), "--ground-truth", str(tmp_path / "t.qrels"))
    assert done.returncode == 2
    assert "expected 6 fields (qid Q0 docno rank score tag)" in done.stderr and expected in done.stderr


def test_qrels_with_the_wrong_number_of_fields(tmp_path):
    (tmp_path / "t.qrels").write_text("q1 0 d1 1\nq1 0 d2\n")
    with pytest.raises(InputError, match=r"expected 4 fields \(qid iter docno rel\), found 3 on line 2"):
        evaluate(pd.DataFrame({"user_id": ["q1"], "item_id": ["d1"], "rank": [1]}), tmp_path / "t.qrels")


def test_errors_list_at_most_20_columns():
    wide = pd.DataFrame({f"c{i}": [1] for i in range(30)})
    with pytest.raises(InputError) as error:
        evaluate(wide, TRUTH)
    assert "c19 and 10 more" in str(error.value) and "c20" not in str(error.value)


def test_the_cli_names_flags_and_the_api_names_arguments(tmp_path):
    (tmp_path / "r.csv").write_text("user,item_id,rank\n1,a,1\n")
    (tmp_path / "t.csv").write_text("user_id,item_id\n1,a\n")
    done = run("evaluate", "--recommendations", str(tmp_path / "r.csv"), "--ground-truth", str(tmp_path / "t.csv"))
    assert done.returncode == 2 and "--user-column" in done.stderr
    with pytest.raises(InputError) as error:
        evaluate(tmp_path / "r.csv", tmp_path / "t.csv")
    assert "Columns(user=...)" in str(error.value) and "--" not in str(error.value)


# the app


def upload(recs: bytes, truth: bytes, recs_name: str = "model_a.csv") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_recs_0").set_value([(recs_name, recs, "text/csv")])
    at.file_uploader(key="upload_truth_0").set_value(("truth.csv", truth, "text/csv"))
    return at.run()


def shown(markdown: str) -> str:
    """Markdown as the reader sees it (the app escapes file and column names)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def evaluate_button(at: AppTest):
    return at.button(key="check_and_save")


def test_app_errors_name_the_uploaded_file_in_the_apps_words():
    at = upload(b"user_id,item_id,rank\n1,a,1\n1,b,1\n", b"user_id,item_id\n1,a\n", "my_model.csv")
    evaluate_button(at).click().run()
    assert not at.exception
    message = shown(at.error[0].value)
    assert "my_model.csv" in message and "DataFrame" not in message and "--" not in message


def test_app_missing_column_speaks_of_the_data_page_not_flags():
    at = upload(b"user_id,item_id,rank\n1,a,1\n", b"uid,item_id\n1,a\n")
    evaluate_button(at).click().run()
    assert not at.exception
    message = shown(at.error[0].value)
    assert "truth.csv" in message and "Data page" in message and "--" not in message


def test_app_guesses_never_give_one_column_two_roles():
    at = upload(b"user_item_id,item_code,score\n1,a,0.5\n", b"user_item_id,item_code\n1,a\n")
    chosen = [box.value for box in at.selectbox[:4] if box.value != "(none)"]
    assert len(chosen) == len(set(chosen)), chosen
    at.selectbox[1].set_value(at.selectbox[0].value).run()  # the user picks the same column twice
    assert not at.exception
    assert at.error and "each role needs its own column" in shown(at.error[0].value)  # said at once, before any click


def test_app_reads_a_semicolon_file_and_says_how():
    at = upload(b"user_id;item_id;score\n1;a;0,9\n1;b;0,95\n2;c;0,5\n", b"user_id,item_id\n1,b\n2,c\n")
    assert not at.exception and not at.error
    assert any("';' between columns" in shown(info.value) for info in at.info)
    evaluate_button(at).click().run()
    assert not at.error and at.success


def test_server_listens_locally_hides_error_details_and_bounds_uploads():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    assert config["client"]["showErrorDetails"] == "none"
    assert config["server"]["maxUploadSize"] <= 1024


def test_the_app_names_every_setting_a_message_can_mark():
    """The app's words for settings live in the app (dashboard/setting_words.py), one for every
    setting the library's messages mark, and a marked message reads them."""
    from dashboard.setting_words import SETTING_WORDS as APP_WORDS
    from metrics_core.errors import SETTING_WORDS, input_error, setting

    assert set(APP_WORDS) == set(SETTING_WORDS)
    error = input_error("recommendations (a.csv)", f"no column 'uid' ({setting('user_column')}).", "map it.")
    assert "the 'User column' choice on the Data page" in error.text(APP_WORDS)
    assert "--user-column" in error.text("cli") and "Columns(user=...)" in error.text("api")
