"""Property tests: no request makes the web lesson crash. Random form, JSON and raw bodies go to
every POST route, random query strings and path values to every GET route; the routes are
enumerated from ``app.routes``, so a new route is covered without editing this file. A route that
raises fails the test (the shared client re-raises); a 5xx or a traceback in the body fails it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiers import examples
from web_support import CSRF_HEADER, ORIGIN, csrf_token, fetch_headers

from attnlab.content import knowledge
from attnlab.inputs.explorer import STATE_FIELDS
from attnlab.web.app import create_app
from attnlab.web.explorer import LIMITS, MATRICES
from attnlab.web.security import CSRF_FIELD


def app_routes(app: FastAPI) -> Iterator[tuple[str, str, Any]]:
    """``(method, path template, route)`` of every endpoint (static files aside)."""
    try:  # newer FastAPI nests included routers (this flattens them); older lists them all
        from fastapi.routing import iter_route_contexts

        contexts: Any = iter_route_contexts(app.routes)
    except ImportError:
        contexts = app.routes
    for ctx in contexts:
        for method in sorted(getattr(ctx, "methods", None) or ()):
            if method != "HEAD":
                yield method, ctx.path, getattr(ctx, "original_route", ctx)


ROUTES = list(app_routes(create_app(figures_on=False)))
POSTS = sorted({p for m, p, _ in ROUTES if m == "POST"})
GETS = sorted({p for m, p, _ in ROUTES if m == "GET"})
ENDPOINTS = {(m, p): r for m, p, r in ROUTES}


def test_every_route_is_enumerated() -> None:
    """The property tests below cover what this finds; it must find the app's routes."""
    assert {"/section/{section_id}/answer", "/exercise/{exercise_id}", "/api/explorer"} <= set(
        POSTS
    )
    assert {"/lesson", "/section/{section_id}", "/explorer", "/api/progress"} <= set(GETS)


# --- property tests: random bodies, queries and path values on every route -------------------

# Finite text that is hard on parsers: huge and tiny numbers, digits that are not ASCII, NUL.
AWKWARD = (
    "1e999", "-1e999", "1e308", "1e-400", "nan", "-inf", "0x1p3", "1_000", "²", "١٢", "",
    " ", "\x00", "9" * 5000, "-" + "9" * 400, "1e154", "[1e999, 1]", "{}", "../../etc",
)  # fmt: skip
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)  # Cs: httpx can't send
#: JSON text may hold lone surrogates: ``json.dumps`` writes them as the escape ``\ud800``.
JSON_TEXT = st.one_of(TEXT, st.text(st.characters(), max_size=12), st.just("a\ud800"))
#: Bytes a URL or a form can carry that are not UTF-8 text: a surrogate's UTF-8 form
#: (``%ED%A0%80``), a byte no UTF-8 text holds (``%FF``), a truncated sequence, NUL.
RAW_BYTES = ("%ED%A0%80", "%FF", "%E4%BD", "%00")
NUMBERISH = st.one_of(
    st.sampled_from(AWKWARD),
    st.text(st.characters(whitelist_categories=("Nd", "No")), min_size=1, max_size=4),  # "²"
    st.integers().map(str),
    st.floats().map(repr),
    st.from_regex(r"-?\d{1,30}(\.\d{0,5})?([eE][+-]?\d{1,4})?", fullmatch=True),
)
VALUE = st.one_of(TEXT, NUMBERISH)
FIELDS = (
    CSRF_FIELD, "answer", "status", "back", "T", "C", "d", "lang", "preset",
    "x[0][0][0]", "x[1][2][1]", "w_q[0][0]", "w_k[1][1]", "w_v[2][0]",
)  # fmt: skip


def declared_fields(route: Any, kind: str = "body_params") -> list[str]:
    """The form (or query) fields a route declares (FastAPI's ``dependant``)."""
    params = getattr(getattr(route, "dependant", None), kind, None) or []
    return sorted({p.alias for p in params})


NAMES = sorted(set(FIELDS).union(*(declared_fields(r) for _, _, r in ROUTES)))
KEY = st.one_of(st.sampled_from(NAMES), TEXT)
QUERY = st.one_of(
    st.dictionaries(KEY, VALUE, max_size=4),
    st.dictionaries(st.sampled_from(NAMES), NUMBERISH, max_size=3),
)


@st.composite
def explorer_form(draw: st.DrawFn) -> dict[str, str]:
    """A form the explorer reads past its size check: T, C, d and (some of) every cell."""
    T, C, d = (draw(st.integers(1, 3)) for _ in range(3))
    form = {"T": str(T), "C": str(C), "d": str(d)}
    cells = [f"x[{b}][{t}][{c}]" for b in range(LIMITS["B"]) for t in range(T) for c in range(C)]
    cells += [f"{m}[{i}][{j}]" for m in MATRICES[1:] for i in range(C) for j in range(d)]
    return form | {cell: draw(st.one_of(st.just("0.5"), NUMBERISH)) for cell in cells}


def form_for(route: Any) -> st.SearchStrategy[dict[str, str]]:
    """Random fields; or every field the route declares, each with a random value; or an
    explorer form; each with random extra fields."""
    declared = st.fixed_dictionaries({name: VALUE for name in declared_fields(route)})
    base = st.one_of(declared, st.just({}), explorer_form())
    extra = st.dictionaries(KEY, VALUE, max_size=6)
    return st.tuples(base, extra).map(lambda p: p[1] | p[0])


NUMBER = st.one_of(
    st.floats(), st.integers(), st.sampled_from([1e300, -1e300, 1e154, 10**400, 2**63])
)
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | NUMBER | JSON_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEY, inner, max_size=4),
    max_leaves=20,
)


@st.composite
def explorer_json(draw: st.DrawFn) -> dict[str, Any]:
    """Well-shaped explorer input whose numbers are random (huge, tiny, NaN, huge ints)."""
    T, C, d = (draw(st.integers(1, 3)) for _ in range(3))

    def grid(*shape: int) -> Any:
        if not shape:
            return draw(NUMBER)
        return [grid(*shape[1:]) for _ in range(shape[0])]

    return {"x": grid(LIMITS["B"], T, C)} | {m: grid(C, d) for m in MATRICES[1:]}


RAW_TYPES = [
    "application/json", "application/x-www-form-urlencoded", "text/plain",
    "multipart/form-data", "multipart/form-data; boundary=b", "application/json; charset=latin-1",
]  # fmt: skip
RAW = st.one_of(
    st.binary(max_size=60),
    st.lists(
        st.sampled_from(
            [
                b"--b\r\n",
                b'Content-Disposition: form-data; name="answer"',
                b"\r\n\r\n",
                b"1e999",
                b"--b--\r\n",
                b"csrf_token=",
                b"&",
                b"%ff",
            ]
        ),
        max_size=8,
    ).map(b"".join),  # pieces of multipart and urlencoded bodies
    st.integers(1, 3000).map(lambda n: b"[" * n + b"]" * n),  # nesting
    st.just(b'{"x": ' + b"9" * 5000 + b"}"),  # an integer too long for int()
)


def body_for(route: Any) -> st.SearchStrategy[tuple[str, Any]]:
    """``(kind, body)``: a form, a JSON value, or raw bytes sent as ``kind``."""
    return st.one_of(
        st.tuples(st.just("form"), form_for(route)),
        st.tuples(st.just("json"), st.one_of(JSON_VALUE, explorer_json())),
        st.tuples(st.sampled_from(RAW_TYPES), RAW),
    )


REAL_IDS = {"section_id": [str(i) for i in range(20)], "exercise_id": knowledge.exercise_ids()}


#: Query parameters the routes read from ``request.query_params`` (FastAPI does not list them).
READ_QUERY = ("lang", "q", "preset", "T", "C", "d", "n_head", "state")
#: Percent-encoded text: random text, or pieces of :data:`RAW_BYTES` among ordinary characters.
ENCODED = st.one_of(
    st.one_of(NUMBERISH, TEXT).map(lambda v: quote(v, safe="")),
    st.lists(st.sampled_from([*RAW_BYTES, "a", "1", "%E7%8C%AB"]), min_size=1, max_size=4).map(
        "".join
    ),
)
#: The explorer's ``state``: the fields it reads, with random values (lone surrogates too).
STATE = st.fixed_dictionaries(
    {"preset": st.one_of(st.sampled_from(["lesson", "uniform"]), JSON_TEXT)},
    optional={"n_head": st.sampled_from([1, 2]), "C": st.integers(1, 8)}
    | {k: JSON_VALUE for k in STATE_FIELDS if k != "preset"},
)


def path_value(name: str) -> st.SearchStrategy[str]:
    """Values for a path parameter, percent-encoded: real ids (often), huge or negative
    numbers, any text, bytes that are not UTF-8."""
    real = st.sampled_from(REAL_IDS.get(name) or [v for ids in REAL_IDS.values() for v in ids])
    return st.one_of(real, real, ENCODED)


@st.composite
def url_for(draw: st.DrawFn, template: str) -> str:
    """``template`` with random path values and a random query: random fields, known fields
    holding bytes that are not UTF-8, and sometimes an explorer ``state``."""
    path = template
    while "{" in path:
        start, end = path.index("{"), path.index("}")
        path = path[:start] + draw(path_value(path[start + 1 : end])) + path[end + 1 :]
    pairs = [(quote(k), quote(v)) for k, v in draw(QUERY).items()]
    names = st.sampled_from(sorted({*NAMES, *READ_QUERY}))
    pairs += draw(st.lists(st.tuples(names, ENCODED), max_size=2))
    if draw(st.booleans()):
        pairs.append(("state", quote(json.dumps(draw(STATE)), safe="")))
    return path + "?" + "&".join(f"{k}={v}" for k, v in pairs)


def send(method: str, url: str, **kwargs: Any) -> Callable[[TestClient], Any]:
    """A request of a known crash, with the session token and same-origin header."""

    def go(client: TestClient) -> Any:
        headers = fetch_headers(client, kwargs.get("headers"))
        rest = {k: v for k, v in kwargs.items() if k != "headers"}
        return client.request(method, url, headers=headers, follow_redirects=False, **rest)

    return go


def cells(value: str, T: int = 2, C: int = 2, d: int = 2) -> dict[str, str]:
    form = {"T": str(T), "C": str(C), "d": str(d)}
    names = [f"x[{b}][{t}][{c}]" for b in range(LIMITS["B"]) for t in range(T) for c in range(C)]
    names += [f"{m}[{i}][{j}]" for m in MATRICES[1:] for i in range(C) for j in range(d)]
    return form | dict.fromkeys(names, value)


HUGE = {"x": [[[1e300] * 4] * 2] * 2} | {m: [[1e300] * 2] * 4 for m in MATRICES[1:]}
JSON_TYPE = {"Content-Type": "application/json"}

# Requests that crashed a route before issue 11 (exercise answers that overflow a float, explorer
# input that overflows or chokes the parser): (method, route, exception then, the request).
ONCE_CRASHED: list[tuple[str, str, type[BaseException], Callable[[TestClient], Any]]] = [
    ("POST", "/exercise/{exercise_id}", OverflowError,
     send("POST", "/exercise/4c", data={"answer": "1e999"})),
    ("POST", "/api/explorer", OverflowError,
     send("POST", "/api/explorer", json=HUGE | {"w_q": [[10**400] * 2] * 4})),
    ("POST", "/api/explorer", ValueError, send("POST", "/api/explorer", json=HUGE)),
    ("POST", "/api/explorer", ValueError,
     send("POST", "/api/explorer", content=b'{"x": ' + b"9" * 5000 + b"}", headers=JSON_TYPE)),
    ("POST", "/api/explorer", RecursionError,
     send("POST", "/api/explorer", content=b"[" * 5000 + b"]" * 5000, headers=JSON_TYPE)),
    ("POST", "/explorer", ValueError, send("POST", "/explorer", data=cells("1e300"))),
    ("GET", "/explorer", ValueError, send("GET", "/explorer?T=²")),
    ("GET", "/explorer", ValueError, send("GET", "/explorer?C=" + "9" * 5000)),
]  # fmt: skip


@pytest.fixture(scope="module")
def fuzz_client(
    tmp_path_factory: pytest.TempPathFactory, web_client_factory
) -> Iterator[TestClient]:
    # Re-raises what escapes; one event loop serves all its requests (as uvicorn's does), not a
    # new one per request.
    with web_client_factory(tmp_path_factory.mktemp("fuzz")) as client:
        yield client


def check(
    client: TestClient, method: str, route: str, url: str, token_header: bool = True, **kwargs: Any
) -> None:
    """Send the request (same origin; the session token in its header unless ``token_header`` is
    false) and fail on a 5xx or a traceback; a known issue-11 crash is let through."""
    headers = {"Origin": ORIGIN} | kwargs.pop("headers", {})
    if token_header:
        headers[CSRF_HEADER] = csrf_token(client)
    r = client.request(method, url, headers=headers, follow_redirects=False, **kwargs)
    assert_answered(r, f"{method} {url[:200]}", fragment=route in FRAGMENTS)


#: What every HTML page of the site has, error pages included: the top bar (brand, navigation,
#: search box), the page's content and the footer.
LAYOUT = (
    '<header class="top">',
    'id="search-box"',
    '<main class="content',
    '<footer class="foot">',
)
#: Routes whose answer is a piece of a page (the page's script swaps it in), not a page.
FRAGMENTS = {"/section/{section_id}/check"}


def assert_answered(r: Any, what: str, fragment: bool = False) -> None:
    """No 5xx and no traceback; an HTML answer is a page of the site's layout (:data:`LAYOUT`),
    unless it is a ``fragment`` route's 2xx; a refusal of an ``/api/`` route is
    ``{"error": ...}``, a redirect says where to."""
    assert r.status_code < 500, f"{what} -> {r.status_code}: {r.text[:300]}"
    assert "Traceback (most recent call last)" not in r.text and 'File "' not in r.text
    kind = r.headers.get("content-type", "")
    if 300 <= r.status_code < 400:
        assert r.headers.get("location"), f"{what} -> {r.status_code} without a Location"
    elif kind.startswith("text/html") and not (fragment and r.status_code < 300):
        missing = [part for part in LAYOUT if part not in r.text]
        assert not missing, f"{what} -> {r.status_code} lacks {missing}: {r.text[:300]}"
    elif r.status_code >= 400:
        assert kind.startswith("application/json") and "error" in r.json(), (what, r.text[:300])


FUZZ = settings(
    max_examples=examples(50),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@pytest.mark.parametrize(
    ("route", "go"),
    [
        pytest.param(route, go, id=f"{method} {route} once {exc.__name__} {i}")
        for i, (method, route, exc, go) in enumerate(ONCE_CRASHED)
    ],
)
def test_requests_that_once_crashed_now_answer(
    fuzz_client: TestClient, route: str, go: Callable[[TestClient], Any]
) -> None:
    r = go(fuzz_client)
    # An unreadable exercise answer is kept, ungraded, with its reason shown on the section.
    low = 300 if route == "/exercise/{exercise_id}" else 400
    assert low <= r.status_code < low + 100, (r.status_code, r.text[:300])
    assert "Traceback (most recent call last)" not in r.text


@pytest.mark.parametrize("route", POSTS)
@FUZZ
@given(data=st.data())
def test_no_post_body_makes_a_route_crash(fuzz_client: TestClient, route: str, data) -> None:
    url = data.draw(url_for(route), label="url")
    kind, body = data.draw(body_for(ENDPOINTS["POST", route]), label="body")
    # A browser's form sends the token as a field, scripts in the header: try both paths.
    in_header = data.draw(st.booleans(), label="token in header")
    if kind == "form":
        if not in_header:
            body = {CSRF_FIELD: csrf_token(fuzz_client)} | body
        check(fuzz_client, "POST", route, url, in_header, data=body)
    elif kind == "json":
        check(
            fuzz_client,
            "POST",
            route,
            url,
            in_header,
            content=json.dumps(body),
            headers={"Content-Type": "application/json"},
        )
    else:
        check(
            fuzz_client, "POST", route, url, in_header, content=body, headers={"Content-Type": kind}
        )


@pytest.mark.parametrize("route", GETS)
@FUZZ
@given(data=st.data())
def test_no_query_or_path_value_makes_a_page_crash(fuzz_client: TestClient, route: str, data):
    check(fuzz_client, "GET", route, data.draw(url_for(route), label="url"))


@FUZZ
@given(
    prefix=st.sampled_from(["/", "/static/", "/api/", "/section/", "/exercise/"]),
    segments=st.lists(st.one_of(TEXT, NUMBERISH), max_size=3),
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]),
)
def test_no_path_or_method_makes_a_crash(fuzz_client, prefix: str, segments, method: str):
    """Paths no route has (static files too) and methods no route takes: 404/405, not 500."""
    url = prefix + "/".join(quote(s, safe="") for s in segments)
    check(fuzz_client, method, "", url)
