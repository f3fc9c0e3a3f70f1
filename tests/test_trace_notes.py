"""``attnlab lesson``'s closing conclusion follows ``--precision``; ``attnlab trace`` says when
W_O defaults to the identity (text, Markdown, JSON)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.lesson import numbers
from attnlab.text.fmt import vec

ROOT = Path(__file__).resolve().parents[1]
NOTE = {
    "en": "W_O defaults to the identity I [C, C]",
    "zh": "W_O 默认取单位矩阵 I [C, C]",
}


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize("precision", [2, 6])
def test_the_conclusion_follows_precision(precision: int) -> None:
    r = invoke("lesson", "--lang", "en", "--precision", str(precision))
    assert r.exit_code == 0, r.output
    closing = r.stdout.split("== Conclusion:", 1)[1].splitlines()[1:3]
    for name, line in zip("AB", closing, strict=True):
        row = numbers.tensor(f"weights.{name}.final").tolist()
        assert line.strip() == f"Prompt {name}: {vec(row, precision)}", closing


@pytest.fixture(scope="module")
def no_w_o(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/two-heads.toml without its w_o table."""
    text = (ROOT / "examples/two-heads.toml").read_text(encoding="utf-8")
    cut = re.sub(r"(?ms)^w_o = \[.*?^\]\n", "", text)
    assert "w_o" not in cut.replace("# W_O", "")
    path = tmp_path_factory.mktemp("inputs") / "no-w-o.toml"
    path.write_text(cut, encoding="utf-8")
    return path


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_trace_says_w_o_defaults_to_the_identity(no_w_o: Path, lang: str, fmt: str) -> None:
    r = invoke("--lang", lang, "trace", "--input", str(no_w_o), "--format", fmt)
    assert r.exit_code == 0, r.output
    flat = " ".join(r.stdout.split())  # rich wraps long lines
    assert flat.count(NOTE[lang]) == 1, r.stdout


def test_trace_json_has_the_w_o_default_field(no_w_o: Path) -> None:
    doc = json.loads(invoke("trace", "--input", str(no_w_o), "--format", "json").stdout)
    assert doc["w_o_default"] == "identity" and "w_o" not in doc


def test_no_note_when_the_file_gives_w_o() -> None:
    given = str(ROOT / "examples/two-heads.toml")
    text = invoke("--lang", "en", "trace", "--input", given).stdout
    assert "defaults to the identity" not in " ".join(text.split())
    doc = json.loads(invoke("trace", "--input", given, "--format", "json").stdout)
    assert "w_o_default" not in doc and len(doc["w_o"]) == 4
