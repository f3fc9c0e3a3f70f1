"""Text a learner's terminal receives: token labels from files are shown escaped, never as raw
control characters, and a terminal that cannot encode Chinese gets escapes, not a traceback."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from matplotlib.figure import Figure
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.inputs.model import parse_input

runner = CliRunner()
#: Labels a hostile file may hold: colour, carriage return and bell, a bidi override, a
#: zero-width space, rich markup and mathtext, and a C1 control (CSI).
EVIL = ["\x1b[31mred", "a\rb\x07", "\u202eevil", "zero\u200bwidth", "[/bold]$\\frac$", "\x9b2J"]
RAW = ("\x1b", "\r", "\x07", "\u202e", "\u200b", "\x9b")
SHOWN = ["\\x1b[31mred", "a\\rb\\x07", "\\u202eevil", "zero\\u200bwidth", "[/bold]$\\frac$"]


def _doc() -> dict:
    x = [[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5], [1.0, 0.0], [0.0, 1.0]]]
    eye = [[1.0, 0.0], [0.0, 1.0]]
    return {"x": x, "w_q": eye, "w_k": eye, "w_v": eye, "tokens": [EVIL]}


def _trace(tmp_path: Path, *args: str) -> str:
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(_doc()), "utf-8")
    result = runner.invoke(app, ["--lang", "en", "trace", "--input", str(path), *args])
    assert result.exit_code == 0, (result.output, result.stderr, result.exception)
    return result.stdout


def _no_raw(text: str) -> None:
    found = [repr(c) for c in RAW if c in text]
    assert not found, f"raw control characters reached the output: {found}"


def test_trace_text_and_markdown_escape_token_labels(tmp_path) -> None:
    text = _trace(tmp_path, "--stage", "x")  # rich table: markup in a label must not apply
    _no_raw(text)
    for label in SHOWN:
        assert label in text, label
    markdown = _trace(tmp_path, "--stage", "weights", "--format", "markdown")
    _no_raw(markdown)
    assert "| t=0 \\x1b[31mred |" in markdown and "| j=5 \\x9b2J |" in markdown


def test_trace_json_keeps_the_labels_but_not_the_raw_characters(tmp_path) -> None:
    out = _trace(tmp_path, "--format", "json")
    _no_raw(out)
    assert json.loads(out)["tokens"] == [EVIL]  # the parsed JSON is the file's own labels


def _texts(fig: Figure) -> list[str]:
    texts = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]
    return [t for t in texts if t]


@pytest.mark.parametrize("kind", ["weights", "chain"])
def test_figures_show_escaped_labels(kind) -> None:
    from attnlab.figures.files import make_figures
    from attnlab.figures.source import input_source

    [(_, fig)] = make_figures(kind, input_source(parse_input(_doc())), "en")
    texts = "\n".join(_texts(fig))
    _no_raw(texts)
    assert "t=0 \\x1b[31mred" in texts and "t=4 [/bold]\\$\\frac\\$" in texts
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")  # would raise if mathtext parsed a label
    assert buffer.getvalue().startswith(b"\x89PNG")


def test_error_lines_escape_what_they_quote(tmp_path) -> None:
    result = runner.invoke(app, ["trace", "--input", str(tmp_path / "no\x1b[2Jfile.json")])
    assert result.exit_code == 2
    _no_raw(result.stderr)
    assert "no\\x1b[2Jfile.json" in result.stderr


def _saved_evil(home: Path) -> None:
    """A store whose notes and answers hold every evil label (as the web lets one type them)."""
    from attnlab.progress.store import ProgressStore

    text = "softmax " + " ".join(EVIL)
    with ProgressStore.open(home) as store:
        store.add_note(5, text)
        for section in range(4):  # the quiz resumes at section 4
            store.mark_complete(section)
        store.record_attempt("check-4", text, None)
        for _ in range(2):  # both tries used: the quiz shows the answer instead of asking
            store.record_attempt("4c", "0.5 " + " ".join(EVIL), False)


@pytest.mark.parametrize(
    "command",
    [("notes",), ("search", "softmax"), ("search", "softmax", "--json"), ("quiz",)],
    ids=" ".join,
)
def test_stored_text_is_shown_escaped(tmp_path, command) -> None:
    _saved_evil(tmp_path)
    argv = ["--lang", "en", *command, "--data-dir", str(tmp_path)]
    result = runner.invoke(app, argv, input="q\n")
    assert result.exit_code == 0, (result.output, result.exception)
    _no_raw(result.stdout)
    if command[-1] == "--json":
        note = json.loads(result.stdout)[0]["snippet"]
        assert "\x1b[31mred" in note and "\u202eevil" in note  # the same text, once parsed
    else:
        assert "softmax \\x1b[31mred a b\\x07 \\u202eevil" in result.stdout
    if command == ("quiz",):
        assert "Your saved answer: softmax \\x1b[31mred" in result.stdout
        assert "✗ Answered: 0.5 \\x1b[31mred" in result.stdout


#: Commands a learner runs first, one process per terminal setting (imports are slow).
_COMMANDS = [
    ["lesson"],
    ["trace"],
    ["trace", "--format", "markdown", "--stage", "weights"],
    ["check", "--stage", "weights", "--row", "1", "--values", "0.599 0.401"],  # 0.6 is coarse
    ["mistakes"],
    ["glossary"],
    ["quiz", "--section", "1"],
    ["trace", "--prompt", "猫"],
]
_SCRIPT = """
import sys
from attnlab.cli.main import main
for argv in {commands!r}:
    sys.argv = ["attnlab", *argv]
    try:
        main()
    except SystemExit as stop:
        print(f"[exit {{stop.code}}]", flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "setting",
    [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "PYTHONUTF8": "0"}],
    ids=["PYTHONIOENCODING=ascii", "LC_ALL=C"],
)
@pytest.mark.process
def test_a_terminal_that_cannot_encode_chinese_gets_escapes(tmp_path, setting) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PYTHONIO", "LANG"))}
    env |= {**setting, "ATTNLAB_DATA_DIR": str(tmp_path), "ATTNLAB_LANG": "zh"}
    script = tmp_path / "run.py"  # a file, read as UTF-8 whatever the locale (unlike -c)
    script.write_text(_SCRIPT.format(commands=_COMMANDS), "utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], input="懂\nu\nq\n".encode(), env=env,
        capture_output=True, timeout=240,
    )  # fmt: skip
    out, err = done.stdout.decode("ascii"), done.stderr.decode("ascii")  # ASCII, every byte
    assert done.returncode == 0 and "Traceback" not in err, err[-2000:]
    assert [line for line in out.splitlines() if line.startswith("[exit")] == [
        "[exit 0]", "[exit 0]", "[exit 0]", "[exit 0]", "[exit 0]", "[exit 0]", "[exit 0]",
        "[exit 2]",
    ]  # fmt: skip
    assert "\\u6ce8\\u610f\\u529b" in out  # 注意力, readable as escapes
    assert "weights\\uff08Prompt A\\uff0c\\u7b2c 1 \\u884c\\uff09\\uff1a\\u2713" in out  # check's ✓
    assert "attnlab: error: --prompt\\uff1a\\u5e94\\u4e3a A, B" in err  # --prompt：应为 A, B
