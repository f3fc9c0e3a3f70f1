"""Every text field of every form and every query parameter of every page, sent what a URL or a
form body can carry that is not text: NUL, a surrogate's UTF-8 bytes (``%ED%A0%80``), a byte no
UTF-8 text holds (``%FF``), a cut sequence, and JSON's ``"\\ud800"`` in the explorer's state.
The forms are read from the pages themselves, so a new field is covered without editing this
file. Every answer must be a page of the site's layout (or ``{"error": ...}`` for ``/api/``),
never a 5xx (:func:`test_web_fuzz.assert_answered`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from fastapi.testclient import TestClient
from test_web_fuzz import (
    ENDPOINTS,
    FRAGMENTS,
    GETS,
    RAW_BYTES,
    READ_QUERY,
    assert_answered,
    declared_fields,
)
from web_support import ORIGIN, post_form

from attnlab.inputs.explorer import STATE_FIELDS
from attnlab.web.security import CSRF_FIELD

#: A real value for each path parameter, so the request reaches the route's own code.
REAL_PATH = {
    "section_id": "3",
    "exercise_id": "4c",
    "lang": "en",
    "name": "weights",
    "digest": "0" * 16,
    "token": "t" * 43,  # an invitation link's token (unknown here: refused by the route itself)
}
#: Pages whose forms are filled in (an answer and a note are saved first, so the forms that
#: act on them are there too).
PAGES = ("/lesson", "/section/4", "/explorer", "/explorer?n_head=2", "/notes", "/search")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, web_client_factory) -> Iterator[TestClient]:
    # Re-raises what escapes; one event loop serves all its requests (as uvicorn's does), not a
    # new one per request.
    with web_client_factory(tmp_path_factory.mktemp("fuzz-text")) as client:
        yield client


def query_names(route: Any) -> list[str]:
    """The query parameters a GET route reads or declares."""
    return sorted(set(READ_QUERY).union(declared_fields(route, "query_params")))


def real_url(template: str) -> str:
    """``template`` with each ``{param}`` filled from :data:`REAL_PATH`."""
    for name, value in REAL_PATH.items():
        template = template.replace("{" + name + "}", value)
    assert "{" not in template, f"no real value for a path parameter of {template}"
    return template


def state_with(value: str) -> list[str]:
    """``state`` values holding ``value`` in each field the explorer reads, as JSON text."""
    nested = {"tokens": [[value, "b"], ["c", "d"]], "x": [[[value]]], "preset": value}
    return [
        json.dumps({"preset": "lesson", "n_head": 1, "C": 4, key: nested.get(key, [[value]])})
        for key in STATE_FIELDS
    ]


GET_PARAMS = [(route, name) for route in GETS for name in query_names(ENDPOINTS["GET", route])]


@pytest.mark.parametrize(("route", "name"), GET_PARAMS)
def test_any_query_parameter_takes_bytes_that_are_not_text(client, route: str, name: str) -> None:
    """NUL reached SQLite's FTS5 through /search?q= and was reported as a broken database
    (503), and ``state`` with JSON's ``"\\ud800"`` was a 500: in any parameter of any page,
    such input is refused in one line or read as the characters it decodes to."""
    values = [*RAW_BYTES, "mask%00", "%00%00mask", "a%ED%A0%80b"]
    if name == "state":
        values += [quote(state, safe="") for state in state_with("a\ud800")]
    for raw in values:
        url = f"{real_url(route)}?{name}={raw}" + ("" if name == "lang" else "&lang=en")
        r = client.get(url, follow_redirects=False)
        assert_answered(r, f"GET {url}", fragment=route in FRAGMENTS)
        assert "cannot be used" not in r.text and "无法使用" not in r.text, r.text[:300]


@dataclass
class Form:
    """One form of a page: its method, where it goes, and its fields with the page's values."""

    method: str
    action: str
    fields: dict[str, str] = field(default_factory=dict)

    def shape(self) -> tuple[str, str, tuple[tuple[str, bool], ...]]:
        """Forms that differ only by the section or exercise they act on are one shape (a note's
        form that edits a saved note, its ``note_id`` filled in, is another)."""
        path = re.sub(r"\d+[a-z]?(?=/|$)", "N", urlsplit(self.action).path)
        return self.method, path, tuple(sorted((k, bool(v)) for k, v in self.fields.items()))


class Forms(HTMLParser):
    """The forms of an HTML page; a field's value is a text box's ``value``, a textarea's
    text, a select's chosen (else first) option, a checked radio button's value."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []
        self._textarea: str | None = None
        self._select: str | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append(Form(a.get("method", "get").upper(), a.get("action", "")))
        elif tag == "option" and self._select and self.forms:
            if "selected" in a or self._select not in self.forms[-1].fields:
                self.forms[-1].fields[self._select] = a.get("value", "")
        elif not self.forms or "name" not in a:
            return
        elif tag == "input" and a.get("type") not in ("radio", "checkbox", "submit"):
            self.forms[-1].fields[a["name"]] = a.get("value", "")
        elif tag == "input" and a.get("type") != "submit" and "checked" in a:
            self.forms[-1].fields[a["name"]] = a.get("value", "on")
        elif tag == "textarea":
            self._textarea = a["name"]
            self.forms[-1].fields[a["name"]] = ""
        elif tag == "select":
            self._select = a["name"]
        elif tag == "button":
            self.forms[-1].fields.setdefault(a["name"], a.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.forms[-1].fields[self._textarea] += data

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)


@pytest.fixture(scope="module")
def forms(client: TestClient) -> list[Form]:
    """One form of each shape on :data:`PAGES`, in both languages' pages alike."""
    post_form(client, "/section/4/answer?lang=en", answer="0.5", follow_redirects=True)
    post_form(client, "/section/4/note?lang=en", note_id="", text="n", follow_redirects=True)
    found: dict[Any, Form] = {}
    for page in PAGES:
        r = client.get(page + ("&" if "?" in page else "?") + "lang=en")
        assert r.status_code == 200, (page, r.text[:300])
        for form in Forms(r.text).forms:
            found.setdefault(form.shape(), form)
    return list(found.values())


def test_the_pages_hold_the_forms_this_file_fills_in(forms: list[Form]) -> None:
    """The scraper can fail: the forms it must find are the lesson's and the explorer's."""
    actions = {f.shape()[1] for f in forms}
    for path in ("/section/N/answer", "/section/N/note", "/exercise/N", "/explorer", "/search"):
        assert path in actions, sorted(actions)
    explorer = next(f for f in forms if f.method == "POST" and f.action.startswith("/explorer"))
    assert {"T", "x[0][0][0]", "w_q[0][0]", "tok[0][0]", CSRF_FIELD} <= set(explorer.fields)
    note = next(f for f in forms if "/note" in f.action)
    assert "text" in note.fields and note.fields[CSRF_FIELD]


def _send(client: TestClient, form: Form, name: str, raw: bytes, multipart: bool) -> Any:
    """``form`` as the page fills it, with field ``name`` holding the bytes ``raw``."""
    headers = {"Origin": ORIGIN}
    if form.method == "GET":
        rest = [f"{quote(k)}={quote(v)}" for k, v in form.fields.items() if k != name]
        query = "&".join([*rest, f"{quote(name)}={quote(raw, safe='%')}"])
        return client.get(f"{form.action}?{query}", headers=headers)
    if multipart:
        parts = [(k, v.encode()) for k, v in form.fields.items() if k != name] + [(name, raw)]
        body = b"".join(
            b"--b\r\nContent-Disposition: form-data; name=\"" + k.encode() + b'"\r\n\r\n' + v
            + b"\r\n" for k, v in parts
        ) + b"--b--\r\n"  # fmt: skip
        headers["Content-Type"] = "multipart/form-data; boundary=b"
    else:
        rest = [f"{quote(k)}={quote(v)}" for k, v in form.fields.items() if k != name]
        body = "&".join([*rest, f"{quote(name)}={raw.decode('latin-1')}"]).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    return client.post(form.action, content=body, headers=headers)


def _one_per_family(fields: dict[str, str]) -> list[str]:
    """The first field of each family: ``x[0][0][0]`` stands for every ``x[b][t][c]`` (one
    validator reads them all, cell by cell); a field of its own is its own family."""
    first: dict[str, str] = {}
    for name in fields:
        first.setdefault(re.sub(r"\[\d+\]", "[N]", name), name)
    return list(first.values())


def test_every_text_field_of_every_form_takes_bytes_that_are_not_text(client, forms) -> None:
    """Each field of each form, the others as the page fills them: percent-encoded (as a
    browser sends a form) and as raw bytes in a multipart body. Redirects are followed, so the
    page showing what was saved must render it too."""
    failures = []
    for form in forms:
        for name in _one_per_family(form.fields):
            for raw in RAW_BYTES:
                for multipart in (False, True):
                    value = bytes.fromhex(raw.replace("%", "")) if multipart else raw.encode()
                    if multipart and form.method == "GET":
                        continue
                    r = _send(client, form, name, value, multipart)
                    try:
                        assert_answered(r, f"{form.method} {form.action} {name}={raw}")
                    except AssertionError as exc:
                        failures.append(str(exc).splitlines()[0])
    assert not failures, "\n".join(failures[:20])


def test_the_query_of_every_form_action_takes_bytes_that_are_not_text(client, forms) -> None:
    """A form's action carries ``?lang=``: the same bytes there, the form as the page fills it
    (a POST's query reaches the progress file as a GET's does)."""
    headers = {"Origin": ORIGIN}
    for form in (f for f in forms if f.method == "POST"):
        path = urlsplit(form.action).path
        for raw in [*RAW_BYTES, "en%00"]:
            url = f"{path}?lang={raw}"
            r = client.post(url, data=form.fields, headers=headers)
            assert_answered(r, f"POST {url}")
            assert "cannot be used" not in r.text and "无法使用" not in r.text, r.text[:300]
