"""Finite input that overflows a stage, and input the parsers choke on: always one line, exit 2
(CLI) or 422 (web), never NaN on screen, OverflowError, ValueError or RecursionError."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import process_support
import pytest
import torch
from fastapi.testclient import TestClient
from typer.testing import CliRunner
from web_support import ORIGIN, fetch_headers, post_form

from attnlab.cli.main import app
from attnlab.core import example
from attnlab.core.pipeline import attention_stages
from attnlab.grading import answers
from attnlab.inputs.model import parse_input
from attnlab.text.errors import InputError
from attnlab.web.app import create_app

runner = CliRunner()
EYE = [[1.0, 0.0], [0.0, 1.0]]


def _doc(x: list, w_q: list = EYE, w_k: list = EYE, w_v: list = EYE, **extra: object) -> dict:
    return {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v, **extra}


#: (input, the stage that overflows first, the message's cause). Every number is finite.
OVERFLOWS = [
    pytest.param(_doc([[[1e154, 1e154], [1e154, 1e154]]]), "raw_scores", "|q·k|", id="scores"),
    pytest.param(_doc([[[1e308, 1e308]]], w_q=[[10.0, 0], [0, 1]]), "q", "|x·W_Q|", id="q"),
    pytest.param(_doc([[[1.0, 1.0]]], w_v=[[1e308, 0], [1e308, 0]]), "v", "|x·W_V|", id="v"),
    pytest.param(
        _doc([[[1.0, 1.0]]], num_heads=2, w_o=[[1e308, 1e308], [1e308, 1e308]]),
        "output", "|concat·W_O|", id="w_o",
    ),
]  # fmt: skip


def _run(*args: str):
    result = runner.invoke(app, list(args))
    assert "Traceback" not in result.output + result.stderr
    return result


def _one_error_line(result, code: int = 2) -> str:
    assert result.exit_code == code, (result.exit_code, result.output, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("attnlab: error: "), result.stderr
    assert result.stdout == "", "nothing half-written"
    return lines[0]


def _write(tmp_path: Path, content: str | dict, name: str = "in.json") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    return path


@pytest.mark.parametrize(("doc", "stage", "cause"), OVERFLOWS)
def test_every_stage_is_checked_and_the_first_overflow_is_named(doc, stage, cause) -> None:
    from attnlab.core.finite import NonFiniteStageError

    with pytest.raises(NonFiniteStageError, match=rf"^{stage} overflow float64: {cause}") as err:
        parse_input(doc).stages()
    assert err.value.stage == stage
    assert "超出 float64 范围" in err.value.localized("zh")


@pytest.mark.parametrize(
    "command",
    [
        ("trace",),
        ("trace", "--format", "json"),
        ("trace", "--format", "markdown"),
        ("plot", "weights"),
        ("check", "--stage", "weights", "--values", "0.5 0.5", "--row", "1"),
    ],
    ids=lambda c: " ".join(c),
)
def test_overflow_in_the_scores_is_refused_by_every_command(tmp_path, command) -> None:
    path = _write(tmp_path, OVERFLOWS[0].values[0])
    out = ["--out", str(tmp_path)] if command[0] == "plot" else []
    line = _one_error_line(_run("--lang", "en", *command, "--input", str(path), *out))
    assert "raw_scores overflow float64: |q·k| > 1.8e308 (at [0, 0, 0]); use smaller" in line
    assert not list(tmp_path.glob("*.png"))
    line = _one_error_line(_run(*command, "--input", str(path), *out))  # the default: Chinese
    assert "raw_scores 超出 float64 范围：|q·k| > 1.8e308" in line


def test_masked_minus_infinity_is_not_an_overflow() -> None:
    from attnlab.core.finite import check_finite_stages

    s = attention_stages(example.lesson_x(), example.lesson_w_q(), example.lesson_w_k(),
                         example.lesson_w_v())  # fmt: skip
    assert torch.isinf(s.masked_scores).any()
    check_finite_stages(s)  # the lesson's own −∞ above the diagonal passes


def _client(tmp_path: Path) -> TestClient:
    client = TestClient(create_app(tmp_path, figures_on=False), base_url=ORIGIN)
    assert client.get("/lesson").status_code == 200  # sets the session cookie
    return client


def _api(client: TestClient, body: bytes, lang: str = "en"):
    headers = fetch_headers(client, {"Content-Type": "application/json"})
    return client.post(f"/api/explorer?lang={lang}", content=body, headers=headers)


def _lesson_payload(**changes: object) -> dict:
    payload = {k: getattr(example, f"lesson_{k}")().tolist() for k in ("x", "w_q", "w_k", "w_v")}
    return payload | changes


def _form_cells(name: str, values: list | float) -> dict[str, str]:
    """The no-JavaScript form's fields ``x[0][1][2]`` for a nested list."""
    if not isinstance(values, list):
        return {name: repr(values)}
    return {
        k: v for i, row in enumerate(values) for k, v in _form_cells(f"{name}[{i}]", row).items()
    }


def test_explorer_refuses_an_overflow_with_422_and_names_the_stage(tmp_path) -> None:
    client = _client(tmp_path)
    x = [[[1e160] * 4] * 3] * 2  # finite numbers; q·k is about 1e320
    r = _api(client, json.dumps(_lesson_payload(x=x)).encode())
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["stage"] == "raw_scores" and body["field"] == "" and "stages" not in body
    assert body["error"].startswith("raw_scores overflow float64: |q·k| > 1.8e308")
    r = _api(client, json.dumps(_lesson_payload(x=x)).encode(), lang="zh")
    assert r.json()["error"].startswith("raw_scores 超出 float64 范围")
    form = {"T": "3", "C": "4", "d": "2"}
    for name, values in _lesson_payload(x=x).items():
        form |= _form_cells(name, values)
    r = post_form(client, "/explorer?lang=en", form, follow_redirects=True)
    assert r.status_code == 422 and "raw_scores overflow float64" in r.text
    assert 'data-stage="weights"' not in r.text  # no stale numbers under the message


HUGE_INTEGERS = [
    pytest.param("1" + "0" * 400, "an integer of about 401 digits", id="10**400"),
    pytest.param("7" * 5000, "found inf (a number past ±1.8e308 reads as inf)", id="5000-digits"),
    pytest.param("1e999", "found inf (a number past ±1.8e308 reads as inf)", id="1e999"),
]


@pytest.mark.parametrize(("literal", "message"), HUGE_INTEGERS)
def test_numbers_too_large_for_a_float_are_refused_naming_the_cell(tmp_path, literal, message):
    text = json.dumps(_doc([[[1.0, 1.0]]])).replace("1.0", literal, 1)
    line = _one_error_line(_run("--lang", "en", "trace", "--input", str(_write(tmp_path, text))))
    assert "x[0][0][0]: expected" in line and message in line


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("deep.json", '{"x": ' + "[" * 5000 + "]" * 5000 + "}", "nesting deeper than the parser"),
        ("deep.toml", "x = " + "[" * 5000 + "]" * 5000, "nesting deeper than the parser"),
        ("big.toml", "x = [[[" + "9" * 5000 + "]]]", "expected numbers a float can hold"),
        ("big2.toml", "x = [[[1" + "0" * 400 + ", 1]]]\nw_q=[[1],[1]]\nw_k=[[1],[1]]\n"
         "w_v=[[1],[1]]", "x[0][0][0]: expected a number a float can hold"),
    ],
)  # fmt: skip
def test_parsers_never_raise_recursion_or_value_errors(tmp_path, name, text, message) -> None:
    path = _write(tmp_path, text, name)
    for command in (("trace",), ("check", "--stage", "x", "--values", "1 1"), ("plot", "chain")):
        line = _one_error_line(
            _run("--lang", "en", *command, "--input", str(path), "--out", str(tmp_path))
            if command[0] == "plot"
            else _run("--lang", "en", *command, "--input", str(path))
        )
        assert message in line, line


BAD_ANSWERS = [
    ("1e999", "expected a number a float can hold"),
    ("-1e999", "expected a number a float can hold"),
    ("1" + "0" * 5000, "at most 64 characters"),
    ("nan", "expected a number, got 'nan' (NaN is never an answer)"),
    ("inf", "expected a finite number, got 'inf'"),
    ("-" + "9" * 400, "at most 64 characters"),
]


@pytest.mark.parametrize("exercise", ["4c", "9d", "17c"])
@pytest.mark.parametrize(("text", "message"), BAD_ANSWERS)
def test_exercise_answers_too_large_for_a_float_are_refused(exercise, text, message) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        answers.check_answer(exercise, text)


def test_an_answer_with_a_huge_exponent_of_zero_is_graded() -> None:
    assert not answers.check_answer("4c", "0e400").correct  # graded, not OverflowError


@pytest.mark.parametrize(("text", "message"), BAD_ANSWERS[:4])
def test_web_exercise_answers_are_kept_ungraded_with_the_reason(tmp_path, text, message) -> None:
    client = _client(tmp_path)
    r = post_form(client, "/exercise/4c?lang=en", answer=text[:200])
    assert r.status_code == 303, r.text
    page = html.unescape(client.get(r.headers["location"]).text)
    assert message in page and f'value="{text[:200]}"' in page


def test_quiz_says_it_cannot_read_1e999_and_asks_again(tmp_path) -> None:
    lines = ["", "1e999", "-1e999", "9" * 150, "q"]  # within the 200 characters of an answer
    result = runner.invoke(
        app, ["--lang", "en", "quiz", "--section", "4", "--data-dir", str(tmp_path)],
        input="\n".join(lines) + "\n",
    )  # fmt: skip
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.count("⚠ Could not read it · expected a number a float can hold") == 2
    assert "⚠ Could not read it · expected a number of at most 64 characters" in out


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ("1e999 1", "--values: expected a number a float can hold (|x| <= 1.8e308), got '1e999'"),
        ("-1e999 1", "got '-1e999'; write -inf for a masked score"),
        ("nan 1", "--values: expected a number, got 'nan' (NaN is never an answer)"),
        ("1" + "0" * 5000 + " 1", "--values: expected a number of at most 64 characters"),
    ],
)
def test_check_values_too_large_for_a_float(values, message) -> None:
    result = _run("--lang", "en", "check", "--stage", "weights", "--row", "1", "--values", values)
    assert message in _one_error_line(result)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([1e308, 1e308 * 10], "expected numbers a float can hold (|x| <= 1.8e308), got inf"),
        (["abc", 1], "expected a number like 0.599 (or -inf), got 'abc'"),
        ([[[0.5]], 0.5], "expected numbers or rows of numbers, got deeper lists"),
        ([{"a": 1}, 0.5], "expected numbers, got dict"),
    ],
)
def test_check_answer_files_refuse_what_a_float_cannot_hold(tmp_path, values, message) -> None:
    answers = {"answer": [{"stage": "weights", "row": 1, "values": values}]}
    text = json.dumps(answers).replace("Infinity", "1" + "0" * 400)  # an integer literal
    line = _one_error_line(
        _run("--lang", "en", "check", str(_write(tmp_path, text, "answers.json")))
    )
    assert message in line


def test_check_prompt_that_only_looks_like_a_digit() -> None:
    for prompt in ("²", "9" * 5000):
        result = _run(
            "--lang", "en", "check", "--stage", "x", "--prompt", prompt, "--values", "1 0 0 0"
        )
        assert "prompt: expected one of A, B" in _one_error_line(result)


def test_explorer_body_with_huge_integers_or_deep_nesting_gets_422(tmp_path) -> None:
    client = _client(tmp_path)
    payload = json.dumps(_lesson_payload()).replace("1.0", "7" * 5000, 1).encode()
    r = _api(client, payload)
    assert r.status_code == 422 and r.json()["cell"].startswith("x[")
    r = _api(client, b"[" * 5000 + b"]" * 5000)
    assert r.status_code == 422 and "nesting deeper than the parser" in r.json()["error"]
    for size in ("²", "9" * 5000):
        r = client.get("/explorer", params={"T": size, "lang": "en"})
        assert r.status_code == 400 and "T: expected a whole number" in r.text


LESSON = {k: getattr(example, f"lesson_{k}")().tolist() for k in ("x", "w_q", "w_k", "w_v")}
BOM = b"\xef\xbb\xbf"
#: A second "x" would silently replace the first.
TWICE_X = json.dumps(LESSON).replace('{"x":', '{"x": [[[9, 9, 9, 9]]], "x":', 1)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("top.json", TWICE_X),
        ("nested.json", json.dumps([{"stage": "x", "row": 0, "values": [1, 0, 0, 0]}])
         .replace('"row": 0', '"row": 0, "row": 1')),
    ],
    ids=["input-file", "answer-file"],
)  # fmt: skip
def test_a_repeated_json_key_is_refused_naming_it(tmp_path, name, content) -> None:
    path = _write(tmp_path, content, name)
    args = ("trace", "--input", str(path)) if name == "top.json" else ("check", str(path))
    line = _one_error_line(_run("--lang", "en", *args))
    key = "x" if name == "top.json" else "row"
    assert f"expected each key once in an object, found {key!r} twice" in line, line
    zh = _one_error_line(_run("--lang", "zh", *args))
    assert f"{key!r} 出现了两次" in zh, zh


def test_a_repeated_key_in_the_explorer_body_is_refused(tmp_path) -> None:
    r = _api(_client(tmp_path), TWICE_X.encode())
    assert r.status_code == 422 and "found 'x' twice" in r.json()["error"], r.text


def test_input_and_answer_files_accept_a_byte_order_mark(tmp_path) -> None:
    toml = "\n".join(f"{k} = {v}" for k, v in LESSON.items())
    for name, text in (("in.json", json.dumps(LESSON)), ("in.toml", toml)):
        path = tmp_path / name
        path.write_bytes(BOM + text.encode())
        result = _run("--lang", "en", "trace", "--stage", "x", "--input", str(path))
        assert result.exit_code == 0, result.stderr
    answers = tmp_path / "answers.json"
    answers.write_bytes(BOM + json.dumps([{"stage": "x", "values": [1, 0, 0, 0], "row": 0}])
                        .encode())  # fmt: skip
    assert _run("--lang", "en", "check", str(answers)).exit_code == 0


def test_a_byte_after_the_byte_order_mark_is_named_at_its_offset(tmp_path) -> None:
    path = tmp_path / "in.json"
    path.write_bytes(BOM + b'{"x": "\xff"}')
    line = _one_error_line(_run("--lang", "en", "trace", "--input", str(path)))
    assert "has byte 0xff at offset 10" in line, line


#: Arguments with a byte that is not UTF-8, as a shell passes them (Python decodes them with
#: surrogateescape): every command answers one line and exit 2, whichever argument holds it.
NOT_UTF8_ARGV = [
    (b"notes", b"add", b"5", b"\xff"),
    (b"notes", b"rm", b"\xff\xfe\xfd\xfc"),
    (b"search", b"soft\xffmax"),
    (b"progress", b"--profile", b"\xff"),
    (b"bookmark", b"\xff"),
    (b"trace", b"--prompt", b"\xff"),
    (b"check", b"--stage", b"x", b"--row", b"0", b"--values", b"1 \xff"),
    (b"--lang", b"\xff", b"notes"),
]


@pytest.mark.parametrize("argv", NOT_UTF8_ARGV, ids=lambda a: b" ".join(a).decode("latin-1"))
def test_arguments_that_are_not_utf8(tmp_path, argv) -> None:
    env = {"ATTNLAB_DATA_DIR": str(tmp_path), "ATTNLAB_LANG": "en"}
    done = process_support.attnlab(*argv, env=env)  # argv decoded as the interpreter does
    lines = done.stderr.decode("utf-8", "backslashreplace").strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, (done.returncode, lines[-5:])
    assert lines[0].startswith("attnlab: error: "), lines[0]
    assert b"\xff" not in done.stderr and done.stdout == b"", "the byte is named or escaped"


def _full_export() -> dict:
    at = "2026-11-29T10:00:00+00:00"
    return {
        "format": "attnlab-progress", "version": 2, "profile": "default", "exported_at": at,
        "completed": [{"section": 1, "at": at}],
        "assessments": [{"section": 1, "status": "review", "at": at}],
        "attempts": [{"exercise": "5c", "answer": "0.599", "correct": False,
                      "diagnosis": "no scaling", "at": at}],
        "last_section": {"section": 1, "at": at},
        "notes": [{"id": "0b7e2a52-52e4-4a3e-9d2e-4a2b8f0c1d11", "section": 5, "text": "rows",
                   "created": at, "at": at, "deleted": False}],
        "bookmarks": [{"section": 5, "marked": True, "at": at}],
    }  # fmt: skip


def _text_fields(data: object, path: tuple = ()) -> list[tuple]:
    """The path of every string value of ``data``."""
    if isinstance(data, str):
        return [path]
    if isinstance(data, dict):
        return [p for key, value in data.items() for p in _text_fields(value, (*path, key))]
    if isinstance(data, list):
        return [p for i, value in enumerate(data) for p in _text_fields(value, (*path, i))]
    return []


TEXT_FIELDS = _text_fields(_full_export())


def test_the_export_fuzz_covers_every_text_field() -> None:
    assert len(TEXT_FIELDS) == 16, TEXT_FIELDS  # every string of every kind of entry


@pytest.mark.parametrize("surrogate", ["\ud800", "ok\udfff", "\udcff"])
@pytest.mark.parametrize("field", TEXT_FIELDS, ids=lambda p: ".".join(map(str, p)))
def test_a_lone_surrogate_in_any_text_field_of_an_import(tmp_path, field, surrogate) -> None:
    from attnlab.progress.store import ProgressStore

    data = _full_export()
    holder = data
    for key in field[:-1]:
        holder = holder[key]
    holder[field[-1]] = surrogate
    path = tmp_path / "in.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # written as a "\ud800" escape
    home = tmp_path / "home"
    line = _one_error_line(_run("--lang", "en", "progress", "import", str(path), "--data-dir",
                                str(home)))  # fmt: skip
    assert str(path) in line
    with ProgressStore.open(home) as store:
        assert store.notes() == [] and store.attempts() == [] and store.summary().completed == ()
