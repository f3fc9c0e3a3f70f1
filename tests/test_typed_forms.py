"""Numbers typed with a Chinese input method (full-width ``１．５``, ``0。40``) read as the
exercises read them: in a graded answer, in practice, in ``attnlab check`` and in the
explorer's cells."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from fastapi.testclient import TestClient
from test_web_explorer import cells
from web_support import ORIGIN, post_form

from attnlab.content import knowledge
from attnlab.grading import answers
from attnlab.inputs.text_limits import ascii_forms
from attnlab.lesson import numbers
from attnlab.web.app import create_app
from attnlab.web.explorer import preset_data

FULL = str.maketrans("0123456789.-+,", "０１２３４５６７８９．－＋，")


@pytest.mark.parametrize(
    ("typed", "read"),
    [("１．５", "1.5"), ("0。40", "0.40"), ("0.40。", "0.40"), ("－０．４２６", "-0.426"),
     ("０.５９９，０.４０１", "0.599,0.401"), ("0.599", "0.599"), ("１２ｅ３", "12e3")],
)  # fmt: skip
def test_ascii_forms(typed: str, read: str) -> None:
    assert ascii_forms(typed) == read


def test_a_full_width_answer_is_graded_as_its_ascii_twin() -> None:
    value = numbers.get("column_sums[0,0]")
    plain = f"{value:.{knowledge.exercise('9c', 'en').decimals}f}"
    for typed in (plain.translate(FULL), plain.replace(".", "。"), plain + "。"):
        got, want = answers.check_answer("9c", typed), answers.check_answer("9c", plain)
        assert (got.kind, got.correct) == (want.kind, want.correct), typed
    assert answers.check_answer("9c", plain.translate(FULL)).correct
    digits = [t.decimals for t in answers.parse_numbers("０。４０")]
    assert digits == [2], "the learner's rounding is kept: two decimals"


def test_a_stop_inside_words_is_still_refused() -> None:
    with pytest.raises(answers.AnswerError):
        answers.parse_numbers("零点四。")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    app = create_app(tmp_path_factory.mktemp("web"), figures_on=False)
    client = TestClient(app, base_url=ORIGIN, raise_server_exceptions=True)
    assert client.get("/lesson").status_code == 200  # the session cookie
    return client


def test_the_explorer_form_reads_full_width_cells(client: TestClient) -> None:
    data = preset_data("lesson", 3, 4, 2, 1, "en")
    form = {"T": "3", "C": "4", "d": "2", "n_head": "1"}
    for key in ("x", "w_q", "w_k", "w_v"):
        form |= cells(key, data[key])
    form["w_k[1][0]"] = "１．５"
    form["w_q[0][0]"] = "0。25"
    page = html_lib.unescape(post_form(client, "/explorer?lang=en", form).text)
    error = re.search(r'id="explorer-error"[^>]*>(.*?)</p>', page, re.S)
    assert error is None or not error.group(1).strip(), f"refused: {error and error.group(1)}"
    assert re.search(r'data-cell="w_k\[1\]\[0\]" value="1\.5"', page)
    assert re.search(r'data-cell="w_q\[0\]\[0\]" value="0\.25"', page)
