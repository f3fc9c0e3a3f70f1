"""A graded exercise answer posted on the web crosses few modules, and its verdict is the grader's.

The count comes from ``tools/post_path.py`` (the modules whose code runs while the second of two
identical answers is served). The verdicts are checked against the mistakes catalogue's own
diagnosis (:func:`attnlab.mistakes.diagnosis.diagnose`) and against the answer service, for
answers of every kind: right, each catalogued mistake, a rounding slip, unreadable.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from attnlab.grading import answers, keys
from attnlab.mistakes import diagnosis
from attnlab.progress.store import ProgressStore
from attnlab.text import fmt

#: 8 when the bar was set; the ninth is web.compression, the gzip middleware every request
#: passes through since pages are compressed by ISA-L (the answer's own path is unchanged).
MAX_MODULES = 9
TOOL = Path(__file__).resolve().parents[1] / "tools" / "post_path.py"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("post_path", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("post_path", module)
    spec.loader.exec_module(module)
    return module


def _answer(values: list[float], decimals: int) -> str:
    return " ".join(fmt.answer(v, decimals) for v in values)


def _mistake_answer() -> tuple[str, str]:
    """An answer to 4c that one catalogue mistake gives, and that mistake's name."""
    mistake, values = keys.exercise_key("4c").mistakes[0]
    return _answer(values, 3), mistake.name


@pytest.mark.parametrize(
    ("exercise", "text"),
    [
        pytest.param("4c", None, id="number-right"),
        pytest.param("4c", "mistake", id="number-a-named-mistake"),
        pytest.param("9d", None, id="shape-right"),
        pytest.param("9d", "2 1 2 3", id="shape-wrong"),
        pytest.param("1b", "0.5 0.5 0 0", id="other-wrong"),
    ],
)
def test_an_answer_crosses_at_most_nine_modules(exercise: str, text: str | None) -> None:
    key = keys.exercise_key(exercise)
    if text is None:
        text = _answer(key.expected, key.decimals)
    elif text == "mistake":
        text, _ = _mistake_answer()
    status, modules = _tool().post_path(exercise, text)
    assert status == 303
    assert modules and all(m.startswith("attnlab.") for m in modules)
    assert len(modules) <= MAX_MODULES, f"{len(modules)} modules: {modules}"


def test_the_count_sees_the_modules_that_run() -> None:
    """The tool finds the route, the answer service and the store (so a count of 0 is no pass)."""
    _, modules = _tool().post_path("4c", "0.39")
    for needed in ("attnlab.web.routes_progress", "attnlab.grading.answers",
                   "attnlab.progress.store"):  # fmt: skip
        assert needed in modules


def _cases() -> list[tuple[str, str]]:
    key = keys.exercise_key("4c")
    right = _answer(key.expected, 3)
    slip = _answer([v - 0.001 for v in key.expected], 3)  # 0.401 is 0.566 / 1.41 carried
    named = [(_answer(values, 3), m.name) for m, values in key.mistakes]
    return [(right, "right"), (slip, "last_digit"), ("abc", "unreadable"), *named]


@pytest.mark.parametrize(("text", "what"), _cases(), ids=lambda c: str(c)[:24])
def test_each_verdict_is_the_catalogues(text: str, what: str) -> None:
    key = keys.exercise_key("4c")
    done = answers.submit("4c", text)
    data = done.data()
    if what == "unreadable":
        assert data == {"kind": "unreadable"} and done.error is not None
        return
    if what == "right":
        assert data["kind"] == "right" and done.graded is True
        return
    if what == "last_digit":
        assert data["kind"] == "wrong" and "last_digit" in data["slips"]
        return
    at = key.at
    assert at is not None
    given = [float(v) for v in text.split()]
    tols = done.verdict.tolerance if done.verdict is not None else []
    reference = diagnosis.diagnose(at.stage, given, prompt=at.prompt, row=at.row, head=at.head,
                                   column=at.column, tol=tols)  # fmt: skip
    assert what in [m.name for m in reference]
    assert data["kind"] == "wrong" and what in data["mistakes"]
    if len(reference) == 1:
        assert data["mistakes"] == [what]


def test_the_web_stores_the_services_verdict(tmp_path: Path) -> None:
    """What the web saves for an answer is the answer service's verdict data."""
    from fastapi.testclient import TestClient

    from attnlab.web.app import create_app

    origin = "http://127.0.0.1"
    client = TestClient(create_app(data_dir=tmp_path, figures_on=False), base_url=origin)
    client.get("/healthz")
    token = client.cookies["attnlab_csrf"]
    texts = [text for text, _ in _cases()]
    for text in texts:
        form = {"answer": text, "csrf_token": token, "back": "section"}
        done = client.post("/exercise/4c", data=form, headers={"origin": origin},
                           follow_redirects=False)  # fmt: skip
        assert done.status_code == 303
    with ProgressStore.open(tmp_path) as store:
        saved = store.attempts("4c")
    assert [json.loads(a["diagnosis"]) for a in saved] == [
        answers.submit("4c", t).data() for t in texts
    ]
