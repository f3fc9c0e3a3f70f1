"""Memory and time are bounded on every path a learner reaches: sizes are predicted first and a
command that would need more than 2 GiB is refused with the predicted GiB and a hint.

The tests lower the budget (``COMMAND_BUDGET_BYTES``) around small inputs rather than allocate
gigabytes; the prediction itself is checked against the real document.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.core import memory_guard
from attnlab.inputs.model import parse_input

runner = CliRunner()
GIB = 2**30


def _doc(T: int, B: int = 1, C: int = 1, **extra: object) -> dict:
    x = [[[0.1 * ((t + b + c) % 5) for c in range(C)] for t in range(T)] for b in range(B)]
    eye = [[1.0 if i == j else 0.0 for j in range(C)] for i in range(C)]
    return {"x": x, "w_q": eye, "w_k": eye, "w_v": eye, **extra}


def _write(tmp_path: Path, doc: dict | str, name: str = "in.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), "utf-8")
    return path


def _refused(*args: str) -> str:
    result = runner.invoke(app, ["--lang", "en", *args])
    assert result.exit_code == 2, (result.output, result.stderr)
    assert result.stdout == "" and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def _numbers(node: object) -> int:
    """Numbers (and the "-inf" of masked entries) in a JSON document's lists."""
    if isinstance(node, dict):
        return sum(_numbers(v) for k, v in node.items() if k not in ("tokens", "axes"))
    if isinstance(node, list):
        return sum(_numbers(v) for v in node)
    return int(not isinstance(node, str) or node in ("-inf", "inf", "nan"))


@pytest.mark.parametrize(
    "doc",
    [_doc(7), _doc(5, B=2, C=4, num_heads=2, w_o=_doc(4, C=4)["w_q"])],
    ids=["one head", "two heads"],
)
def test_json_document_prediction_is_a_close_upper_bound(tmp_path, doc) -> None:
    from attnlab.cli.commands.trace import document_numbers

    result = runner.invoke(
        app, ["trace", "--input", str(_write(tmp_path, doc)), "--format", "json"]
    )
    assert result.exit_code == 0, result.stderr
    actual, predicted = _numbers(json.loads(result.stdout)), document_numbers(parse_input(doc))
    assert actual <= predicted <= 1.5 * actual, (actual, predicted)


def test_trace_json_is_refused_past_the_budget_with_the_predicted_gib(tmp_path, monkeypatch):
    from attnlab.cli.commands.trace import document_numbers

    small, large = parse_input(_doc(30)), parse_input(_doc(40))

    def need(inp) -> int:
        return inp.stage_bytes() + document_numbers(inp) * memory_guard.DOCUMENT_BYTES_PER_NUMBER

    monkeypatch.setattr(memory_guard, "COMMAND_BUDGET_BYTES", need(small))
    ok = runner.invoke(
        app, ["trace", "--input", str(_write(tmp_path, _doc(30))), "--format", "json"]
    )
    assert ok.exit_code == 0 and json.loads(ok.stdout)["stages"]["A"]["weights"]
    line = _refused("trace", "--input", str(_write(tmp_path, _doc(40))), "--format", "json")
    numbers = f"{document_numbers(large):,}"
    assert (
        f"trace --format json: the stages and a document of {numbers} numbers need about " in line
    )
    assert f"{need(large) / GIB:.2f} GiB, more than the" in line
    assert "it grows with B·n_head·T²; use a shorter sequence or fewer prompts" in line


def test_the_issues_5000_token_trace_is_refused_before_anything_is_built(tmp_path) -> None:
    assert memory_guard.COMMAND_BUDGET_BYTES == 2 * GIB  # the budget the issue sets
    line = _refused("trace", "--input", str(_write(tmp_path, _doc(5000))), "--format", "json")
    assert "a document of 125,045,005 numbers need about 24.06 GiB" in line


def test_the_stages_themselves_are_budgeted(tmp_path, monkeypatch) -> None:
    doc = _doc(6, C=2)
    monkeypatch.setattr(memory_guard, "COMMAND_BUDGET_BYTES", parse_input(doc).stage_bytes() - 1)
    for command in (("trace",), ("plot", "weights", "--out", str(tmp_path))):
        line = _refused(*command, "--input", str(_write(tmp_path, doc)))
        assert "the stages of x [B, T, C] = [1, 6, 2] with 1 head(s) need about" in line
        assert "use a shorter sequence or fewer prompts" in line


def test_check_budgets_every_mistake_it_recomputes(tmp_path, monkeypatch) -> None:
    doc = _doc(6, C=2)
    monkeypatch.setattr(memory_guard, "COMMAND_BUDGET_BYTES", 5 * parse_input(doc).stage_bytes())
    ok = runner.invoke(app, ["trace", "--input", str(_write(tmp_path, doc)), "--stage", "x"])
    assert ok.exit_code == 0, ok.stderr  # one copy of the stages fits; twenty-one do not
    line = _refused("check", "--input", str(_write(tmp_path, doc)), "--stage", "x", "--values",
                    "0 0.1")  # fmt: skip
    assert "check --input: the right stages and 20 mistakes' stages need about" in line


def test_shapes_measures_any_accepted_size_without_memory(monkeypatch) -> None:
    from attnlab.lesson.shapes import measure_shapes

    monkeypatch.setattr(memory_guard, "available_bytes", lambda: 1)  # no memory at all
    rows = {r.stage: r.shape for r in measure_shapes(batch=1, tokens=3000, embed=8, heads=2)}
    assert rows["scores"] == (1, 2, 3000, 3000) and rows["output"] == (1, 3000, 8)
    result = runner.invoke(app, ["--lang", "en", "shapes", "--batch", "64", "--tokens", "4096",
                                 "--embed", "64", "--heads", "64"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "[64, 64, 4096, 4096]" in result.stdout  # a TiB of scores, measured, none stored


def test_plot_chain_draws_at_most_a_few_figures(tmp_path, monkeypatch) -> None:
    from attnlab.figures import files

    monkeypatch.setattr(files, "MAX_FIGURES", 2)
    path = _write(tmp_path, _doc(2, B=3, C=2))
    line = _refused("plot", "chain", "--input", str(path), "--out", str(tmp_path))
    assert (
        "chain: 3 figures (one per prompt and head) is too many for one command (at most 2)" in line
    )
    assert not list(tmp_path.glob("*.png"))


def test_a_file_of_millions_of_empty_lists_is_refused_before_parsing(tmp_path, monkeypatch):
    from attnlab.inputs import safe_load

    monkeypatch.setattr(safe_load, "MAX_ITEMS", 1000)
    doc = json.dumps({**_doc(2), "junk": [[] for _ in range(2000)]})
    for command in (("trace",), ("check", "--stage", "x", "--values", "0 0.1")):
        line = _refused(*command, "--input", str(_write(tmp_path, doc)))
        assert "expected at most 1,000 values, lists and tables but found about 4,0" in line
    answers = json.dumps({"answer": [{"stage": "x", "values": [[]] * 2000}]})
    line = _refused("check", str(_write(tmp_path, answers, "answers.json")))
    assert "answer file: " in line and "expected at most 1,000 values" in line


def test_a_device_is_refused_without_reading_it(tmp_path) -> None:
    from attnlab.inputs import safe_load

    assert safe_load.MAX_FILE_BYTES == 64 * 2**20  # read at most this much + 1 byte
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    line = _refused("trace", "--input", str(zero))
    assert f"--input: expected a regular file but {zero} is a device or pipe" in line


def test_cost_names_huge_sizes_in_readable_units() -> None:
    from attnlab.lesson.cost import human_bytes

    assert human_bytes(2**50) == "1.0 PiB" and human_bytes(5 * 2**60) == "5.0 EiB"
    result = runner.invoke(app, ["--lang", "en", "cost", "--tokens", "10000000", "--batch",
                                 "4096", "--heads", "4096"])  # fmt: skip
    assert result.exit_code == 0 and "EiB" in result.stdout
