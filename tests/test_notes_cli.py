"""``attnlab notes`` (list, add, rm) and ``attnlab bookmark``: what they print, and one line with
exit 2 and nothing written for a bad section, an empty or over-long note, an unknown id."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.progress.store import ProgressStore


def _run(home: Path, *args: str, lang: str = "en"):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, [*args, "--data-dir", str(home), "--lang", lang])


def _saved(home: Path) -> tuple[list[str], tuple[int, ...]]:
    with ProgressStore.open(home) as store:
        return [n.text for n in store.notes()], store.bookmarks()


def test_add_list_bookmark_and_remove(tmp_path: Path) -> None:
    added = _run(tmp_path, "notes", "add", "5", "each row sums to 1")
    assert added.exit_code == 0, added.output
    note_id = re.search(r"Added note \[([0-9a-f]{8})\] to section 5", added.stdout).group(1)
    assert _run(tmp_path, "bookmark", "8").stdout.strip() == "Section 8: bookmarked"
    listed = _run(tmp_path, "notes").stdout
    assert "Bookmarks (1):\n  ★ 8. " in listed
    assert f"  5. From scores to attention weights\n    [{note_id}] each row sums to 1" in listed
    zh = _run(tmp_path, "notes", lang="zh").stdout
    assert "书签（1）：" in zh and "笔记（1）：" in zh
    assert _run(tmp_path, "bookmark", "8").stdout.strip() == "Section 8: bookmark removed"
    removed = _run(tmp_path, "notes", "rm", note_id)
    assert removed.stdout.strip() == f"Deleted note [{note_id}] (section 5)"
    assert _saved(tmp_path) == ([], ())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("notes", "add", "20", "hi"),
         r"section: expected an integer 0-19 \(0 = core goal\), found '20'"),
        (("notes", "add", "x", "hi"), r"section: expected an integer 0-19 .*found 'x'"),
        (("notes", "add", "5", "  "),
         r"note: expected some text \(1-2000 characters\), found none"),
        (("notes", "add", "5", "x" * 2001), r"note: expected at most 2000 characters, found 2001"),
        (("notes", "rm", "12345678"),
         r"note id: expected the id of one of your notes .*found no note for '12345678'"),
        (("bookmark", "1.5"), r"section: expected an integer 0-19 .*found '1.5'"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    result = _run(tmp_path, *args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and re.search(message, lines[0]), result.stderr
    assert "Traceback" not in result.output
    if (tmp_path / "progress.sqlite3").exists():
        assert _saved(tmp_path) == ([], ())


def test_errors_speak_the_commands_language(tmp_path: Path) -> None:
    empty = _run(tmp_path, "notes", "add", "5", " ", lang="zh")
    assert empty.stderr.strip() == "attnlab: error: 笔记：应有文字（1–2000 个字符），实际是空的"
    section = _run(tmp_path, "bookmark", "99", lang="zh")
    assert "节号应为 0–19 的整数（0 = 核心目标），收到的是 '99'" in section.stderr


def test_progress_export_and_import_carry_notes_and_bookmarks(tmp_path: Path) -> None:
    first, second, file = tmp_path / "a", tmp_path / "b", tmp_path / "mine.json"
    assert _run(first, "notes", "add", "11", "use -inf before the softmax").exit_code == 0
    assert _run(first, "bookmark", "11").exit_code == 0
    assert _run(first, "progress", "export", str(file)).exit_code == 0
    for _ in range(2):  # importing twice adds nothing
        merged = _run(second, "progress", "import", str(file))
        assert "1 notes" in merged.stdout, merged.output
    assert _saved(second) == (["use -inf before the softmax"], (11,))
