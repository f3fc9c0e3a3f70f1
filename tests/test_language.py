"""Every message a learner can cause speaks the command's or the page's language: a table of bad
inputs, one per kind of message, each run in Chinese and in English. The Chinese line must hold
Chinese; the English one must hold none."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from web_support import post_form

from attnlab.cli.main import app
from attnlab.content import knowledge
from attnlab.text.fmt import answer

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")
LESSON = json.loads((ROOT / "examples/lesson.json").read_text(encoding="utf-8"))
LESSON_INPUT = {k: LESSON[k] for k in ("x", "w_q", "w_k", "w_v")}


def _file(tmp: Path, content: object, name: str = "in.json") -> str:
    path = tmp / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    return str(path)


def _with(**changes: Any) -> dict[str, Any]:
    return {**LESSON_INPUT, **changes}


def _cell(row: int, col: int, value: object) -> list[list[Any]]:
    w = [list(r) for r in LESSON_INPUT["w_q"]]
    w[row][col] = value
    return w


BIG = {"x": [[[0.5]] * 20_000], "w_q": [[1.0]], "w_k": [[1.0]], "w_v": [[1.0]]}  # T² scores

# name -> argv built in a temporary folder; every one must fail with one line and exit 2.
Case = Callable[[Path], list[str]]
CLI_CASES: dict[str, Case] = {
    # input files (--input)
    "input-string": lambda t: ["trace", "--input", _file(t, _with(w_q=_cell(0, 1, "a")))],
    "input-bool": lambda t: ["trace", "--input", _file(t, _with(w_q=_cell(0, 0, True)))],
    "input-missing-key": lambda t: ["trace", "--input", _file(t, {"x": LESSON_INPUT["x"]})],
    "input-ragged": lambda t: ["trace", "--input", _file(t, _with(x=[[[1, 0, 0, 0], [0, 1]]]))],
    "input-rows": lambda t: ["trace", "--input", _file(t, _with(w_k=[[1, 0]]))],
    "input-heads": lambda t: ["trace", "--input", _file(t, _with(num_heads=3))],
    "input-w_o-alone": lambda t: ["trace", "--input", _file(t, _with(w_o=[[1.0] * 4] * 4))],
    "input-tokens": lambda t: ["trace", "--input", _file(t, _with(tokens=[["a"]]))],
    "input-not-object": lambda t: ["trace", "--input", _file(t, [1, 2])],
    "input-no-file": lambda t: ["trace", "--input", str(t / "nope.json")],
    "input-directory": lambda t: ["trace", "--input", str(t)],
    "input-suffix": lambda t: ["trace", "--input", _file(t, "{}", "in.txt")],
    "input-not-json": lambda t: ["trace", "--input", _file(t, '{"x": [1,')],
    "input-not-toml": lambda t: ["trace", "--input", _file(t, "x = [1,", "in.toml")],
    "input-not-utf8": lambda t: ["trace", "--input", _file(t, b'{"x": "\xff"}')],
    "input-nan": lambda t: ["trace", "--input", _file(t, _with(w_q=_cell(0, 0, float("nan"))))],
    "input-display": lambda t: ["trace", "--input", _file(t, _with(x=[[[0.1] * 4] * 20]))],
    "trace-prompt": lambda t: ["trace", "--prompt", "C"],
    "input-budget": lambda t: ["trace", "--format", "json", "--input", _file(t, BIG)],
    # check (hand answers)
    "check-prompt": lambda t: ["check", "--stage", "x", "--prompt", "C", "--values", "1 0 0 0"],
    "check-stage": lambda t: ["check", "--stage", "logit", "--values", "1"],
    "check-neither": lambda t: ["check", "--values", "1 2"],
    "check-no-file": lambda t: ["check", str(t / "missing.toml")],
    "check-not-a-list": lambda t: ["check", _file(t, {"answer": 3}, "answers.json")],
    "check-not-a-number": lambda t: ["check", _file(t, [{"stage": "x", "values": [True]}])],
    "check-infinite": lambda t: ["check", "--stage", "weights", "--row", "1", "--values", "-inf 1"],
    # quiz and progress options
    "quiz-section": lambda t: ["quiz", "--data-dir", str(t), "--section", "20"],
    "quiz-both": lambda t: ["quiz", "--data-dir", str(t), "--section", "3", "--review"],
    "profile": lambda t: ["progress", "--data-dir", str(t), "--profile", "a b"],
    "reset-no-yes": lambda t: ["progress", "reset", "--data-dir", str(t)],
    # import / export files
    "import-missing": lambda t: ["progress", "import", str(t / "none.json"), "--data-dir", str(t)],
    "import-not-json": lambda t: ["progress", "import", _file(t, "{not"), "--data-dir", str(t)],
    "import-not-utf8": lambda t: ["progress", "import", _file(t, b"\xff{}"), "--data-dir", str(t)],
    "import-format": lambda t: ["progress", "import", _file(t, {"v": 1}), "--data-dir", str(t)],
    "import-directory": lambda t: ["progress", "import", str(t), "--data-dir", str(t)],
    "export-directory": lambda t: ["progress", "export", str(t), "--data-dir", str(t)],
    # text that is not UTF-8: a byte of an argument reaches Python as U+DC80-U+DCFF
    "notes-not-utf8": lambda t: ["notes", "add", "5", "a\udcffb", "--data-dir", str(t)],
    "search-not-utf8": lambda t: ["search", "\udce9t\udce9", "--data-dir", str(t)],
    "profile-not-utf8": lambda t: ["progress", "--profile", "a\udcff", "--data-dir", str(t)],
    "profile-newline": lambda t: ["progress", "--profile", "default\n", "--data-dir", str(t)],
    "note-too-long": lambda t: ["notes", "add", "5", "x" * 2001, "--data-dir", str(t)],
    "import-surrogate": lambda t: ["progress", "import", _file(t, _export_with("\ud800")),
                                   "--data-dir", str(t)],
    "import-duplicate-key": lambda t: ["progress", "import", _file(t, '{"format": 1, "format": 2}'),
                                       "--data-dir", str(t)],
    "check-head": lambda t: ["check", "--stage", "x", "--row", "0", "--head", "7", "--values",
                             "1 0 0 0"],
}  # fmt: skip


def _export_with(text: str) -> dict[str, Any]:
    """An export whose one note holds ``text``."""
    note = {"id": "0b7e2a52-52e4-4a3e-9d2e-4a2b8f0c1d11", "section": 5, "text": text,
            "created": "2026-11-29T10:00:00+00:00", "at": "2026-11-29T10:00:00+00:00",
            "deleted": False}  # fmt: skip
    return {"format": "attnlab-progress", "version": 2, "profile": "default",
            "exported_at": "2026-11-29T10:00:00+00:00", "completed": [], "assessments": [],
            "attempts": [], "last_section": None, "notes": [note], "bookmarks": []}  # fmt: skip


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("case", list(CLI_CASES))
def test_command_errors_speak_the_commands_language(tmp_path: Path, case: str, lang: str) -> None:
    r = CliRunner().invoke(app, ["--lang", lang, *CLI_CASES[case](tmp_path)])
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.output, r.stderr
    if lang == "zh":
        assert CJK.search(lines[0]), f"no Chinese in the zh line: {lines[0]}"
    else:
        assert not CJK.search(lines[0]), f"Chinese in the en line: {lines[0]}"


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(
    ("section", "typed", "field"),
    [("4", b"\xff\n", "answer"), ("4", b"\n\xfe\n", "answer"), ("0", b"\n\xe9\n", "reply")],
    ids=["check-answer", "exercise-answer", "self-assessment"],
)  # section 0 has no exercise: its second line is the self-assessment
def test_quiz_lines_that_are_not_utf8_speak_the_commands_language(
    tmp_path: Path, section: str, typed: bytes, field: str, lang: str
) -> None:
    argv = ["--lang", lang, "quiz", "--section", section, "--data-dir", str(tmp_path)]
    r = CliRunner().invoke(app, argv, input=typed)
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "UTF-8" in lines[0], r.stderr
    assert lang == "zh" or lines[0].startswith(f"attnlab: error: {field}: "), lines[0]
    assert bool(CJK.search(lines[0])) == (lang == "zh"), lines[0]


def test_the_import_field_messages_speak_both_languages(tmp_path: Path) -> None:
    from attnlab.progress.exchange import validate_export
    from attnlab.text.errors import InputError

    bad = {"format": "attnlab-progress", "version": 1.0}
    with pytest.raises(InputError) as caught:
        validate_export(bad)
    zh, en = caught.value.localized("zh"), caught.value.localized("en")
    assert en == "version: expected the integer 1 or 2, found 1.0" and zh.startswith(
        "version：应为整数 1"
    )


def _quiz_line(lang: str, tmp_path: Path, typed: str, start: tuple[str, str]) -> str:
    argv = ["--lang", lang, "quiz", "--data-dir", str(tmp_path / lang), "--section", "9"]
    out = CliRunner().invoke(app, argv, input=f"\n{typed}\nq\n").output
    return next(line[line.index(s) :] for line in out.splitlines() for s in start if s in line)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_exercise_feedback_speaks_the_quiz_language(tmp_path: Path, lang: str) -> None:
    ex = knowledge.section(9).exercises[0]  # 9c: 1.599; nothing else reads 1.60
    coarse = answer(ex.expected, 2)  # fewer decimals than asked
    for typed, start in (
        ("abc", ("无法读取", "Could not read")),
        (coarse, ("方向对", "Right as")),
    ):
        line = _quiz_line(lang, tmp_path, typed, start)
        assert bool(CJK.search(line)) == (lang == "zh"), line


# name -> (url, form data, headers); every one is refused with a 4xx page.
WEB_CASES: dict[str, tuple[str, dict[str, str], dict[str, str]]] = {
    "empty-answer": ("/section/3/answer", {"answer": " "}, {}),
    "long-answer": ("/exercise/4c", {"answer": "1" * 300}, {}),
    "unknown-exercise": ("/exercise/99z", {"answer": "1"}, {}),
    "unknown-section": ("/section/42/answer", {"answer": "x"}, {}),
    "bad-back": ("/section/3/complete", {"back": "elsewhere"}, {}),
    "bad-status": ("/section/3/assess", {"status": "maybe"}, {}),
    "cross-site": ("/section/3/complete", {}, {"Origin": "http://evil.example"}),
    "token": ("/section/3/complete", {"csrf_token": "x" * 43}, {}),
    "missing-field": ("/section/3/assess", {}, {}),
}


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory, web_client_factory: Any) -> Any:
    return web_client_factory(tmp_path_factory.mktemp("web"))


def _reason(page: str) -> str:
    found = re.search(r'<p class="error-message" id="error-message">(.*?)</p>', page, re.S)
    assert found, page[:300]
    return html.unescape(found.group(1))


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("case", [*WEB_CASES, "no-page", "no-section-page", "bad-check-page"])
def test_refusals_speak_the_pages_language(web: Any, case: str, lang: str) -> None:
    if case in WEB_CASES:
        url, data, headers = WEB_CASES[case]
        r = post_form(web, f"{url}?lang={lang}", data, headers=headers, follow_redirects=True)
    else:
        url = {"no-page": "/nowhere", "no-section-page": "/section/x",
               "bad-check-page": "/section/3/check?page=x"}[case]  # fmt: skip
        r = web.get(f"{url}{'&' if '?' in url else '?'}lang={lang}")
    assert 400 <= r.status_code < 500, r.status_code
    reason = _reason(r.text)
    if lang == "zh":
        assert CJK.search(reason), f"no Chinese in the zh reason: {reason}"
    else:
        assert not CJK.search(reason), f"Chinese in the en reason: {reason}"
