"""Two learners of one class on one server: no route, and no parameter of a route, shows or
changes another learner's data.

Learner A writes through every state-changing route (a completion, a check answer and its
self-assessment, a graded exercise, a practice answer, a note, a bookmark); then learner B
sends every route of the app. The table below is checked against ``app.routes``, so a route
added later without a case here fails this test.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest
from class_support import EXERCISE, joined, make_class, no_scale_answer
from test_web_fuzz import app_routes
from web_support import fetch_headers, post_form

from attnlab.grading import answers, reasons
from attnlab.progress.store import ProgressStore
from attnlab.web.app import create_app

#: On SQLite and on PostgreSQL (tests/store_backends.py).
pytestmark = pytest.mark.usefixtures("db_env")

NOTE_ID_A = "0a0a0a0a-0000-4000-8000-000000000001"
SECRET_NOTE = "alpha-secret-note softmax"
SECRET_CHECK = "alpha-secret-check answer"

#: (method, route path) -> the requests a learner sends to it: (url, form or None).
ROUTES: dict[tuple[str, str], list[tuple[str, dict[str, Any] | None]]] = {
    ("GET", "/"): [("/", None)],
    ("GET", "/lesson"): [("/lesson?lang=en", None)],
    ("GET", "/section/{section_id}/check"): [("/section/4/check?page=section", None)],
    ("GET", "/section/{section_id}"): [(f"/section/{s}?lang=en", None) for s in (3, 4, 5, 6)],
    ("GET", "/continue"): [("/continue", None)],
    ("GET", "/glossary"): [("/glossary", None)],
    # A profile named in the query is not a way in: the session alone says who is asking.
    ("GET", "/api/progress"): [("/api/progress", None), ("/api/progress?profile=c1-1", None)],
    ("GET", "/assets/code.css"): [("/assets/code.css", None)],
    ("GET", "/figures/{lang}/{name}.svg"): [("/figures/en/no-such-figure.svg", None)],
    ("GET", "/healthz"): [("/healthz", None)],
    ("POST", "/section/{section_id}/complete"): [("/section/3/complete", {"back": "section"})],
    ("POST", "/section/{section_id}/answer"): [("/section/4/answer", {"answer": "B's own"})],
    ("POST", "/section/{section_id}/assess"): [("/section/4/assess", {"status": "review"})],
    ("POST", "/exercise/{exercise_id}"): [(f"/exercise/{EXERCISE}", {"answer": "0.1"})],
    ("GET", "/practice/{section_id}"): [("/practice/5?seed=7", None)],
    ("POST", "/practice/{section_id}/answer"): [("/practice/5/answer",
                                                 {"seed": "7", "answer": "1"})],
    ("POST", "/practice/{section_id}/solution"): [("/practice/5/solution", {"seed": "7"})],
    ("GET", "/explorer"): [("/explorer", None)],
    ("POST", "/explorer"): [("/explorer", {"preset": "lesson"})],
    ("POST", "/api/explorer"): [("/api/explorer", {"json": True})],
    # B sends A's note id: B gets a note of its own under that id, A's note is untouched.
    ("POST", "/section/{section_id}/note"): [("/section/5/note",
                                              {"note_id": NOTE_ID_A, "text": "B's note"}),
                                             ("/section/5/note", {"note_id": NOTE_ID_A})],
    ("POST", "/section/{section_id}/bookmark"): [("/section/6/bookmark", {})],
    ("GET", "/notes"): [("/notes", None), ("/notes?profile=c1-1", None)],
    ("GET", "/search"): [("/search?q=alpha", None), ("/search?q=softmax", None)],
    ("POST", "/section/{section_id}/audit"): [("/section/13/audit", {"code": "x = 1"})],
    ("GET", "/fonts/{digest}/{name}"): [("/fonts/0/none.woff2", None)],
    ("GET", "/join/{token}"): [("/join/not-a-token", None)],
    ("POST", "/join/{token}"): [("/join/not-a-token", {})],
    ("GET", "/signed-out"): [("/signed-out", None)],
    ("POST", "/leave"): [],  # B signs out last, below: only B's session ends
    ("GET", "/teacher"): [("/teacher", None)],
    ("POST", "/teacher"): [("/teacher", {"key": "1.wrong"})],
    ("POST", "/teacher/leave"): [("/teacher/leave", {})],
}  # fmt: skip


def _send(client: Any, url: str, form: dict[str, Any] | None) -> Any:
    if form is None:
        return client.get(url, follow_redirects=True)
    if form.get("json"):
        body = json.dumps({"preset": "lesson"})
        headers = fetch_headers(client, {"Content-Type": "application/json"})
        return client.post(url, content=body, headers=headers)
    return post_form(client, url, form, follow_redirects=True)


def _saved(data_dir: Path, profile: str) -> dict[str, Any]:
    with ProgressStore.open(data_dir, profile) as store:
        data = store.export_dict()
    data.pop("exported_at")
    return data


def _write_as_a(a: Any) -> None:
    for url, form in [
        ("/section/3/complete", {"back": "section"}),
        ("/section/4/answer", {"answer": SECRET_CHECK}),
        ("/section/4/assess", {"status": "understood"}),
        (f"/exercise/{EXERCISE}", {"answer": no_scale_answer()}),
        ("/practice/5/answer", {"seed": "7", "answer": "0.5"}),
        ("/section/5/note", {"note_id": NOTE_ID_A, "text": SECRET_NOTE}),
        ("/section/6/bookmark", {}),
    ]:
        r = post_form(a, url, form)
        assert r.status_code == 303, f"{url}: {r.status_code} {r.text[:200]}"


@pytest.mark.parametrize("class_only", [False, True])
def test_two_learners_never_see_or_change_each_other(
    web_client_factory: Any, tmp_path: Path, class_only: bool
) -> None:
    _, _, links = make_class(tmp_path, ["Ada", "Bo"])
    opts = {"class_only": class_only, "audit_off": "shared"}
    a = joined(web_client_factory, tmp_path, links[0], **opts)
    b = joined(web_client_factory, tmp_path, links[1], **opts)
    app = create_app(tmp_path, figures_on=False)
    found = {(m, p) for m, p, _ in app_routes(app)}
    assert found == set(ROUTES), "every route of the app has a case here"

    _write_as_a(a)
    saved_a = _saved(tmp_path, "c1-1")
    assert [n["text"] for n in saved_a["notes"]] == [SECRET_NOTE]
    assert saved_a["completed"][0]["section"] == 3 and len(saved_a["attempts"]) == 3
    assert "secret-note" in a.get("/search?q=alpha").text, "A finds A's own note"

    done = answers.submit(EXERCISE, no_scale_answer())
    verdicts = [html.escape(reasons.present(EXERCISE, done.text, done.data(), lang), quote=False)
                for lang in ("zh", "en")]  # fmt: skip
    assert verdicts[0] in a.get(f"/section/{done.section}?lang=zh").text, "A sees A's verdict"
    saved_a = _saved(tmp_path, "c1-1")  # A's reading moved A's last section
    for (method, _), requests in ROUTES.items():
        for url, form in requests:
            r = _send(b, url, form)
            assert r.status_code < 500, f"{method} {url}: {r.status_code}"
            for secret in ("secret-note", "secret-check", *verdicts):
                assert secret not in r.text, f"{method} {url} showed A's {secret!r} to B"

    assert _saved(tmp_path, "c1-1") == saved_a, "nothing B sent changed A's data"
    saved_b = _saved(tmp_path, "c1-2")
    # B wrote, then emptied, a note under A's id: B's own note, now deleted; A's is intact.
    assert [(n["id"], n["deleted"]) for n in saved_b["notes"]] == [(NOTE_ID_A, True)]
    assert [c["section"] for c in saved_b["completed"]] == [3]
    assert b.get("/api/progress").json()["profile"] == "c1-2"
    assert post_form(b, "/leave").status_code == 303
    assert a.get("/api/progress").json()["profile"] == "c1-1", "B's sign-out ends only B's"
    after = b.get("/api/progress")
    assert after.status_code == 401 if class_only else after.json()["profile"] == "default"
    empty = _saved(tmp_path, "default")
    assert not (empty["notes"] or empty["attempts"] or empty["completed"]), "default untouched"


def test_class_only_asks_for_the_link_and_a_revoked_session_is_refused(
    web_client_factory: Any, tmp_path: Path
) -> None:
    _, _, links = make_class(tmp_path, ["Ada"])
    visitor = web_client_factory(tmp_path, class_only=True)
    for url in ("/lesson?lang=en", "/notes?lang=en", "/search?q=a&lang=en",
                "/api/progress?lang=en"):  # fmt: skip
        r = visitor.get(url, follow_redirects=True)
        assert r.status_code == 401 and "invitation link" in r.text, url
    assert 'class="top"' in visitor.get("/lesson?lang=en").text, "with the site's header"
    r = post_form(visitor, "/section/3/complete?lang=en", back="section")
    assert r.status_code == 401
    assert _saved(tmp_path, "default")["completed"] == []

    stale = web_client_factory(tmp_path)
    stale.cookies.set("attnlab_learner", "x" * 43)
    r = stale.get("/lesson?lang=en")
    assert r.status_code == 403 and "new invitation link" in r.text
    assert joined(web_client_factory, tmp_path, links[0]).get("/lesson").status_code == 200
