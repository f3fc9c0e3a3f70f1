"""One limit per kind of learner text (:mod:`attnlab.inputs.text_limits`), checked wherever text
enters: command-line arguments, the quiz's typed lines, web forms, imported files and the store
itself. Text at every limit survives export and import unchanged; one character more, a byte
that is not UTF-8, a lone surrogate or an id with a trailing newline is one line, exit 2 (422
on the web), and nothing is stored."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import process_support
import pytest
from typer.testing import CliRunner
from web_support import post_form

from attnlab.cli.main import app
from attnlab.inputs.text_limits import KINDS, TextError, check_text
from attnlab.progress.store import ProgressStore

NOTE_ID = "0b7e2a52-52e4-4a3e-9d2e-4a2b8f0c1d11"
AT = "2026-11-29T10:00:00.000000+00:00"
LIMIT = {name: kind.most for name, kind in KINDS.items()}


def _run(home: Path, *args: str, stdin: str | bytes | None = None, lang: str = "en"):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["--lang", lang, *args, "--data-dir", str(home)], input=stdin)


def _one_line(result, message: str) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("attnlab: error: "), result.stderr
    assert re.search(message, lines[0]), lines[0]
    assert "Traceback" not in result.output
    return lines[0]


def _stored(home: Path, profile: str = "default") -> dict:
    if not (home / "progress.sqlite3").exists():
        return {}
    with ProgressStore.open(home, profile) as store:
        data = store.export_dict()
    data.pop("exported_at")
    return data


def _nothing_stored(home: Path) -> None:
    data = _stored(home)
    assert not any(data.get(k) for k in ("attempts", "notes", "completed")), data


@pytest.mark.parametrize(
    ("value", "kind", "message"),
    [
        ("x" * 2001, "note", r"^note: expected at most 2000 characters, found 2001$"),
        ("注" * 2001, "check_answer", r"^answer: expected at most 2000 characters, found 2001$"),
        ("1" * 201, "exercise_answer", r"^answer: expected at most 200 characters, found 201$"),
        ("d" * 2001, "diagnosis", r"^diagnosis: expected at most 2000 characters, found 2001$"),
        ("p" * 65, "profile", r"^profile: expected at most 64 characters, found 65$"),
        ("q" * 101, "query", r"^search: expected at most 100 characters, found 101$"),
        ("   ", "note", r"^note: expected some text \(1-2000 characters\), found none$"),
        ("a\udcffb", "note", r"^note: expected UTF-8 text, found byte 0xff \(not UTF-8\) at "
         r"character 2$"),
        ("\ud800", "check_answer", r"^answer: expected UTF-8 text, found a lone surrogate "
         r"U\+D800 at character 1$"),
        ("default\n", "profile", r"^profile: expected 1-64 letters, digits, '_', '\.' or '-', "
         r"found 'default\\n'$"),
        ("a\x1bb", "profile", r"found 'a\\x1bb'$"),
        (NOTE_ID + "\n", "note_id", r"^note id: expected a lowercase UUID .*found '.*\\n'$"),
        (NOTE_ID.upper(), "note_id", r"^note id: expected a lowercase UUID"),
        (42, "note", r"^note: expected text, found int$"),
    ],
)  # fmt: skip
def test_each_kind_is_refused_past_its_limit_or_form(value: object, kind: str, message: str):
    with pytest.raises(TextError, match=message) as caught:
        check_text(value, kind)
    assert re.search(r"[\u4e00-\u9fff]", caught.value.localized("zh")), caught.value.localized("zh")


def test_each_kind_takes_text_at_its_limit_in_any_script() -> None:
    for kind, most in LIMIT.items():
        for letter in ("a", "注", "😀"):  # one, three and four bytes of UTF-8
            if kind == "profile" and letter == "😀":
                continue  # a profile name holds letters and digits only
            value = NOTE_ID if kind == "note_id" else letter * most
            assert check_text(value, kind) == value, kind
    assert check_text("", "diagnosis") == ""
    assert check_text("  spaced out \n", "note") == "spaced out"


def _verdict_at_limit(letter: str) -> str:
    """Verdict data (JSON, as the answer service keeps it) exactly at the diagnosis limit."""
    head, tail = '{"kind": "wrong", "pad": "', '"}'
    return head + letter * (LIMIT["diagnosis"] - len(head) - len(tail)) + tail


def _fill(home: Path, letter: str, profile: str) -> None:
    with ProgressStore.open(home, profile) as store:
        store.add_note(5, letter * LIMIT["note"])
        store.record_attempt("check-5", letter * LIMIT["check_answer"], None)
        store.record_attempt("5c", letter * LIMIT["exercise_answer"], False,
                             _verdict_at_limit(letter))  # fmt: skip
        store.toggle_bookmark(5)


@pytest.mark.parametrize("letter", ["x", "注"])
def test_text_at_every_limit_exports_and_imports_unchanged(tmp_path: Path, letter: str) -> None:
    profile = ("p" if letter == "x" else "档") * LIMIT["profile"]
    first, second, file = tmp_path / "first", tmp_path / "second", tmp_path / "backup.json"
    _fill(first, letter, profile)
    assert _run(first, "progress", "--profile", profile, "export", str(file)).exit_code == 0
    imported = _run(second, "progress", "--profile", profile, "import", str(file))
    assert imported.exit_code == 0, imported.output
    assert _stored(second, profile) == _stored(first, profile)
    note = _stored(second, profile)["notes"][0]["text"]
    assert len(note) == LIMIT["note"] and note[0] == letter


def test_the_store_refuses_text_past_its_limit(tmp_path: Path) -> None:
    with ProgressStore.open(tmp_path) as store:
        with pytest.raises(TextError, match=r"answer: expected at most 2000 characters"):
            store.record_attempt("check-5", "x" * 2001, None)
        with pytest.raises(TextError, match=r"answer: expected at most 200 characters"):
            store.record_attempt("5c", "1" * 201, False)
        with pytest.raises(TextError, match=r"diagnosis: expected at most 2000 characters"):
            store.record_attempt("5c", "1", False, "d" * 2001)
        with pytest.raises(TextError, match=r"byte 0xff"):
            store.record_attempt("check-5", "\udcff", None)
        with pytest.raises(TextError, match=r"note id: expected a lowercase UUID"):
            store.save_note(5, NOTE_ID + "\n", "x")
    with pytest.raises(TextError, match=r"profile: expected 1-64 letters"):
        ProgressStore.open(tmp_path, "default\n")
    _nothing_stored(tmp_path)


OVER = [
    pytest.param(("notes", "add", "5", "x" * 2001), r"note: expected at most 2000 characters",
                 id="notes-add"),
    pytest.param(("search", "q" * 101), r"search: expected at most 100 characters, found 101",
                 id="search"),
    pytest.param(("progress", "--profile", "p" * 65), r"profile: expected at most 64 characters",
                 id="profile"),
    pytest.param(("progress", "--profile", "default\n"), r"profile: expected 1-64 letters",
                 id="profile-newline"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "message"), OVER)
def test_command_line_arguments_past_their_limit(tmp_path: Path, args, message) -> None:  # type: ignore[no-untyped-def]
    _one_line(_run(tmp_path, *args), message)
    _nothing_stored(tmp_path)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["x" * 2001], r"answer: expected at most 2000 characters, found 2001"),
        (["", "1" * 201], r"answer: expected at most 200 characters, found 201"),
        (["", "1" * 2_000_000], r"answer: expected at most 200 characters, found 2000000"),
    ],
    ids=["check-answer", "exercise-answer", "2-MB-answer"],
)
def test_quiz_answers_past_their_limit(tmp_path: Path, lines: list[str], message: str) -> None:
    stdin = "".join(f"{line}\n" for line in lines)
    _one_line(_run(tmp_path, "quiz", "--section", "4", stdin=stdin), message)
    _nothing_stored(tmp_path)


def _export(**changes: object) -> dict:
    note = {"id": NOTE_ID, "section": 5, "text": "rows sum to 1", "created": AT, "at": AT,
            "deleted": False}  # fmt: skip
    attempt = {"exercise": "5c", "answer": "0.599", "correct": True, "diagnosis": None, "at": AT}
    data = {"format": "attnlab-progress", "version": 2, "profile": "default", "exported_at": AT,
            "completed": [], "assessments": [], "attempts": [attempt], "last_section": None,
            "notes": [note], "bookmarks": []}  # fmt: skip
    for key, value in changes.items():
        table, field = key.split("__")
        data[table][0][field] = value
    return data


IMPORTS = [
    pytest.param({"notes__text": "x" * 2001},
                 r"notes\[0\]\.text: expected at most 2000 characters, found 2001", id="note"),
    pytest.param({"attempts__answer": "1" * 201},
                 r"attempts\[0\]\.answer: expected at most 200 characters", id="exercise"),
    pytest.param({"attempts__exercise": "check-5", "attempts__correct": None,
                  "attempts__answer": "x" * 2001},
                 r"attempts\[0\]\.answer: expected at most 2000 characters", id="check"),
    pytest.param({"attempts__diagnosis": "d" * 2001},
                 r"attempts\[0\]\.diagnosis: expected at most 2000 characters", id="diagnosis"),
    pytest.param({"notes__text": "a\ud800"},
                 r"notes\[0\]\.text: expected UTF-8 text, found a lone surrogate U\+D800",
                 id="note-surrogate"),
    pytest.param({"attempts__answer": "\ud800"}, r"attempts\[0\]\.answer: .*lone surrogate",
                 id="answer-surrogate"),
    pytest.param({"attempts__diagnosis": "\udfff"}, r"attempts\[0\]\.diagnosis: .*lone surr",
                 id="diagnosis-surrogate"),
    pytest.param({"notes__id": NOTE_ID + "\n"}, r"notes\[0\]\.id: expected a lowercase UUID",
                 id="note-id-newline"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "message"), IMPORTS)
def test_import_fields_past_their_limit_or_not_utf8(tmp_path: Path, changes, message) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "in.json"
    path.write_text(json.dumps(_export(**changes)), encoding="utf-8")  # "\ud800" as an escape
    _one_line(_run(tmp_path / "home", "progress", "import", str(path)), message)
    _nothing_stored(tmp_path / "home")


WEB = [
    pytest.param("/section/5/note", {"note_id": NOTE_ID, "text": "x" * 2001},
                 "note: expected at most 2000 characters, found 2001", id="note"),
    pytest.param("/section/5/note", {"note_id": NOTE_ID + "\n", "text": "x"},
                 "note id: expected a lowercase UUID", id="note-id-newline"),
    pytest.param("/section/5/answer", {"answer": "x" * 2001},
                 "answer: expected at most 2000 characters, found 2001", id="check-answer"),
    pytest.param("/exercise/5c", {"answer": "1" * 201},
                 "answer: expected at most 200 characters, found 201", id="exercise-answer"),
]  # fmt: skip


@pytest.mark.parametrize(("url", "fields", "message"), WEB)
def test_web_forms_past_their_limit(web_client_factory, tmp_path: Path, url, fields, message):  # type: ignore[no-untyped-def]
    client = web_client_factory(tmp_path)
    refused = post_form(client, url + "?lang=en", **fields)
    assert refused.status_code == 422, refused.status_code
    shown = re.search(r'id="error-message">([^<]*)<', refused.text).group(1)
    assert message in shown.replace("&#39;", "'"), shown
    _nothing_stored(tmp_path)


def _subprocess(home: Path, *argv: bytes, stdin: bytes = b"") -> subprocess.CompletedProcess:
    """``python -m attnlab ARGV`` with raw bytes in its arguments and stdin (in this process:
    the arguments decoded and stdin read as the interpreter would, see process_support)."""
    env = {"ATTNLAB_DATA_DIR": str(home), "ATTNLAB_LANG": "en"}
    return process_support.attnlab(*argv, stdin=stdin, env=env)


NOT_UTF8 = [
    pytest.param((b"notes", b"add", b"5", b"a\xffb"), b"", b"note: expected UTF-8 text, "
                 b"found byte 0xff (not UTF-8) at character 2", id="notes-add"),
    pytest.param((b"search", b"\xe9t\xe9"), b"", b"search: expected UTF-8 text, found byte 0xe9",
                 id="search"),
    pytest.param((b"notes", b"rm", b"0b7e\xff"), b"", b"note id: expected the id of one of",
                 id="notes-rm"),
    pytest.param((b"quiz", b"--section", b"4"), b"a\xffb\n", b"answer: expected UTF-8 text, "
                 b"found byte 0xff (not UTF-8) at character 2", id="quiz-stdin"),
    pytest.param((b"quiz", b"--section", b"4"), b"\n\xff\n", b"answer: expected UTF-8 text",
                 id="quiz-exercise-stdin"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "stdin", "message"), NOT_UTF8)
def test_bytes_that_are_not_utf8_in_arguments_and_stdin(tmp_path, argv, stdin, message) -> None:  # type: ignore[no-untyped-def]
    done = _subprocess(tmp_path, *argv, stdin=stdin)
    assert done.returncode == 2, done.stderr[-800:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr[-800:]
    _nothing_stored(tmp_path)


def test_quiz_stdin_that_a_strict_decoder_refuses(tmp_path: Path) -> None:
    # CliRunner's stdin decodes strictly, as a terminal under en_US.UTF-8 does.
    result = _run(tmp_path, "quiz", "--section", "4", stdin=b"ok\xff\n")
    _one_line(result, r"answer: expected UTF-8 text, found byte 0xff \(not UTF-8\) at character 3")
    _nothing_stored(tmp_path)
