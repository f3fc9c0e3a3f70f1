""" "Check my code" on sections 13 and 15 (:mod:`attnlab.web.routes_audit`) through the test
client: real audits of a correct and a buggy class from the zoo (a few seconds each, so only
four), and every refusal, which runs nothing."""

from __future__ import annotations

import html
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from web_support import ORIGIN, csrf_token

from attnlab.web import routes_audit
from attnlab.web.app import create_app
from attnlab.web.ui_text import UI

ZOO = Path(__file__).parent / "zoo"
GOOD = (ZOO / "good" / "lesson_head.py").read_text(encoding="utf-8")
BUGGY = (ZOO / "bad" / "no_scale_loop.py").read_text(encoding="utf-8")


def _client(data_dir: Path, **kwargs: Any) -> TestClient:
    client = TestClient(create_app(data_dir, figures_on=False, **kwargs), base_url=ORIGIN)
    client.get("/healthz")  # the session cookie
    return client


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    return _client(tmp_path_factory.mktemp("progress"))


def post_code(
    client: TestClient,
    sid: int = 13,
    lang: str = "en",
    code: str = "",
    file: tuple[str, bytes] = ("", b""),
    token: bool = True,
    **fields: str,
) -> Any:
    """The box's form as a browser sends it: multipart, an empty file part when none is chosen."""
    data = {"name": "AttentionHead", "kind": "auto", "init": "", **fields}
    if token:
        data["csrf_token"] = csrf_token(client)
    parts = {"code": (None, code.encode("utf-8")), "file": (file[0], file[1], "text/x-python")}
    return client.post(
        f"/section/{sid}/audit?lang={lang}", data=data, files=parts, headers={"Origin": ORIGIN}
    )


def report(response: Any) -> str:
    found = re.search(r'<pre class="audit-report"[^>]*>(.*?)</pre>', response.text, re.S)
    assert found, "no report on the page"
    return html.unescape(found.group(1))


def verdict(response: Any) -> tuple[str, str, str]:
    """(style, exit code, text) of the verdict inside the role=status element."""
    found = re.search(
        r'<div role="status"[^>]*>\s*<p class="verdict audit-verdict (\w+)" data-exit="(\d)">'
        r"(.*?)</p>",
        response.text,
        re.S,
    )
    assert found, "no verdict in the status element"
    return found.group(1), found.group(2), html.unescape(found.group(3))


def message(response: Any) -> str:
    found = re.search(r'<p class="error-message"[^>]*>(.*?)</p>', response.text, re.S)
    assert found, response.text[:300]
    return html.unescape(found.group(1))


def leftovers() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("attnlab-web-audit-*")}


# --- the box --------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_sections_13_and_15_have_the_box_with_a_label_for_every_field(
    client: TestClient, lang: str
) -> None:
    for sid in (13, 15):
        page = html.unescape(client.get(f"/section/{sid}?lang={lang}").text)
        start = page.index(f'id="audit-{sid}"')
        box = page[start : page.index("</section>", start)]
        assert UI[lang]["audit_title"] in box and UI[lang]["audit_intro"] in box
        assert 'enctype="multipart/form-data"' in box and 'name="csrf_token"' in box
        ids = re.findall(r'<(?:input|textarea|select)\b[^>]*? id="([^"]+)"', box)
        assert len(ids) == 5, ids  # code, file, name, kind, init
        for field_id in ids:
            assert f'<label for="{field_id}">' in box, field_id
        assert 'role="status"' in box and "disabled" not in box
    assert 'id="audit-12"' not in client.get(f"/section/12?lang={lang}").text


# --- real audits ----------------------------------------------------------------------------


@pytest.mark.usefixtures("judge_here")
def test_a_correct_class_passes_in_english_and_chinese(client: TestClient) -> None:
    before, progress = leftovers(), client.get("/api/progress").json()
    en = post_code(client, code=GOOD, lang="en")
    assert en.status_code == 200
    assert "result: 0 FAIL" in report(en) and "my_code.py:AttentionHead" in report(en)
    assert verdict(en) == ("ok", "0", UI["en"]["audit_pass"])
    zh = post_code(client, 15, "zh", code=GOOD)
    assert zh.status_code == 200 and "结果：0 项未通过" in report(zh)
    assert verdict(zh) == ("ok", "0", UI["zh"]["audit_pass"])
    assert 'id="audit-report-15"' in zh.text and 'id="audit-report-13"' not in zh.text
    # the form keeps what was sent; the folder is gone; nothing was saved
    assert 'value="AttentionHead"' in zh.text and GOOD.splitlines()[0] in html.unescape(zh.text)
    assert leftovers() <= before
    assert client.get("/api/progress").json() == progress


@pytest.mark.usefixtures("judge_here")
def test_a_buggy_class_shows_item_4_failing(client: TestClient) -> None:
    r = post_code(client, 15, code=BUGGY, name="LoopMHA", kind="multihead")
    assert r.status_code == 200
    text = report(r)
    assert re.search(r"^ 4\. .*FAIL", text, re.M), text
    assert not re.search(r"^ 4\. .*PASS", text, re.M)
    assert verdict(r) == ("bad", "1", UI["en"]["audit_fail"])
    assert '<option value="multihead" selected>' in r.text


@pytest.mark.usefixtures("judge_here")
def test_a_name_the_file_does_not_define_is_one_line(client: TestClient) -> None:
    r = post_code(client, code=GOOD, name="Nope")
    assert r.status_code == 200
    assert "cannot audit: my_code.py has no class or function called Nope" in report(r)
    assert verdict(r) == ("hint", "2", UI["en"]["audit_undecided"])


# --- refusals: nothing is run ---------------------------------------------------------------

BIG = "# " + "x" * (routes_audit.MAX_CODE_BYTES) + "\n"
TOO_BIG = "code: expected at most 204800 bytes (200 KB), got {} bytes"
BAD_NAME = "name: expected a Python identifier (e.g. AttentionHead), got {!r}"
BAD_INIT = "--init d_model= expects C, H, D, T or a number, bool or quoted string, got 'banana'"
BAD_KIND = "kind: expected one of auto, head, multihead, got 'encoder'"
BOTH = "code: expected pasted code or a file, not both, got both"
REFUSALS = [
    ({"code": BIG}, TOO_BIG.format(204803)),
    ({"file": ("big.py", BIG.encode())}, TOO_BIG.format("204801+")),
    ({"code": GOOD, "name": "1Head"}, BAD_NAME.format("1Head")),
    ({"code": GOOD, "name": "my head"}, BAD_NAME.format("my head")),
    ({"code": GOOD, "name": "class"}, BAD_NAME.format("class")),
    ({"code": GOOD, "name": ""}, BAD_NAME.format("")),
    ({"code": GOOD, "kind": "encoder"}, BAD_KIND),
    ({"file": ("head.py", b"x = '\xe4\xb8'\n")}, "code: expected UTF-8 text, byte 6 is not (0xe4)"),
    ({"file": ("head.txt", b"x = 1\n")}, "file: expected a .py file, got 'head.txt'"),
    ({"code": GOOD, "file": ("h.py", GOOD.encode())}, BOTH),
    ({"code": "  \n"}, "code: expected pasted code or a .py file, got nothing"),
    ({"code": GOOD, "init": "d_model=banana"}, BAD_INIT),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "line"), REFUSALS)
def test_bad_input_is_refused_with_one_line(
    client: TestClient, fields: dict[str, Any], line: str
) -> None:
    before = leftovers()
    r = post_code(client, **fields)
    assert r.status_code == 422 and message(r) == line
    assert 'class="audit-report"' not in r.text and leftovers() <= before


def test_refusals_are_in_the_pages_language(client: TestClient) -> None:
    r = post_code(client, lang="zh", code=GOOD, kind="encoder")
    assert r.status_code == 422
    assert message(r) == "类型：应为 auto, head, multihead 之一，收到的是 'encoder'"
    r = post_code(client, lang="zh", file=("a.py", b"\xff"))
    assert message(r) == "代码：应为 UTF-8 文本，第 1 字节不是（0xff）"


def test_a_body_past_the_forms_cap_is_refused_before_parsing(client: TestClient) -> None:
    r = post_code(client, code="#" * (routes_audit.AUDIT_BODY_BYTES + 10))
    assert r.status_code == 413 and "request body too large" in r.text
    r = client.post("/section/13/answer", content=b"x" * 70_000, headers={"Origin": ORIGIN})
    assert r.status_code == 413  # the other forms keep their 64 KiB cap


def test_hostile_bodies_are_refused_not_500(client: TestClient) -> None:
    headers = {"Origin": ORIGIN, "X-CSRF-Token": csrf_token(client)}
    r = client.post("/section/13/audit?lang=en", json={"code": GOOD}, headers=headers)
    assert r.status_code == 422 and message(r) == UI["en"]["audit_no_code"]
    broken = {**headers, "Content-Type": "multipart/form-data; boundary=xyz"}
    r = client.post("/section/13/audit?lang=en", content=b"--xyz\r\nnonsense", headers=broken)
    assert 400 <= r.status_code < 500
    r = post_code(client, code=GOOD, name="A\x00B")
    assert r.status_code == 422 and message(r) == BAD_NAME.format("A\x00B")


def test_only_sections_13_and_15_have_it(client: TestClient) -> None:
    r = post_code(client, 12, code=GOOD)
    assert r.status_code == 404
    assert message(r) == "section 12 has no Check my code: expected one of 13, 15"


def test_without_the_token_it_is_refused_like_every_form(client: TestClient) -> None:
    r = post_code(client, code=GOOD, token=False)
    assert r.status_code == 403 and message(r) == UI["en"]["session_lost"]
    assert 'id="form-again"' in r.text and 'name="code"' in r.text  # to send again, with a token
    other = client.post(
        "/section/13/audit?lang=en", data={"name": "A"}, headers={"Origin": "http://evil.example"}
    )
    assert other.status_code == 403 and "evil.example" in message(other)  # fmt: skip


def test_a_second_check_while_one_runs_is_told_to_wait(client: TestClient) -> None:
    assert routes_audit.AUDIT_LOCK.acquire(blocking=False)
    try:
        r = post_code(client, code=GOOD)
    finally:
        routes_audit.AUDIT_LOCK.release()
    assert r.status_code == 503
    assert message(r) == "another check is running, try again in a few seconds"


def test_another_worker_of_the_server_holding_the_slot_makes_a_check_wait(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One check per server across its workers: a worker of the same server (``attnlab serve
    --workers N`` gives them one name) holding the slot is another process binding its abstract
    name; this one then runs nothing and answers 503."""
    import socket

    from attnlab.web.worker import START_ENV

    monkeypatch.setenv(START_ENV, "test-server-slot:2")
    ran: list[str] = []
    monkeypatch.setattr(routes_audit, "_audit", lambda *a, **k: ran.append("ran"))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as other_worker:
        other_worker.bind("\0" + routes_audit.AUDIT_SLOT.format(server="test-server-slot"))
        r = post_code(client, code=GOOD)
    assert r.status_code == 503 and ran == []
    assert message(r) == "another check is running, try again in a few seconds"


@pytest.mark.usefixtures("db_env")
@pytest.mark.parametrize("session", [None, "not-a-session"])
def test_a_class_only_server_checks_the_session_before_it_runs_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, session: str | None
) -> None:
    """On ``serve --class-only`` a visitor without an invitation (401) or with a session the
    store does not know (403) is refused before the auditor is called."""
    ran: list[str] = []
    monkeypatch.setattr(routes_audit, "_audit", lambda *a, **k: ran.append("ran"))
    client = _client(tmp_path, class_only=True)
    if session is not None:
        client.cookies.set("attnlab_learner", session)
    r = post_code(client, code=GOOD)
    assert (r.status_code, ran) == (401 if session is None else 403, [])


# --- gating ---------------------------------------------------------------------------------


@pytest.mark.parametrize("off", ["shared", "sandbox"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_when_off_the_box_says_why_and_the_post_is_403(tmp_path: Path, off: str, lang: str) -> None:
    client = _client(tmp_path, audit_off=off)
    page = html.unescape(client.get(f"/section/13?lang={lang}").text)
    why = UI[lang][f"audit_off_{off}"]
    assert f'<p class="audit-off" id="audit-off-13">{why}</p>' in page
    assert '<fieldset disabled aria-describedby="audit-off-13">' in page
    r = post_code(client, lang=lang, code=GOOD)
    assert r.status_code == 403 and message(r) == why


def test_create_app_turns_it_off_for_a_host_that_is_not_loopback(tmp_path: Path) -> None:
    shared = _client(tmp_path, hosts=["127.0.0.1", "*"])
    assert 'id="audit-off-13"' in shared.get("/section/13").text
    local = _client(tmp_path, hosts=["127.0.0.1", "localhost"])
    assert 'id="audit-off-13"' not in local.get("/section/13").text
    with pytest.raises(ValueError, match="audit_off"):
        create_app(tmp_path, audit_off="maybe")


def test_gate_uses_the_auditors_sandbox_check(monkeypatch: pytest.MonkeyPatch) -> None:
    from attnlab.audit import sandbox

    for host in ("127.0.0.1", "localhost", "::1"):
        assert routes_audit.gate(host, allow=False) is None
    assert routes_audit.gate("0.0.0.0", allow=False) == "shared"
    monkeypatch.setattr(sandbox, "isolation", lambda: "missing")
    assert routes_audit.gate("0.0.0.0", allow=True) == "sandbox"
    assert routes_audit.gate("127.0.0.1", allow=False) is None
    monkeypatch.setattr(sandbox, "isolation", lambda: None)
    assert routes_audit.gate("192.168.1.5", allow=True) is None


def test_serve_documents_allow_audit() -> None:
    from typer.testing import CliRunner

    from attnlab.cli.main import app

    out = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"}).output
    assert "--allow-audit" in out and "Check my code" in out


def test_the_server_answers_while_a_check_runs_and_refuses_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slow stand-in for the auditor: the page still loads, and a second check is told to wait."""
    import threading

    import httpx
    from store_support import DEADLINE_S, serve_in_thread

    started, finish = threading.Event(), threading.Event()

    def slow(code: str, name: str, kind: str, init: str) -> dict[str, Any]:
        started.set()
        finish.wait(DEADLINE_S)
        return {"status": "error", "error": {"zh": "停", "en": "stub"}, "exit_code": 2}

    monkeypatch.setattr(routes_audit, "_audit", slow)
    with (
        serve_in_thread(create_app(tmp_path, figures_on=False)) as url,
        httpx.Client(base_url=url, timeout=DEADLINE_S) as http,
    ):
        http.get("/healthz")
        form = {"csrf_token": http.cookies["attnlab_csrf"], "name": "A", "code": "x = 1\n"}
        headers = {"Origin": url}
        first: list[Any] = []
        worker = threading.Thread(
            target=lambda: first.append(
                http.post("/section/13/audit?lang=en", data=form, headers=headers)
            )
        )
        worker.start()
        try:
            assert started.wait(DEADLINE_S)
            # The audit waits for ``finish``, which only this thread sets: a page that comes
            # back at all, while that audit is still running, was not queued behind it.
            assert http.get("/section/12?lang=en").status_code == 200
            assert worker.is_alive() and not first
            second = http.post("/section/13/audit?lang=en", data=form, headers=headers)
            assert second.status_code == 503 and message(second) == UI["en"]["audit_busy"]
        finally:
            finish.set()
            worker.join(DEADLINE_S)
    assert first[0].status_code == 200 and "cannot audit: stub" in report(first[0])
    assert verdict(first[0])[1] == "2"
