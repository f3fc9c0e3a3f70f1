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
