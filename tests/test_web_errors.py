"""The web lesson's error pages: an unforeseen failure is a 500 page in the learner's language
(logged once on the server, no traceback in the browser); 404/405/400/422 pages in the learner's
language; and the test suite fails whenever a route raises (conftest's ``no_web_crash`` guard and
the shared client). Random input on every route: ``test_web_fuzz.py``."""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from web_support import ORIGIN, post_form

from attnlab.web.app import create_app
from attnlab.web.security import CSRF_FIELD

SECRET = "s3cret-detail-/home/learner/db"


# --- the 500 page ------------------------------------------------------------------------------


def broken_app(tmp_path: Path, lang: str | None = None) -> FastAPI:
    app = create_app(tmp_path, figures_on=False, lang=lang)

    def boom() -> None:
        raise RuntimeError(SECRET)

    for path in ("/boom", "/api/boom"):
        app.add_api_route(path, boom, methods=["GET", "POST"])
    return app


@pytest.mark.server_error
@pytest.mark.parametrize(
    ("url", "cookies", "lang", "words"),
    [
        ("/boom", {}, "zh", ("出了点问题", "你已经保存的进度是安全的")),
        ("/boom?lang=en", {}, "en", ("Something went wrong", "Your saved progress is safe")),
        ("/boom", {"attnlab_lang": "en"}, "en", ("Something went wrong", "progress is safe")),
        ("/boom?lang=xx", {}, "zh", ("出了点问题", "进度是安全的")),
        ("/boom?lang=xx", {}, "en-server", ("Something went wrong", "progress is safe")),
    ],
)
def test_unforeseen_error_is_a_500_page_in_the_learners_language(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, url: str, cookies: dict, lang: str, words
) -> None:
    app = broken_app(tmp_path, lang="en" if lang == "en-server" else None)  # `serve --lang en`
    lang = lang.removesuffix("-server")
    client = TestClient(app, base_url=ORIGIN, raise_server_exceptions=False)
    client.cookies.update(cookies)
    with caplog.at_level(logging.ERROR, logger="attnlab.web.errors"):
        r = client.get(url)
    assert r.status_code == 500 and r.headers["content-type"].startswith("text/html")
    assert f'<html lang="{"zh-CN" if lang == "zh" else "en"}">' in r.text
    assert all(w in r.text for w in words)
    for leak in ("Traceback", "RuntimeError", SECRET, 'File "', "boom"):
        assert leak not in r.text
    assert r.headers["x-frame-options"] == "DENY"
    (record,) = [rec for rec in caplog.records if rec.name == "attnlab.web.errors"]
    assert record.exc_info and record.exc_info[0] is RuntimeError  # the server log has it all
    ref = record.getMessage().rsplit("ref ", 1)[1].rstrip(")")
    assert "RuntimeError in GET /boom" in record.getMessage() and ref in r.text


@pytest.mark.server_error
def test_unforeseen_error_on_the_api_is_json_without_traceback(tmp_path: Path) -> None:
    client = TestClient(broken_app(tmp_path), base_url=ORIGIN, raise_server_exceptions=False)
    r = client.post("/api/boom?lang=en", json={})
    assert r.status_code == 500 and set(r.json()) == {"error"}
    assert r.json()["error"].startswith("Something went wrong") and SECRET not in r.text


@pytest.mark.server_error
def test_the_500_page_survives_a_broken_error_template(tmp_path: Path) -> None:
    app = broken_app(tmp_path)

    class Broken:
        def get_template(self, name: str) -> Any:
            raise OSError(f"cannot read {name}")

    app.state.templates = Broken()
    r = TestClient(app, base_url=ORIGIN, raise_server_exceptions=False).get("/boom?lang=en")
    assert r.status_code == 500 and "Your saved progress is safe" in r.text
    assert "cannot read" not in r.text and SECRET not in r.text


@pytest.mark.server_error
def test_the_shared_client_reraises_what_a_route_lets_escape(tmp_path: Path, web_client_factory):
    """So a test that reaches a raising route fails with the route's exception."""
    client = web_client_factory(tmp_path)

    def boom() -> None:
        raise RuntimeError(SECRET)

    client.app.add_api_route("/boom", boom)
    with pytest.raises(RuntimeError, match="s3cret"):
        client.get("/boom")


@pytest.mark.server_error  # the inner run's failure is logged while this test runs
def test_the_guard_fails_a_test_whose_route_raised_behind_a_500(pytester: pytest.Pytester):
    """conftest's ``no_web_crash`` fails a test even when its client swallowed the exception."""
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text("utf-8"))
    pytester.makepyfile(
        test_inner=f"""
        from fastapi.testclient import TestClient
        from attnlab.web.app import create_app
        def test_swallowed(tmp_path):
            app = create_app(tmp_path, figures_on=False)
            def boom():
                raise RuntimeError("inner")
            app.add_api_route("/boom", boom)
            client = TestClient(app, base_url="{ORIGIN}", raise_server_exceptions=False)
            assert client.get("/boom").status_code == 500
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*a web route raised (1 time(s)); first: unhandled RuntimeError*"])


# --- 404, 405, 400, 422 in the learner's language ---------------------------------------------


@pytest.mark.parametrize(
    ("lang", "query", "expected"),
    [
        ("zh", "", ("没有这个页面：/nowhere", "不接受 PUT 请求", "回答：缺少这一项", "无法读取")),
        ("en", "?lang=en", ("page not found: /nowhere", "does not accept PUT", "answer: this",
                            "form data could not be read")),
    ],
)  # fmt: skip
def test_404_405_400_and_missing_field_pages_speak_the_learners_language(
    tmp_path: Path, web_client_factory, lang: str, query: str, expected: tuple[str, ...]
) -> None:
    client = web_client_factory(tmp_path)
    responses = (
        client.get(f"/nowhere{query}"),
        client.put(f"/lesson{query}"),
        post_form(client, f"/section/1/answer{query}"),  # the token and no answer
        client.post(
            f"/section/1/answer{query}",
            content=b"x",
            headers={"Origin": ORIGIN, "Content-Type": "multipart/form-data"},
        ),
    )
    assert [r.status_code for r in responses] == [404, 405, 422, 400]
    assert "GET" in responses[1].headers["allow"]
    for r, words in zip(responses, expected, strict=True):
        assert f'<html lang="{"zh-CN" if lang == "zh" else "en"}">' in r.text
        assert words in r.text and "Not Found" not in r.text and "Method Not" not in r.text


@pytest.mark.server_error
def test_the_real_server_sends_the_500_page_and_logs_the_traceback_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import httpx
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(broken_app(tmp_path), log_config=None))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    with caplog.at_level(logging.INFO):
        thread.start()
        for _ in range(300):  # at most 15 s
            if server.started:
                break
            time.sleep(0.05)
        try:
            url = f"http://127.0.0.1:{sock.getsockname()[1]}/boom?lang=en"
            r = httpx.get(url, timeout=15)
        finally:
            server.should_exit = True
            thread.join(timeout=10)
            sock.close()
    assert r.status_code == 500 and "Your saved progress is safe" in r.text
    assert SECRET not in r.text and "Traceback" not in r.text
    tracebacks = [rec for rec in caplog.records if rec.exc_info]
    assert [rec.name for rec in tracebacks] == ["attnlab.web.errors"]  # not uvicorn's copy too


@pytest.mark.parametrize("where", ["header", "form"])
def test_a_non_ascii_session_token_is_refused_not_a_crash(
    tmp_path: Path, web_client_factory, where: str
) -> None:
    """hmac.compare_digest raised TypeError on non-ASCII text: a 500 before the fix."""
    client = web_client_factory(tmp_path)
    if where == "header":
        headers: dict[str, Any] = {"Origin": ORIGIN, "X-CSRF-Token": "é".encode("latin-1")}
        r = client.post("/section/1/complete?lang=en", data={}, headers=headers)
    else:
        r = client.post(
            "/section/1/complete?lang=en", data={CSRF_FIELD: "令牌"}, headers={"Origin": ORIGIN}
        )
    said = "session token mismatch" if where == "header" else "Your session had expired"
    assert r.status_code == 403 and said in r.text


def test_a_refusal_is_a_page_of_the_sites_layout(tmp_path: Path, web_client_factory) -> None:
    """Top bar, navigation and search box like every page; no progress bar (reading the
    progress may be what failed); the language switch only where a GET reloads the page."""
    from test_web_fuzz import LAYOUT

    client = web_client_factory(tmp_path)
    missing = client.get("/nowhere?lang=en")
    posted = post_form(client, "/section/1/answer?lang=en")  # the token and no answer
    assert (missing.status_code, posted.status_code) == (404, 422)
    for r in (missing, posted):
        assert [part for part in LAYOUT if part not in r.text] == [], r.text[:300]
        assert 'id="week-progress"' not in r.text and 'id="error-message"' in r.text
    assert 'id="lang-switch"' in missing.text and 'href="/nowhere?lang=zh"' in missing.text
    assert 'id="lang-switch"' not in posted.text
