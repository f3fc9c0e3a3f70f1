"""The class on the web: invitations work once, only hashes are stored, ``/teacher`` opens for
the teacher key alone (and slows down a guesser), and the report counts what learners posted."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from class_support import EXERCISE, joined, make_class, no_scale_answer
from web_support import post_form

from attnlab.content import knowledge
from attnlab.grading import answers
from attnlab.mistakes import catalogue
from attnlab.progress.sessions import MAX_FAILURES
from attnlab.progress.store import FILE_NAME
from attnlab.text.fmt import answer as right_answer


def _db_bytes(data_dir: Path) -> bytes:
    """The database and its WAL as bytes (a secret may sit in either)."""
    with sqlite3.connect(data_dir / FILE_NAME) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return b"".join(p.read_bytes() for p in data_dir.glob(f"{FILE_NAME}*"))


@pytest.mark.usefixtures("db_env")
def test_a_link_works_once_and_sets_a_safe_cookie(web_client_factory: Any, tmp_path: Path) -> None:
    from attnlab.progress.sessions import LEARNER_SESSION

    _, _, links = make_class(tmp_path, ["Ada"])
    first = web_client_factory(tmp_path)
    for _ in range(3):  # a chat app's previews: the GET shows the button and uses nothing up
        page = first.get(links[0] + "?lang=en", follow_redirects=False)
        assert page.status_code == 200 and "Start with this link" in page.text
        assert "attnlab_learner" not in first.cookies
        assert page.headers["referrer-policy"] == "same-origin"
    r = post_form(first, links[0] + "?lang=en")
    assert r.status_code == 303 and r.headers["location"] == "/lesson?lang=en"
    cookie = r.headers["set-cookie"].lower()
    assert "attnlab_learner=" in cookie and "httponly" in cookie and "samesite=lax" in cookie
    assert "path=/" in cookie and "secure" not in cookie, "Secure only over https"
    assert f"max-age={int(LEARNER_SESSION.total_seconds())}" in cookie, "kept when closed"
    again = web_client_factory(tmp_path).get(links[0] + "?lang=en")
    assert again.status_code == 404 and "already used" in again.text
    assert post_form(web_client_factory(tmp_path), links[0]).status_code == 404
    assert 'class="top"' in again.text, "a page with the site's header"
    assert web_client_factory(tmp_path).get("/join/nonsense?lang=en").status_code == 404
    assert first.get("/api/progress").json()["profile"] == "c1-1"


@pytest.mark.usefixtures("db_env")
def test_a_link_over_https_sets_a_secure_cookie(web_client_factory: Any, tmp_path: Path) -> None:
    _, _, links = make_class(tmp_path, ["Ada"])
    client = web_client_factory(tmp_path)
    client.base_url = client.base_url.copy_with(scheme="https")
    client.get(links[0])  # the page sets the CSRF cookie (Secure over https: sent back here)
    r = post_form(client, links[0], origin=str(client.base_url).rstrip("/"))
    assert r.status_code == 303 and "secure" in r.headers["set-cookie"].lower()


@pytest.mark.usefixtures("db_env")
def test_a_new_link_revokes_the_unused_one(web_client_factory: Any, tmp_path: Path) -> None:
    from attnlab.progress.store import ProgressStore

    cid, _, links = make_class(tmp_path, ["Ada"])
    with ProgressStore.open(tmp_path) as store:
        [fresh] = store.invite(cid, ["Ada"])
    assert fresh.profile == "c1-1", "the same learner, a new link"
    assert web_client_factory(tmp_path).get(links[0]).status_code == 404
    assert joined(web_client_factory, tmp_path, f"/join/{fresh.token}")


def test_only_hashes_of_keys_links_and_sessions_are_stored(
    web_client_factory: Any, tmp_path: Path
) -> None:
    _, key, links = make_class(tmp_path, ["Ada", "Bo"])
    learner = joined(web_client_factory, tmp_path, links[0])
    teacher = web_client_factory(tmp_path)
    assert post_form(teacher, "/teacher", key=key).status_code == 303
    stored = _db_bytes(tmp_path)
    secrets = [key, key.partition(".")[2], *(link.rsplit("/", 1)[1] for link in links),
               learner.cookies["attnlab_learner"], teacher.cookies["attnlab_teacher"]]  # fmt: skip
    for secret in secrets:
        assert secret.encode() not in stored, f"{secret[:8]}... is stored in the clear"
    assert b"c1-1" in stored, "the check reads the file (the learner's profile is in it)"


@pytest.mark.usefixtures("db_env")
def test_teacher_needs_the_key_not_a_learner_cookie(
    web_client_factory: Any, tmp_path: Path
) -> None:
    _, key, links = make_class(tmp_path, ["Ada"])
    nobody = web_client_factory(tmp_path)
    r = nobody.get("/teacher?lang=en")
    assert r.status_code == 403 and 'name="key"' in r.text and "By learner" not in r.text
    learner = joined(web_client_factory, tmp_path, links[0])
    r = learner.get("/teacher?lang=en")
    assert r.status_code == 403 and "By learner" not in r.text, "a learner's cookie opens nothing"
    learner.cookies.set("attnlab_teacher", learner.cookies["attnlab_learner"])
    assert learner.get("/teacher?lang=en").status_code == 403, "nor in the teacher's cookie"
    r = post_form(nobody, "/teacher?lang=en", key=key[:-1] + ("A" if key[-1] != "A" else "B"))
    assert r.status_code == 403 and "opens no class" in r.text
    r = post_form(nobody, "/teacher?lang=en", key=key)
    assert r.status_code == 303
    assert "httponly" in r.headers["set-cookie"].lower()
    page = nobody.get("/teacher?lang=en")
    assert page.status_code == 200 and "By learner" in page.text and "Ada" in page.text


@pytest.mark.usefixtures("db_env")
def test_repeated_wrong_keys_are_slowed_down(web_client_factory: Any, tmp_path: Path) -> None:
    _, key, _ = make_class(tmp_path, ["Ada"])
    guesser = web_client_factory(tmp_path)
    for _ in range(MAX_FAILURES):
        assert post_form(guesser, "/teacher?lang=en", key="1.wrong").status_code == 403
    r = post_form(guesser, "/teacher?lang=en", key=key)
    assert r.status_code == 429, "even the right key waits: it is not checked now"
    assert 1 <= int(r.headers["retry-after"]) <= 60 and "too many wrong keys" in r.text


@pytest.mark.usefixtures("db_env")
def test_report_counts_and_ranks_what_learners_posted(
    web_client_factory: Any, tmp_path: Path
) -> None:
    _, key, links = make_class(tmp_path, ["Ada", "Bo", "Cy"])
    ex = knowledge.exercise(EXERCISE, "en")
    right, wrong = right_answer(ex.expected, ex.decimals), no_scale_answer()
    plans = {0: [wrong], 1: [wrong, right], 2: [right]}
    for i, plan in plans.items():
        learner = joined(web_client_factory, tmp_path, links[i])
        for text in plan:
            assert post_form(learner, f"/exercise/{EXERCISE}", answer=text).status_code == 303
    post_form(learner, "/section/9/complete", back="section")  # Cy skipped ahead
    made = answers.submit(EXERCISE, wrong).data()["mistakes"]
    assert "no_scale" in made, "the wrong answer is the catalogued no-scale mistake"

    teacher = web_client_factory(tmp_path)
    post_form(teacher, "/teacher", key=key)
    page = teacher.get("/teacher?lang=en").text
    assert "Last answers: 2 right, 1 wrong" in page
    title = catalogue.get("no_scale").title["en"]
    assert f"2 of 3: {title}" in page, "Ada and Bo made it, Bo fixed it since"
    teaches = catalogue.get("no_scale").section
    assert f'<li data-mistake="no_scale">2 of 3: {title} · <a href="/section/{teaches}' in page
    stuck = page.split('id="by-section"')[1]
    assert f'data-section="{ex.section}"' in stuck and "Ada" in stuck
    assert 'data-section="8"' in stuck and "Cy" in stuck.split('data-section="8"')[1][:200]
    zh = teacher.get("/teacher?lang=zh").text
    assert f"3 人中有 2 人：{catalogue.get('no_scale').title['zh']}" in zh


@pytest.mark.usefixtures("db_env")
def test_a_link_opened_on_many_devices_at_once_starts_one_session(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from attnlab.progress.store import ProgressStore

    _, _, links = make_class(tmp_path, ["Ada"])
    token = links[0].rsplit("/", 1)[1]

    def open_link(_: int) -> tuple[str, str] | None:
        with ProgressStore.open(tmp_path) as store:  # a connection of its own, as a worker's
            return store.join(token)

    with ThreadPoolExecutor(8) as pool:
        started = [s for s in pool.map(open_link, range(8)) if s is not None]
    assert len(started) == 1 and started[0][1] == "c1-1"


@pytest.mark.usefixtures("db_env")
def test_a_teacher_sees_their_own_class_only(web_client_factory: Any, tmp_path: Path) -> None:
    from attnlab.progress.store import ProgressStore

    make_class(tmp_path, ["Ada"])
    with ProgressStore.open(tmp_path) as store:
        other = store.create_class("group B")
        store.invite(other.id, ["Zoe"])
    teacher = web_client_factory(tmp_path)
    assert post_form(teacher, "/teacher", key=other.teacher_key).status_code == 303
    page = teacher.get("/teacher?lang=en").text
    assert "Zoe" in page and "Ada" not in page and "group B" in page


@pytest.mark.usefixtures("db_env")
def test_a_teacher_signs_out_and_the_old_cookie_opens_nothing(
    web_client_factory: Any, tmp_path: Path
) -> None:
    _, key, _ = make_class(tmp_path, ["Ada"])
    teacher = web_client_factory(tmp_path)
    assert post_form(teacher, "/teacher?lang=en", key=key).status_code == 303
    page = teacher.get("/teacher?lang=en")
    assert page.status_code == 200 and 'action="/teacher/leave' in page.text
    old = teacher.cookies["attnlab_teacher"]
    r = post_form(teacher, "/teacher/leave?lang=en")
    assert r.status_code == 303 and r.headers["location"] == "/teacher?lang=en"
    assert "attnlab_teacher" not in teacher.cookies
    assert teacher.get("/teacher?lang=en").status_code == 403
    teacher.cookies.set("attnlab_teacher", old)  # a copy kept elsewhere is no key either
    r = teacher.get("/teacher?lang=en")
    assert r.status_code == 403 and "Ada" not in r.text
    # Signing out without a session changes nothing and still lands on the key form.
    teacher.cookies.clear()
    teacher.get("/healthz")
    assert post_form(teacher, "/teacher/leave?lang=en").status_code == 303
    assert post_form(teacher, "/teacher/leave", origin="http://evil.example").status_code == 403


def test_report_shows_practice_with_fresh_numbers(web_client_factory: Any, tmp_path: Path) -> None:
    """Practice answers are counted apart from the lesson's exercises: per section, who
    practised, who mastered it (3 right in a row), and the catalogued mistakes ranked."""
    from test_practice import _right, _stages, _typed

    from attnlab.grading import practice

    def no_scale(section: int, seed: int) -> str:
        doc = practice.document(practice.deal(section, seed), "en")
        stage, row = doc["ask"]["stage"], doc["ask"]["row"]
        return _typed(_stages(doc["input"], scale=False)[stage][row])

    sid = next(s for s in practice.SECTIONS if no_scale(s, 1) != _right(s, 1))
    _, key, links = make_class(tmp_path, ["Ada", "Bo"])
    ada, bo = (joined(web_client_factory, tmp_path, link) for link in links)
    url = f"/practice/{sid}/answer?lang=en"
    assert post_form(ada, url, seed="1", answer=no_scale(sid, 1)).status_code == 303
    for seed in (1, 2, 3):
        assert post_form(bo, url, seed=str(seed), answer=_right(sid, seed)).status_code == 303

    teacher = web_client_factory(tmp_path)
    post_form(teacher, "/teacher", key=key)
    page = teacher.get("/teacher?lang=en").text
    block = page.split(f'id="practice-{sid}"')[1].split("</section>")[0]
    assert "2 practised, 1 mastered (3 right in a row)" in block
    assert f"1 of 2: {catalogue.get('no_scale').title['en']}" in block
    bo_row = page.split('data-profile="c1-2"')[1].split("</tr>")[0]
    assert f"Practice mastered: §{sid}" in bo_row
    assert "Practice mastered" not in page.split('data-profile="c1-1"')[1].split("</tr>")[0]
    zh = teacher.get("/teacher?lang=zh").text
    assert "2 人练习，1 人已掌握" in zh
    from attnlab.grading import class_report
    from attnlab.progress.store import ProgressStore

    with ProgressStore.open(tmp_path) as store:
        report = class_report.build(store.class_data(1))
    lines = class_report.text(report, "en")
    assert f"  {sid}: 2 practised, 1 mastered" in lines
    assert f"practice-{sid},1,practice," in class_report.as_csv(report)  # Bo: mastered
    assert class_report.as_json(report)["practice"][str(sid)]["mastered"] == 1


@pytest.mark.usefixtures("db_env")
def test_a_learner_signs_out_and_a_new_link_or_the_teacher_ends_sessions(
    web_client_factory: Any, tmp_path: Path
) -> None:
    """Sign-out ends the session in the store (the old cookie, copied, opens nothing); a new
    link for the learner ends the sessions of the old one; so does `attnlab class sign-out`."""
    from attnlab.progress.store import ProgressStore

    cid, _, links = make_class(tmp_path, ["Ada"])
    opts = {"class_only": True}
    phone = joined(web_client_factory, tmp_path, links[0], **opts)
    cookie = phone.cookies["attnlab_learner"]
    assert phone.get("/lesson?lang=en").status_code == 200
    assert "Sign out" in phone.get("/lesson?lang=en").text
    r = post_form(phone, "/leave?lang=en")
    assert r.status_code == 303 and "attnlab_learner" not in phone.cookies
    assert "Signed out" in phone.get(r.headers["location"]).text
    copied = web_client_factory(tmp_path, **opts)
    copied.cookies.set("attnlab_learner", cookie)
    assert copied.get("/lesson?lang=en").status_code == 403, "the ended session opens nothing"

    with ProgressStore.open(tmp_path) as store:
        [again] = store.invite(cid, ["Ada"])
    laptop = joined(web_client_factory, tmp_path, f"/join/{again.token}", **opts)
    with ProgressStore.open(tmp_path) as store:
        [newest] = store.invite(cid, ["Ada"])
    assert laptop.get("/lesson?lang=en").status_code == 403, "a new link ends the old sessions"
    tablet = joined(web_client_factory, tmp_path, f"/join/{newest.token}", **opts)
    with ProgressStore.open(tmp_path) as store:
        assert store.sign_out(cid, "Ada") == 1
    assert tablet.get("/lesson?lang=en").status_code == 403, "the teacher ended it"


def test_a_learner_session_lasts_its_stated_time(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    from attnlab.progress.sessions import LEARNER_SESSION
    from attnlab.progress.store import ProgressStore

    now = [datetime(2026, 12, 2, 9, tzinfo=UTC)]
    clock = lambda: now[0].isoformat(timespec="microseconds")  # noqa: E731
    with ProgressStore(tmp_path / "progress.sqlite3", clock=clock) as store:
        made = store.create_class("week 7")
        [link] = store.invite(made.id, ["Ada"])
        joined_as = store.join(link.token)
        assert joined_as is not None
        session = joined_as[0]
        now[0] += LEARNER_SESSION - timedelta(seconds=1)
        assert store.learner_of(session) == "c1-1"
        now[0] += timedelta(seconds=1)
        assert store.learner_of(session) is None
