"""The explorer over HTTP: several heads through the one pipeline (checked against the
nn.Module reference), token labels, the state the language switch carries, the ``*`` legend and
every refusal in the page's language."""

from __future__ import annotations

import html as html_lib
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import torch
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiers import examples
from web_support import ORIGIN, fetch_headers, post_form

from attnlab.content.stageview import masked_note
from attnlab.core import example
from attnlab.core.convert import mha_from_formula
from attnlab.core.pipeline import multi_head_stages
from attnlab.inputs.explorer import ExplorerError, check_state_text
from attnlab.text.fmt import num
from attnlab.web.app import create_app
from attnlab.web.explorer import preset_data, with_state

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app = create_app(tmp_path_factory.mktemp("progress"), figures_on=False)
    # One event loop serves all its requests (as uvicorn's does), not a new one per request.
    with TestClient(app, base_url=ORIGIN, raise_server_exceptions=True) as client:
        assert client.get("/lesson").status_code == 200  # sets the session cookie
        yield client


def api(client: TestClient, payload: object, lang: str = "en") -> Any:
    headers = fetch_headers(client, {"Content-Type": "application/json"})
    # json.dumps escapes a lone surrogate as \ud800; httpx's json= cannot encode one.
    return client.post(f"/api/explorer?lang={lang}", content=json.dumps(payload), headers=headers)


def two_heads(seed: int = 0) -> dict[str, Any]:
    """Random numbers for x [2, 3, 4], W_Q/W_K/W_V/W_O [4, 4] and two heads."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, 3, 4, generator=g, dtype=torch.float64)
    ws = {
        k: torch.randn(4, 4, generator=g, dtype=torch.float64) for k in ("w_q", "w_k", "w_v", "w_o")
    }
    return {"n_head": 2, "x": x.tolist(), **{k: w.tolist() for k, w in ws.items()}}


def close(found: Any, expected: torch.Tensor) -> None:
    diff = (torch.tensor(found, dtype=torch.float64) - expected).abs().max().item()
    assert diff < 1e-6, f"max |diff| = {diff}"


def test_multi_head_result_equals_the_pipeline_and_the_modules(client: TestClient) -> None:
    payload = two_heads()
    body = api(client, payload).json()
    t = {k: torch.tensor(v, dtype=torch.float64) for k, v in payload.items() if k != "n_head"}
    mha = mha_from_formula(t["w_q"], t["w_k"], t["w_v"], t["w_o"], 2, context_length=8)
    with torch.no_grad():
        output, weights = mha(t["x"], return_weights=True)  # [2, 3, 4], [2, 2, 3, 3]
    close(body["stages"]["output"], output)
    close(body["stages"]["weights"], weights)
    ref = multi_head_stages(t["x"], t["w_q"], t["w_k"], t["w_v"], 2, t["w_o"])
    close(body["stages"]["concat"], ref.concat)
    close(body["stages"]["head_outputs"], ref.head_outputs)
    page = body["html"]
    for h in (1, 2):  # each head's heatmap, then the W_O mix
        assert f'data-stage="weights" data-head="{h}"' in page
    assert 'data-group="mix"' in page and 'data-stage="projected"' in page
    no_w_o = api(client, {k: v for k, v in payload.items() if k != "w_o"})
    assert no_w_o.status_code == 422 and no_w_o.json()["field"] == "w_o"


@pytest.mark.parametrize(
    ("lang", "line"),
    [("en", "n_head: C=4 must be divisible by n_head"), ("zh", "n_head：C=4 必须能被 n_head 整除")],
)
def test_n_head_that_does_not_divide_c_is_refused_in_one_line(client, lang, line) -> None:
    r = api(client, two_heads() | {"n_head": 3}, lang)
    assert r.status_code == 422 and r.json()["field"] == "n_head" and line in r.json()["error"]
    page = client.get(f"/explorer?n_head=3&C=4&lang={lang}")
    assert page.status_code == 422 and line in html_lib.unescape(page.text)
    assert 'data-stage="weights"' not in page.text  # no stages under the message


def test_multi_head_preset_and_form_fallback(client: TestClient) -> None:
    data = preset_data("lesson", 2, 4, 2, 2, "en")
    w_q = torch.tensor(data["w_q"])
    assert torch.equal(w_q[:, :2], example.lesson_w_q().float())  # head 1: the lesson's head
    assert not w_q[:, 2:].any()  # head 2: W_Q = 0, the uniform mean
    assert torch.equal(torch.tensor(data["w_o"]), torch.eye(4))
    page = client.get("/explorer?n_head=2&lang=en").text
    assert "W_O is the identity by default" in page and 'data-cell="w_o[3][3]"' in page
    form = {"T": "2", "C": "4", "d": "2", "n_head": "2", "w_o[0][0]": "2"}
    for key in ("x", "w_q", "w_k", "w_v", "w_o"):
        form |= {k: v for k, v in cells(key, data[key]).items() if k not in form}
    r = post_form(client, "/explorer?lang=en", form, follow_redirects=True)
    t = {k: torch.tensor(data[k], dtype=torch.float64) for k in ("x", "w_q", "w_k", "w_v", "w_o")}
    t["w_o"][0, 0] = 2.0
    ref = multi_head_stages(t["x"], t["w_q"], t["w_k"], t["w_v"], 2, t["w_o"])
    assert r.status_code == 200 and f">{num(ref.output[0, 0, 0], 3)}<" in r.text


def cells(name: str, values: Any) -> dict[str, str]:
    """The no-JavaScript form's fields ``x[0][1][2]`` for a nested list."""
    if not isinstance(values, list):
        return {name: repr(values)}
    return {k: v for i, row in enumerate(values) for k, v in cells(f"{name}[{i}]", row).items()}


def test_token_labels_are_escaped_capped_and_shown(client: TestClient) -> None:
    payload = two_heads() | {"tokens": [["<b>猫</b>", "a\x1b[31m", "x" * 40], ["我", "", "z"]]}
    page = api(client, payload).json()["html"]
    assert "<b>" not in page and "&lt;b&gt;猫" in page  # HTML-escaped
    assert "\x1b" not in page and "a\\x1b[31m" in page  # control characters made visible
    assert "t=2 " + "x" * 12 + "<" in page and "x" * 13 not in page  # cut to 12 characters
    bad = api(client, payload | {"tokens": [["a", "b", 3], ["c", "d", "e"]]}, "zh")
    assert bad.status_code == 422 and "tokens[0][2]：应为文字标签" in bad.json()["error"]


def switch_href(page: str) -> str:
    return html_lib.unescape(re.search(r'id="lang-switch"[^>]*href="([^"]+)"', page)[1])


def test_language_switch_keeps_preset_sizes_heads_labels_and_edits(client: TestClient) -> None:
    data = preset_data("uniform", 2, 4, 2, 2, "zh")
    data["w_o"][1][2] = 0.75
    data["tokens"][0][1] = "狗"
    form = {"preset": "uniform", "T": "2", "C": "4", "d": "2", "n_head": "2", "tok[0][1]": "狗"}
    for key in ("x", "w_q", "w_k", "w_v", "w_o"):
        form |= cells(key, data[key])
    zh = post_form(client, "/explorer?lang=zh", form, follow_redirects=True).text
    href = switch_href(zh)
    query = parse_qs(urlsplit(href).query)
    assert {k: query[k][0] for k in ("lang", "preset", "T", "C", "d", "n_head")} == {
        "lang": "en",
        "preset": "uniform",
        "T": "2",
        "C": "4",
        "d": "2",
        "n_head": "2",
    }
    en = client.get(href).text
    assert 'data-cell="w_o[1][2]" value="0.75"' in en and 'value="狗"' in en
    assert '<option value="uniform" selected>' in en and "t=1 狗" in en
    assert ">Head 2<" in en and "Head 2 · Attention weights" in en
    # an unedited label follows the language; another preset starts afresh
    assert 'data-token="tok[1][0]"' in en and "t=0 " + example.prompt_tokens("en")[1][0] in en
    back = client.get(href.replace("preset=uniform", "preset=lesson")).text
    assert 'data-cell="w_o[1][2]" value="0"' in back


def test_state_is_cut_to_new_sizes_and_bad_text_is_kept() -> None:
    data = preset_data("lesson", 2, 4, 2, 1, "en")
    state = {"preset": "lesson", "n_head": 1, "C": 4, "x": [[[9, 8, 7, 6], [5, "abc", 0, 0]]],
             "w_q": [[1, 2]], "tokens": [["dog", example.prompt_tokens("en")[0][1]]]}  # fmt: skip
    narrower = with_state(preset_data("lesson", 2, 3, 2, 1, "zh"), state)
    assert narrower["x"][0] == [[9, 8, 7], [5, "abc", 0]] and narrower["w_q"][0] == [1, 2]
    assert narrower["tokens"][0] == ["dog", example.prompt_tokens("zh")[0][1]]
    longer = with_state(preset_data("lesson", 3, 4, 2, 1, "zh"), state)
    assert longer["x"][0] == [[9, 8, 7, 6], [5, "abc", 0, 0], [0, 0, 0, 0]]
    assert with_state(data, state | {"preset": "uniform"}) == data


def test_star_legend_in_both_languages(client: TestClient) -> None:
    for lang in ("zh", "en"):
        page = html_lib.unescape(client.get(f"/explorer?lang={lang}").text)
        assert masked_note(lang) in page and page.count('class="legend"') == 2


BAD_INPUTS = [
    pytest.param({"w_q": None}, "w_q", id="missing"),
    pytest.param({"x": [[[1, 2, "abc", 4]], [[0, 0, 0, 0]]]}, "x[0][0][2]", id="bad-cell"),
    pytest.param({"x": [[[10**400, 0, 0, 0]], [[0, 0, 0, 0]]]}, "x[0][0][0]", id="inf"),
    pytest.param({"x": [[[0.0] * 4] * 9] * 2}, "T", id="too-long"),
    pytest.param({"n_head": True}, "n_head", id="n_head-bool"),
    pytest.param({"w_q": [[1.0, 0.0]] * 3}, "w_q", id="rows"),
    pytest.param({"x": [[[1e160] * 4] * 2] * 2}, "raw_scores", id="overflow"),
    pytest.param([1, 2], "input", id="not-an-object"),
]


@pytest.mark.parametrize(("change", "where"), BAD_INPUTS)
def test_every_refusal_is_in_the_pages_language(client, change, where) -> None:
    payload = change
    if isinstance(change, dict):  # the lesson's numbers with these changes (None: left out)
        payload = {
            k: getattr(example, f"lesson_{k}")().tolist() for k in ("x", "w_q", "w_k", "w_v")
        }
        payload = {k: v for k, v in (payload | change).items() if v is not None}
    zh, en = (api(client, payload, lang) for lang in ("zh", "en"))
    assert zh.status_code == en.status_code == 422
    for answer in (zh.json(), en.json()):  # a cell is named in the learner's words
        assert where in answer["error"] or answer["cell"] == where, answer
    assert CJK.search(zh.json()["error"]), zh.json()["error"]
    assert not CJK.search(en.json()["error"]), en.json()["error"]


@pytest.mark.parametrize("query", ["T=0", "n_head=9", "preset=nope", "C=²"])
def test_size_refusals_are_in_the_pages_language(client: TestClient, query: str) -> None:
    zh, en = (client.get(f"/explorer?{query}&lang={lang}") for lang in ("zh", "en"))
    assert zh.status_code == en.status_code == 400
    found = [re.search(r'id="error-message">([^<]*)<', r.text)[1] for r in (zh, en)]
    assert CJK.search(found[0]) and not CJK.search(found[1]), found


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
STATE = st.fixed_dictionaries(
    {"preset": st.just("lesson"), "n_head": st.sampled_from([1, 2, "2"]), "C": JSON},
    optional={k: JSON for k in ("x", "w_q", "w_k", "w_v", "w_o", "tokens")},
)


@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(state=st.one_of(STATE, JSON), n_head=st.sampled_from(["1", "2", "3"]))
def test_any_state_in_the_url_gives_a_page_never_a_crash(client, state, n_head) -> None:
    text = json.dumps(state, allow_nan=True)
    r = client.get("/explorer", params={"n_head": n_head, "state": text, "lang": "en"})
    assert r.status_code in (200, 422) and 'id="explorer-form"' in r.text


#: A value for each field of the state the explorer reads, holding a lone surrogate where a
#: learner's text goes: JSON's "\ud800" escape (half of a UTF-16 pair) parses to one.
LONE = "a\ud800"
SURROGATE_STATE = [
    pytest.param("preset", LONE, "preset", id="preset"),
    pytest.param("tokens", [["我", LONE], ["猫", "喜欢"]], "tokens[0][1]", id="tokens"),
    pytest.param("x", [[[1, 0, 0, LONE]]], "x[0][0][3]", id="x"),
    *(pytest.param(k, [[0, LONE]], f"{k}[0][1]", id=k) for k in ("w_q", "w_k", "w_v", "w_o")),
]


@pytest.mark.parametrize(("key", "value", "where"), SURROGATE_STATE)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_lone_surrogate_in_any_text_of_the_state_is_refused_in_one_line(
    client: TestClient, key: str, value: Any, where: str, lang: str
) -> None:
    state = {"preset": "lesson", "n_head": 1, "C": 4} | {key: value}
    text = json.dumps(state)  # ensure_ascii: the surrogate travels as the escape \ud800
    assert "\\ud800" in text
    r = client.get("/explorer", params={"state": text, "lang": lang})
    assert r.status_code == 400, r.text[:300]
    message = html_lib.unescape(re.search(r'id="error-message">([^<]*)<', r.text)[1])
    assert f"state.{where}" in message and "'a\\ud800'" in message, message
    assert bool(CJK.search(message)) == (lang == "zh"), message


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_lone_surrogate_label_sent_to_the_api_is_refused(client: TestClient, lang) -> None:
    payload = two_heads() | {"tokens": [["a", "b", "c"], ["d", LONE, "f"]]}
    r = api(client, payload, lang)
    assert r.status_code == 422 and r.json()["cell"] == "tokens[1][1]", r.text
    assert "'a\\ud800'" in r.json()["error"]
    assert bool(CJK.search(r.json()["error"])) == (lang == "zh")


def test_the_state_check_finds_the_first_lone_surrogate_however_deep() -> None:
    deep: Any = LONE
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ExplorerError, match=r"state\.x(\[0\]){5000}: expected text but found"):
        check_state_text({"x": deep})
    with pytest.raises(ExplorerError, match=r"^state\.tokens\[1\]\[0\]: expected text"):
        check_state_text({"tokens": [["a", "b"], [LONE, LONE + "b"]], "other": LONE})
    pair = json.loads('"\\ud83d\\ude00"')  # JSON joins an escaped pair into one character
    assert pair == "😀"
    check_state_text({"tokens": [["猫", pair]], "unread": LONE})  # and only read fields count
