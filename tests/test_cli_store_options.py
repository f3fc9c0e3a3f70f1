"""One option bundle for the commands that read the progress store: ``--data-dir``, ``--db``,
``--profile`` and ``--lang`` on each, resolved once (:mod:`attnlab.cli._store`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from attnlab.cli.main import app

runner = CliRunner()
STORE_COMMANDS = [("progress",), ("progress", "export"), ("progress", "import"),
                  ("progress", "reset"), ("notes",), ("notes", "add"), ("notes", "rm"),
                  ("bookmark",), ("quiz",), ("search",), ("serve",)]  # fmt: skip


def _command(path: tuple[str, ...]) -> Any:
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # a group's subcommands by name
    return command


@pytest.mark.parametrize("path", STORE_COMMANDS, ids=" ".join)
def test_every_store_command_has_the_bundle_last(path: tuple[str, ...]) -> None:
    options = [p.opts[0] for p in _command(path).params if p.param_type_name == "option"]
    assert options[-4:] == ["--data-dir", "--db", "--profile", "--lang"], options


def test_a_groups_store_reaches_its_subcommand_and_lang_is_the_commands(tmp_path: Path) -> None:
    mine, other = tmp_path / "mine", tmp_path / "other"
    added = runner.invoke(app, ["notes", "--data-dir", str(mine), "--profile", "bo", "add", "4",
                                "a note", "--lang", "en"])  # fmt: skip
    assert added.exit_code == 0 and added.output.startswith("Added note ["), added.output
    listed = runner.invoke(app, ["notes", "--data-dir", str(mine), "--profile", "bo"])
    assert "a note" in listed.output and "笔记（1）" in listed.output, listed.output
    assert "a note" not in runner.invoke(app, ["notes", "--data-dir", str(other)]).output
    reset = runner.invoke(app, ["progress", "reset", "--data-dir", str(mine), "--lang", "en"])
    assert reset.exit_code == 2 and "expected --yes, found none" in reset.stderr


#: A server nobody listens on: with the driver missing, nothing may try to reach it.
NO_SERVER = "postgresql://ann:secret@127.0.0.1:1/course"


@pytest.mark.parametrize("missing", ["psycopg", "psycopg_pool"])
def test_a_pg_store_without_the_class_extra_is_one_line_naming_it(
    missing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, web_client_factory: Any
) -> None:
    """A learner's install has no PostgreSQL driver: ``--db postgresql://`` names the extra
    in one line (exit 2, 503 on the web) and writes nothing anywhere."""
    monkeypatch.setitem(__import__("sys").modules, missing, None)  # as if never installed
    done = runner.invoke(app, ["notes", "--db", NO_SERVER, "add", "4", "a note", "--lang", "en"])
    assert done.exit_code == 2, done.output
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"needs {missing}" in lines[0], lines
    assert "pip install 'attnlab[class]'" in lines[0] and "secret" not in lines[0]
    zh = runner.invoke(app, ["progress", "--db", NO_SERVER, "--lang", "zh"])
    assert zh.exit_code == 2 and "attnlab[class]" in zh.stderr and "需要" in zh.stderr
    client = web_client_factory(tmp_path / "web", db=NO_SERVER)
    page = client.get("/section/4?lang=en")
    assert page.status_code == 503 and "attnlab[class]" in page.text
    assert "secret" not in page.text
    assert list(tmp_path.rglob("*.sqlite3")) == []
