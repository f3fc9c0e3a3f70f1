"""The explorer keeps the learner's edits across a change of n_head where the shapes allow it and
names what it had to reset; the n_head menu offers only divisors of C; a refused cell is named
in the learner's words, next to the grid it is in."""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient
from test_web_explorer import api, cells
from web_support import ORIGIN, post_form

from attnlab.core import example
from attnlab.web.app import create_app
from attnlab.web.explorer import preset_data, state_json
from attnlab.web.ui_text import UI


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app = create_app(tmp_path_factory.mktemp("progress"), figures_on=False)
    with TestClient(app, base_url=ORIGIN, raise_server_exceptions=True) as client:
        assert client.get("/lesson").status_code == 200  # sets the session cookie
        yield client


def _one_head_with_edits() -> str:
    """The state of the lesson preset (one head, C=4, d=2) with W_Q and W_K edited."""
    data = preset_data("lesson", 3, 4, 2, 1, "en")
    data["w_q"][0][0], data["w_k"][1][1] = 9.0, 7.0
    return state_json(data)


def _cell(page: str, name: str) -> str:
    found = re.search(rf'data-cell="{re.escape(name)}" value="([^"]*)"', page)
    assert found is not None, f"no cell {name}"
    return found.group(1)


def _resized(client: TestClient, lang: str = "en", **sizes: int) -> str:
    query = {"lang": lang, "preset": "lesson", "T": 3, **sizes, "state": _one_head_with_edits()}
    return html_lib.unescape(client.get("/explorer?" + urlencode(query)).text)


def test_one_head_to_two_keeps_the_edits_in_head_1(client: TestClient) -> None:
    page = _resized(client, C=4, d=2, n_head=2)
    assert _cell(page, "w_q[0][0]") == "9" and _cell(page, "w_k[1][1]") == "7"
    preset = preset_data("lesson", 3, 4, 2, 2, "en")
    assert _cell(page, "w_q[0][2]") == f"{preset['w_q'][0][2]:g}"  # head 2: the preset's
    assert 'id="explorer-reset"' not in page  # nothing was lost
    two_heads = preset_data("lesson", 3, 4, 2, 2, "en") | {"w_q": [[5.0, 0, 0, 0]] * 4}
    query = {"lang": "en", "preset": "lesson", "T": 3, "C": 4, "d": 2, "n_head": 1}
    back = client.get("/explorer?" + urlencode(query | {"state": state_json(two_heads)})).text
    assert _cell(back, "w_q[3][0]") == "5"  # and head 1 comes back to the single head


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_edits_that_no_longer_fit_are_named(client: TestClient, lang: str) -> None:
    page = _resized(client, lang, C=4, d=2, n_head=4)  # each head 1 wide: W_Q [4, 2] cannot fit
    note = re.search(r'id="explorer-reset" role="status">([^<]*)<', page)
    sep = "、" if lang == "zh" else ", "
    assert note is not None and note.group(1) == UI[lang]["explorer_reset"].format(
        names=sep.join(["W_Q", "W_K"])  # W_V was not edited: nothing of it is lost
    ), note


def test_n_head_menu_offers_only_divisors_of_c(client: TestClient) -> None:
    for C in (3, 4, 6):
        page = client.get(f"/explorer?C={C}&lang=en").text
        menu = re.search(r'<select name="n_head">(.*?)</select>', page, re.S)
        assert menu is not None
        options = re.findall(r"<option([^>]*)>(\d+)</option>", menu.group(1))
        offered = [int(n) for attrs, n in options if "disabled" not in attrs]
        assert offered == [n for n in range(1, 9) if C % n == 0], (C, offered)


WORDS = {
    "zh": (
        "X（提示 A）第 1 行第 2 列：需要一个数，这里是空的",
        "W_K 第 2 行第 1 列：需要一个数，这里是“abc”",
    ),
    "en": (
        "X (prompt A) row 1, column 2: a number is needed, this cell is empty",
        "W_K row 2, column 1: a number is needed, this cell holds “abc”",
    ),
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_refused_cell_is_named_in_the_learners_words(client: TestClient, lang: str) -> None:
    lesson = {k: getattr(example, f"lesson_{k}")().tolist() for k in ("x", "w_q", "w_k", "w_v")}
    empty, text = WORDS[lang]
    lesson["x"][0][0][1] = ""
    assert api(client, lesson, lang).json()["error"] == empty
    lesson["x"][0][0][1] = None  # what JSON makes of a number past float64 in a browser
    assert api(client, lesson, lang).json()["error"] == empty
    lesson["x"][0][0][1] = 1.0
    lesson["w_k"][1][0] = "abc"
    assert api(client, lesson, lang).json()["error"] == text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_error_sits_under_the_grid_it_is_about(client: TestClient, lang: str) -> None:
    data = preset_data("lesson", 3, 4, 2, 1, lang)
    form = {"T": "3", "C": "4", "d": "2", "n_head": "1"}
    for key in ("x", "w_q", "w_k", "w_v"):
        form |= cells(key, data[key])
    form["w_k[1][0]"] = "abc"
    page = html_lib.unescape(post_form(client, f"/explorer?lang={lang}", form).text)
    grid = re.search(r'data-matrix="w_k".*?</table></div>(.*?)</div>', page, re.S)
    assert grid is not None and 'id="explorer-error"' in grid.group(1), "not under W_K"
    assert WORDS[lang][1] in grid.group(1)
    bad = client.get(f"/explorer?C=3&n_head=3&d=2&lang={lang}")  # fine: 3 divides 3
    assert bad.status_code == 200
    wrong = html_lib.unescape(client.get(f"/explorer?C=3&n_head=2&lang={lang}").text)
    after_menus = wrong.split('id="size-form"')[1].split("</form>", 1)[1]
    assert after_menus.lstrip().startswith('<p class="explorer-error" id="explorer-error"')
