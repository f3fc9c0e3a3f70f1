"""Sections rendered once per learner state (``web/fragments.py``) read exactly as sections
rendered afresh: for any sequence of the learner's writes, ``/lesson`` and ``/section/N`` in
both languages are the same HTML with the cache as without it, and no page carries another
session's CSRF token."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiers import examples
from web_support import ORIGIN, csrf_token, post_form

from attnlab.content import knowledge
from attnlab.core.example import SECTION_COUNT
from attnlab.web.app import create_app
from attnlab.web.fragments import CSRF_SLOT, CTX_FIELDS, SectionCache

TEMPLATES = Path(__file__).parents[1] / "src" / "attnlab" / "web" / "templates"
#: A new-note box gets a fresh random id on every response: compared as one placeholder.
NEW_NOTE_ID = re.compile(r'name="note_id" value="[0-9a-f-]{36}"')
SIDS = st.integers(0, SECTION_COUNT - 1)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)
EXERCISES = [e.id for s in range(SECTION_COUNT) for e in knowledge.section(s).exercises]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app = create_app(data_dir=tmp_path_factory.mktemp("fragments"))
    with TestClient(app, base_url=ORIGIN) as c:
        c.get("/healthz")
        yield c


@contextmanager
def afresh(client: TestClient) -> Iterator[None]:
    """Every section rendered afresh while inside (a cache of size 0)."""
    env = client.app.state.templates  # type: ignore[attr-defined]
    cached = env.globals["section_html"]
    env.globals["section_html"] = SectionCache(
        env.get_template("_section.html").module.render_section, size=0
    )
    try:
        yield
    finally:
        env.globals["section_html"] = cached


def _page(client: TestClient, url: str) -> str:
    r = client.get(url)
    assert r.status_code == 200, (url, r.status_code)
    return NEW_NOTE_ID.sub('name="note_id" value="NEW"', r.text)


def _write(client: TestClient, action: tuple[str, int, str]) -> None:
    kind, sid, text = action
    if kind == "complete":
        r = post_form(client, f"/section/{sid}/complete")
    elif kind == "answer":
        r = post_form(client, f"/section/{sid}/answer", answer=text or "x")
    elif kind == "assess":
        r = post_form(client, f"/section/{sid}/assess", status=("understood", "review")[sid % 2])
    elif kind == "note":
        r = post_form(client, f"/section/{sid}/note", note_id=str(uuid.uuid4()), text=text)
    elif kind == "bookmark":
        r = post_form(client, f"/section/{sid}/bookmark")
    else:
        eid = EXERCISES[sid % len(EXERCISES)]
        r = post_form(client, f"/exercise/{eid}", answer=text or "0.39")
    assert r.status_code in (303, 422), (action, r.status_code)


ACTIONS = st.tuples(
    st.sampled_from(["complete", "answer", "assess", "note", "bookmark", "exercise"]), SIDS, TEXT
)


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(actions=st.lists(ACTIONS, min_size=1, max_size=6), shown=SIDS)
def test_a_cached_section_reads_as_one_rendered_afresh(
    client: TestClient, actions: list[tuple[str, int, str]], shown: int
) -> None:
    for action in actions:
        _write(client, action)
        for url in ("/lesson", f"/section/{action[1]}", f"/section/{shown}"):
            for lang in ("zh", "en"):
                cached = _page(client, f"{url}?lang={lang}")
                with afresh(client):
                    assert _page(client, f"{url}?lang={lang}") == cached, (url, lang, action)


def test_each_session_gets_its_own_token(tmp_path: Path) -> None:
    app = create_app(data_dir=tmp_path)
    with TestClient(app, base_url=ORIGIN) as a, TestClient(app, base_url=ORIGIN) as b:
        a.get("/healthz"), b.get("/healthz")
        assert csrf_token(a) != csrf_token(b)
        for _ in range(2):  # the second time from the cache
            page_a, page_b = a.get("/lesson").text, b.get("/lesson").text
            assert csrf_token(a) in page_a and csrf_token(b) not in page_a
            assert csrf_token(b) in page_b and csrf_token(a) not in page_b
            assert CSRF_SLOT not in page_a + page_b
        # A token is never taken from an earlier state: a write changes the section at once.
        post_form(a, "/section/4/complete")
        assert 'id="s-4"' in a.get("/lesson").text
        assert re.search(r'class="section is-done" id="s-4"', a.get("/lesson").text)


def test_every_ctx_field_the_section_templates_read_is_keyed() -> None:
    """A field added to the sections' ``ctx`` must be added to :func:`state_key` (and to
    ``CTX_FIELDS``), or a cached section would show another state."""
    read = set()
    for name in ("_section.html", "_check.html", "_notes.html", "_audit.html"):
        read |= set(re.findall(r"\bctx\.(\w+)", (TEMPLATES / name).read_text(encoding="utf-8")))
    passed = set()
    for name in ("lesson.html", "section.html"):
        found = re.search(r"\{% set ctx = \{(.*?)\} %\}", (TEMPLATES / name).read_text("utf-8"))
        assert found, name
        passed |= set(re.findall(r"'(\w+)':", found.group(1)))
    assert read <= CTX_FIELDS, read - CTX_FIELDS
    assert passed <= CTX_FIELDS, passed - CTX_FIELDS
