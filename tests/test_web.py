"""HTTP tests of the web lesson through FastAPI's test client: every route, and its refusals."""

from __future__ import annotations

import html as html_lib
import inspect
import math
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from web_support import ORIGIN, csrf_token, fetch_headers, post_form

from attnlab.content import knowledge
from attnlab.content.numbers import lesson_numbers
from attnlab.core import example
from attnlab.core.modules import CausalSelfAttention
from attnlab.core.pipeline import lesson_stages
from attnlab.progress.store import ProgressStore
from attnlab.text.fmt import answer, num, vec
from attnlab.web.app import create_app


def make_client(data_dir: Path, **kwargs: object) -> TestClient:
    app = create_app(data_dir, figures_on=False, **kwargs)
    # A route that raises fails the test (and conftest's no_web_crash guard fails it too).
    client = TestClient(app, base_url=ORIGIN, raise_server_exceptions=True)
    assert client.get("/lesson").status_code == 200  # sets the session cookie
    return client


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    return make_client(tmp_path)


def post(client: TestClient, url: str, data: dict[str, str] | None = None, **headers: str):
    return post_form(client, url, data, headers=headers)


def completed(tmp_path: Path) -> tuple[int, ...]:
    with ProgressStore.open(tmp_path) as store:
        return store.summary().completed


def test_lesson_page_has_all_sections_in_order_with_pipeline_numbers(client: TestClient) -> None:
    html = client.get("/lesson").text
    ids = [int(i) for i in re.findall(r'<article class="section[^"]*" id="s-(\d+)"', html)]
    assert ids == list(range(20))
    st, n = lesson_stages(), lesson_numbers()
    assert f"weights       = {vec(st.weights[0, -1])}" in html  # section 5's worked row
    assert f"sum           = {num(n.final['sums'][0], 4)}" in html
    assert (
        '<mtable class="bmatrix"><mtr><mtd><mn>0.566</mn>' in html
    )  # S_A as a MathML matrix, from the pipeline
    assert "4,000,000" in html and "250,000×" in html  # section 17's measured counts
    r = n.experiment
    assert num(r.grad_autograd, 6) == "-0.076159" and num(r.grad_autograd, 6) in html
    assert num(r.q_new, 6) in html and num(r.before.target_probs[0], 6) in html
    for s in knowledge.sections("zh"):
        assert s.title in html


def test_code_blocks_show_the_real_source(client: TestClient) -> None:
    html = client.get("/section/15").text
    assert 'class="hl"' in html and "attnlab.core.modules:CausalSelfAttention.stages" in html
    text = html_lib.unescape(re.sub(r"<[^>]+>", "", html))
    source = inspect.getsource(CausalSelfAttention.stages)
    assert source.strip() in text  # the whole function, character for character
    assert ".hl .k " in client.get("/assets/code.css").text
    assert 'data-copied="已复制">复制</button>' in html and "built-in method" not in html


def test_section_page_and_refusals(client: TestClient) -> None:
    assert 'id="s-9"' in client.get("/section/9").text
    for bad in ("20", "abc", "-1"):
        r = client.get(f"/section/{bad}")
        assert r.status_code == 404 and "节号应为 0–19 的整数" in r.text
    r = client.get("/section/abc?lang=en")
    assert r.status_code == 404 and "no such section: expected an integer 0-19" in r.text
    assert client.get("/nowhere").status_code == 404


def test_language_switch_keeps_the_section(client: TestClient) -> None:
    zh = client.get("/section/7?lang=zh").text
    assert 'href="/section/7?lang=en"' in zh
    en = client.get("/section/7?lang=en")
    assert knowledge.section(7, "en").title in en.text and 'lang="en"' in en.text
    assert client.get("/lesson").text.count(knowledge.section(3, "en").title) >= 1  # cookie kept
    r = client.get("/lesson?lang=fr")
    assert r.status_code == 400 and "lang 应为 zh, en 之一" in r.text  # the page's language


def test_mark_complete_needs_same_origin_and_token(client: TestClient, tmp_path: Path) -> None:
    token = csrf_token(client)
    url = "/section/4/complete"
    assert client.post(url, data={"csrf_token": token}).status_code == 403  # no Origin/Referer
    r = client.post(url, data={"csrf_token": token}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and "已拒绝跨站请求" in r.text
    r = client.post(url, data={"csrf_token": "x" * 43}, headers={"Origin": ORIGIN})
    assert r.status_code == 403 and "会话已失效" in r.text  # the form comes back to send again
    r = client.post(url, data={}, headers={"Referer": ORIGIN + "/lesson"})
    assert r.status_code == 403
    assert completed(tmp_path) == ()
    r = post(client, url, {"back": "lesson"})
    assert r.status_code == 303 and r.headers["location"] == "/lesson?lang=zh#complete-4"
    assert completed(tmp_path) == (4,)
    assert "已完成 1 / 20 节" in client.get("/lesson").text


def test_post_refusals_change_nothing(client: TestClient, tmp_path: Path) -> None:
    assert post(client, "/section/25/complete").status_code == 404
    assert post(client, "/section/3/complete", {"back": "https://evil.example"}).status_code == 422
    assert post(client, "/section/3/answer", {"answer": "   "}).status_code == 422
    assert post(client, "/section/3/answer", {"answer": "x" * 2001}).status_code == 422
    assert post(client, "/section/3/answer").status_code == 422  # field missing
    assert post(client, "/section/3/assess", {"status": "maybe"}).status_code == 422
    assert post(client, "/exercise/99z", {"answer": "1"}).status_code == 404
    with ProgressStore.open(tmp_path) as store:
        s = store.summary()
        assert (s.completed, s.assessments, store.attempts()) == ((), {}, [])


def test_answer_reveal_and_self_assessment(client: TestClient, tmp_path: Path) -> None:
    r = post(client, "/section/6/answer", {"answer": "<script>alert(1)</script> weights"})
    assert r.status_code == 303 and r.headers["location"].endswith("#check-6")
    html = client.get(r.headers["location"]).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; weights" in html and "<script>alert" not in html
    assert knowledge.section(6).answer[:20] in html
    assert post(client, "/section/6/assess", {"status": "review"}).status_code == 303
    with ProgressStore.open(tmp_path) as store:
        assert store.summary().assessments == {6: "review"}


def test_graded_exercise_is_checked_against_the_pipeline(client: TestClient, tmp_path: Path):
    ex = knowledge.section(9).exercises[0]
    right = answer(ex.expected, ex.decimals)
    r = post(client, f"/exercise/{ex.id}", {"answer": right})
    assert r.status_code == 303
    assert "✓ 正确" in client.get(r.headers["location"]).text
    post(client, f"/exercise/{ex.id}", {"answer": "0.123"})
    assert "✗ 还不对" in client.get("/section/9").text
    with ProgressStore.open(tmp_path) as store:
        assert [a["correct"] for a in store.attempts(ex.id)] == [True, False]


def test_progress_is_shared_with_the_terminal_store(client: TestClient, tmp_path: Path) -> None:
    with ProgressStore.open(tmp_path) as store:  # what `attnlab quiz` writes
        store.mark_complete(0)
        store.mark_complete(1)
    assert "已完成 2 / 20 节" in client.get("/lesson").text
    assert client.get("/api/progress").json()["completed"] == [0, 1]
    r = client.get("/continue", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/section/2")


def test_cross_site_page_load_does_not_move_the_bookmark(client: TestClient, tmp_path: Path):
    client.get("/section/3", headers={"Sec-Fetch-Site": "same-origin"})
    client.get("/section/15", headers={"Sec-Fetch-Site": "cross-site"})
    assert client.get("/api/progress").json()["last_section"] == 3


def test_glossary_page(client: TestClient) -> None:
    html = client.get("/glossary?lang=en").text
    for term in knowledge.glossary("en"):
        assert f'id="term-{term.id}"' in html


def test_body_size_is_capped(tmp_path: Path) -> None:
    client = make_client(tmp_path, max_body=1024)
    token = csrf_token(client)
    r = post(client, "/section/1/answer", {"answer": "x" * 5000})
    assert r.status_code == 413 and "too large" in r.text

    def chunks():
        yield f"csrf_token={token}&answer=".encode()
        for _ in range(10):
            yield b"y" * 500

    headers = {"Origin": ORIGIN, "Content-Type": "application/x-www-form-urlencoded"}
    r = client.post("/section/1/answer", content=chunks(), headers=headers)
    assert r.status_code == 413
    with ProgressStore.open(tmp_path) as store:
        assert store.attempts() == []


def test_unknown_host_and_security_headers(client: TestClient) -> None:
    assert client.get("/lesson", headers={"Host": "attacker.example"}).status_code == 400
    r = client.get("/lesson")
    assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
    fresh = TestClient(create_app(figures_on=False), base_url=ORIGIN)
    cookie = fresh.get("/healthz").headers["set-cookie"].lower()
    assert "samesite=strict" in cookie and "httponly" in cookie


def api(client: TestClient, payload: object, **headers: str):
    return client.post("/api/explorer", json=payload, headers=fetch_headers(client, headers))


def lesson_payload() -> dict[str, object]:
    return {
        "x": example.lesson_x().tolist(),
        "w_q": example.lesson_w_q().tolist(),
        "w_k": example.lesson_w_k().tolist(),
        "w_v": example.lesson_w_v().tolist(),
    }


def test_explorer_api_recomputes_with_the_pipeline(client: TestClient) -> None:
    body = api(client, lesson_payload()).json()
    assert body["stages"]["weights"] == [
        [[round(v, 6) for v in r] for r in b] for b in lesson_stages().weights.tolist()
    ]
    assert body["stages"]["masked_scores"][0][0][1] == "-inf"
    assert 'data-stage="weights"' in body["html"]
    edited = lesson_payload()
    edited["w_q"][1][0] = 3.0  # type: ignore[index]
    assert api(client, edited).json()["stages"]["weights"] != body["stages"]["weights"]


def test_explorer_api_refusals(client: TestClient) -> None:
    bad = lesson_payload()
    bad["x"][0][1][2] = "abc"  # type: ignore[index]
    r = api(client, bad)
    assert r.status_code == 422
    # The page's language (zh by default): the explorer's messages are in it.
    assert r.json()["cell"] == "x[0][1][2]"
    assert r.json()["error"] == "X（提示 A）第 2 行第 3 列：需要一个数，这里是“abc”"
    big = {**lesson_payload(), "x": [[[0.0] * 4] * 9] * 2}
    r = api(client, big)
    assert r.status_code == 422 and "1 ≤ T ≤ 8" in r.json()["error"]
    json_type = {"Content-Type": "application/json"}
    r = client.post("/api/explorer", content=b"{", headers=fetch_headers(client, json_type))
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]
    r = client.post("/api/explorer", content=b"x=1", headers={"Origin": ORIGIN})
    assert r.status_code == 403
    r = api(client, lesson_payload(), **{"Content-Type": "text/plain"})
    assert r.status_code == 415


def test_explorer_page_and_form_fallback(client: TestClient) -> None:
    page = client.get("/explorer?preset=uniform&T=3&C=4&d=2")
    assert page.status_code == 200 and 'data-cell="x[1][2][3]"' in page.text
    assert client.get("/explorer?preset=nope").status_code == 400
    assert client.get("/explorer?T=0").status_code == 400
    form = {"T": "2", "C": "4", "d": "2"}
    for k, name in (("x", "x"), ("w_q", "w_q"), ("w_k", "w_k"), ("w_v", "w_v")):
        values = lesson_payload()[k]
        if name == "x":
            for b, prompt in enumerate(values):  # type: ignore[arg-type]
                for t, row in enumerate(prompt):
                    form |= {f"x[{b}][{t}][{c}]": str(v) for c, v in enumerate(row)}
        else:
            for i, row in enumerate(values):  # type: ignore[arg-type]
                form |= {f"{name}[{i}][{j}]": str(v) for j, v in enumerate(row)}
    ok = post(client, "/explorer", form)
    assert ok.status_code == 200 and f">{num(lesson_stages().weights[1, 1, 0])}<" in ok.text
    r = post(client, "/explorer", form | {"w_k[2][1]": "zz"})
    assert r.status_code == 422
    assert re.search(r'data-cell="w_k\[2\]\[1\]"[^>]*class="invalid"', r.text)


def test_figures_are_kept_svg_files_the_page_links(tmp_path: Path) -> None:
    """A page links each figure (the figures were 450 of /lesson's 640 KB when inline); the
    file is SVG, kept by the browser (its URL changes with the version), sized in points."""
    pytest.importorskip("matplotlib")
    client = TestClient(create_app(tmp_path), base_url=ORIGIN)
    html = client.get("/section/11?lang=en").text
    found = re.search(r'<figure class="plot" data-figure="mask"><img src="([^"]+)"[^>]*'
                      r'width="(\d+)"[^>]*data-points="(\d+)"', html)  # fmt: skip
    assert found and found[2] == found[3]
    assert re.fullmatch(r"/figures/en/mask\.svg\?v=[0-9a-f]{10}", found[1])
    svg = client.get(found[1])
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert "immutable" in svg.headers["cache-control"]
    assert svg.text.startswith("<svg") and 'xmlns="http://www.w3.org/2000/svg"' in svg.text
    box = re.search(r'viewBox="0 0 ([\d.]+) ', svg.text)
    assert box and math.ceil(float(box[1])) == int(found[2])  # one CSS px per point
    assert "<svg" not in client.get("/lesson?lang=en").text
    for bad in ("/figures/en/pie.svg", "/figures/xx/mask.svg"):
        refused = client.get(bad)
        assert refused.status_code == 404 and "mask" in refused.text


def test_serve_command_refuses_bad_setup_without_starting(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from attnlab.cli.main import app

    (tmp_path / "progress.sqlite3").write_text("not a database")
    r = CliRunner().invoke(
        app, ["--lang", "en", "serve", "--data-dir", str(tmp_path), "--port", "0"]
    )
    assert r.exit_code == 2 and "not an attnlab progress database" in r.output
    r = CliRunner().invoke(app, ["serve", "--data-dir", str(tmp_path), "--port", "0"])
    assert r.exit_code == 2 and "不是 attnlab 的进度数据库" in r.output
    assert CliRunner().invoke(app, ["serve", "--port", "70000"]).exit_code == 2
    help_text = CliRunner().invoke(app, ["serve", "--help"]).output
    assert "--host" in help_text and "--open" in help_text


def test_no_lesson_number_is_typed_into_the_prose() -> None:
    """Every decimal or multi-digit number on the page must come from the pipeline: the section
    modules' string literals (docstrings aside) hold none."""
    import ast
    import importlib
    import pkgutil

    import attnlab.content

    names = [
        m.name
        for m in pkgutil.iter_modules(attnlab.content.__path__)
        if m.name.startswith("sections")
    ]
    assert len(names) >= 4
    typed = []
    for module in (importlib.import_module(f"attnlab.content.{name}") for name in names):
        tree = ast.parse(inspect.getsource(module))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.FunctionDef) and ast.get_docstring(node)
        }
        texts = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ]
        for node in texts:
            if re.search(r"\d\.\d|\d\d", node.value):
                typed.append(f"{module.__name__}:{node.lineno}: {node.value[:40]!r}")
    assert typed == []


def test_home_keeps_the_asked_language(client: TestClient) -> None:
    """``/?lang=en`` opens the lesson in English (it used to drop the language)."""
    response = client.get("/?lang=en", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/lesson?lang=en"
    assert client.get("/?lang=xx").status_code == 400
