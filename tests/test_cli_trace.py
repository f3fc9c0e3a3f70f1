"""``attnlab lesson/grad/trace/shapes/cost`` through typer's CliRunner."""

from __future__ import annotations

import json
import math
from pathlib import Path

import process_support
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.core.pipeline import attention_stages, multi_head_stages

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def invoke(*args: str, input: str | None = None):
    return runner.invoke(app, list(args), input=input)


def test_lesson_and_grad_match_the_scripts() -> None:
    from attnlab.cli.walk import render_lesson
    from attnlab.cli.walk_grad import render_experiment

    result = invoke("lesson", "--lang", "en")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == render_lesson("en").strip()
    result = invoke("--lang", "en", "grad")
    assert result.stdout.strip() == render_experiment("en").strip()
    assert "-0.076159" in result.stdout


def test_trace_text_shows_lesson_values_with_tokens() -> None:
    result = invoke("trace")
    assert result.exit_code == 0, result.output
    out = result.stdout
    for needle in [
        "t=1 喜欢",
        "j=0 猫",
        "0.5987",
        "0.4013",
        "0.4256",
        "0.5744",
        "-∞",
        "行和",
        "-0.4256",
        "1.1314",
        "0.0000*",
    ]:
        assert needle in out, needle
    assert "Key 位置轴" in out  # the explanation names the reduced axis


def test_trace_english_stage_and_prompt_filter() -> None:
    result = invoke("--lang", "en", "trace", "--prompt", "B", "--stage", "weights")
    assert result.exit_code == 0, result.output
    assert "Prompt B" in result.stdout and "Prompt A" not in result.stdout
    assert "t=0 we" in result.stdout and "row sum" in result.stdout
    assert "0.4256" in result.stdout and "Raw scores" not in result.stdout


def test_trace_markdown() -> None:
    result = invoke("trace", "--format", "markdown", "--stage", "masked_scores", "--lang", "en")
    assert result.exit_code == 0
    assert "| t=0 you | 0.4000 | -∞* |" in result.stdout
    assert result.stdout.startswith("### Masked scores `[2, 2, 2]`")


def test_trace_json_is_the_scripts_document() -> None:
    from attnlab.cli.walk import lesson_document

    result = invoke("trace", "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == json.loads(json.dumps(lesson_document("zh")))


def test_trace_step_waits_between_stages() -> None:
    result = invoke("--lang", "en", "trace", "--step", "--prompt", "A", input="\n" * 9)
    assert result.exit_code == 0
    assert result.stdout.count("Press Enter for the next stage") == 9  # 10 stages, 9 pauses


def test_trace_own_file_multi_head() -> None:
    result = invoke("--lang", "en", "trace", "--input", str(ROOT / "examples/two-heads.toml"))
    assert result.exit_code == 0, result.output
    assert "Head 2 · Attention weights" in result.stdout
    assert "Heads concatenated" in result.stdout and "Output projection" in result.stdout


def test_lesson_json_example_round_trips() -> None:
    result = invoke("trace", "--input", str(ROOT / "examples/lesson.json"), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["stages"]["B"]["weights"][1] == pytest.approx([0.42556, 0.57444], abs=1e-5)


def test_shapes_measured() -> None:
    result = invoke(
        "--lang", "en", "shapes", "--batch", "1", "--tokens", "3", "--embed", "4", "--heads", "2"
    )
    assert result.exit_code == 0
    for shape in ["[1, 3, 4]", "[1, 2, 3, 2]", "[1, 2, 3, 3]"]:
        assert shape in result.stdout
    assert "query position" in result.stdout


def test_cost_table() -> None:
    result = invoke("cost", "--tokens", "2", "--tokens", "1000", "--tokens", "2000")
    assert result.exit_code == 0
    assert "4,000,000" in result.stdout and "250,000×" in result.stdout
    assert "1,000,000×" in result.stdout and "30.5 MiB" in result.stdout


# --- bad input: one line on stderr, exit 2, no traceback -------------------------------------

LESSON_INPUT = {
    "x": [[[1.0, 0, 0, 0], [0, 1.0, 0, 0]], [[0, 0, 1.0, 0], [0, 1.0, 0, 0]]],
    "w_q": [[0.5, 0.5], [1, 1], [-0.5, 0.5], [0, 0]],
    "w_k": [[1.1, 0], [0.28, 0.28], [0, 0.14], [0, 0]],
    "w_v": [[1, 0], [0, 1], [-1, 0], [0, 0]],
}


def _with(**changes) -> dict:
    data = json.loads(json.dumps(LESSON_INPUT))
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    return data


def _write(tmp_path: Path, content: str | bytes | dict | list, name: str = "in.json") -> Path:
    path = tmp_path / name
    if isinstance(content, (dict, list)):
        content = json.dumps(content)
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    return path


BAD = [
    ("missing-key", _with(w_v=None), "w_v: missing (expected [C][d] numbers)"),
    ("ragged", _with(x=[[[1, 0, 0, 0], [0, 1, 0]]]), "x[0]: ragged nested lists"),
    (
        "inner-size",
        _with(w_k=[[1, 0], [0, 1], [0, 0]]),
        "w_k: expected 4 rows (C from x) but found 3",
    ),
    (
        "string",
        _with(w_q=[[0.5, "a"], [1, 1], [0, 0], [0, 0]]),
        "w_q[0][1]: expected a number but found a string ('a')",
    ),
    (
        "boolean",
        _with(w_v=[[True, 0], [0, 1], [0, 0], [0, 0]]),
        "w_v[0][0]: expected a number but found a boolean",
    ),
    ("heads", _with(num_heads=3), "num_heads: expected a divisor of C=4 but found 3"),
    ("not-object", [1, 2], "expected an object with keys x, w_q, w_k, w_v, found a list"),
    ("tokens", _with(tokens=[["a"]]), "tokens: expected 2 rows (B from x)"),
]


def _run_bad(path: Path, *extra: str):
    result = invoke("--lang", "en", "trace", "--input", str(path), *extra)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    return lines[0]


@pytest.mark.parametrize(("data", "message"), [pytest.param(d, m, id=i) for i, d, m in BAD])
def test_bad_json_field(tmp_path, data, message) -> None:
    assert message in _run_bad(_write(tmp_path, data))


def test_missing_file(tmp_path) -> None:
    assert "file not found" in _run_bad(tmp_path / "nope.json")


def test_directory(tmp_path) -> None:
    assert "is a directory" in _run_bad(tmp_path)


def test_non_utf8(tmp_path) -> None:
    line = _run_bad(_write(tmp_path, b'{"x": "\xff\xfe"}'))
    assert "expected UTF-8 text" in line and "0xff" in line


def test_malformed_json(tmp_path) -> None:
    assert "is not valid JSON" in _run_bad(_write(tmp_path, '{"x": [1, 2'))


def test_malformed_toml(tmp_path) -> None:
    assert "is not valid TOML" in _run_bad(_write(tmp_path, "x = [1, 2", "in.toml"))


def test_wrong_extension(tmp_path) -> None:
    assert "expected a .json or .toml file" in _run_bad(_write(tmp_path, "{}", "in.txt"))


@pytest.mark.parametrize(("literal", "shown"), [("NaN", "nan"), ("Infinity", "inf")])
def test_nan_and_infinity(tmp_path, literal, shown) -> None:
    text = json.dumps(LESSON_INPUT).replace("1.1", literal, 1)
    assert f"w_k[0][0]: expected a finite number but found {shown}" in _run_bad(
        _write(tmp_path, text)
    )


def test_toml_nan(tmp_path) -> None:
    text = "x = [[[nan, 0.0]]]\nw_q = [[1.0], [1.0]]\nw_k = [[1.0], [1.0]]\nw_v = [[1.0], [1.0]]\n"
    assert "x[0][0][0]: expected a finite number but found nan" in _run_bad(
        _write(tmp_path, text, "in.toml")
    )


def test_display_limit_suggests_json(tmp_path) -> None:
    data = _with(x=[[[0.1, 0.2, 0.3, 0.4]] * 20])
    data.pop("tokens", None)
    path = _write(tmp_path, data)
    line = _run_bad(path)
    assert "T=20 exceeds the display limit T <= 16" in line and "--format json" in line
    ok = invoke("trace", "--input", str(path), "--format", "json")
    assert ok.exit_code == 0


def test_too_many_numbers(tmp_path) -> None:
    row = "[" + ",".join(["0.5"] * 1000) + "]"
    text = '{"x": [[' + ",".join([row] * 1001) + ']], "w_q": [[1]], "w_k": [[1]], "w_v": [[1]]}'
    assert "more than 1,000,000 numbers" in _run_bad(_write(tmp_path, text), "--format", "json")


def test_bad_stage_and_prompt() -> None:
    result = invoke("trace", "--stage", "logits")
    assert result.exit_code == 2
    assert "--stage: expected one of x, q, k, v" in result.stderr
    result = invoke("--lang", "en", "trace", "--prompt", "C")
    assert (
        result.exit_code == 2 and "--prompt: expected one of A, B or all, got 'C'" in result.stderr
    )


def test_bad_lang() -> None:
    result = invoke("--lang", "fr", "trace")
    assert result.exit_code == 2
    assert "--lang must be one of zh, en, got 'fr'" in result.stderr


# --- random valid files give the library's numbers -------------------------------------------

finite = st.floats(-3, 3, allow_nan=False, allow_infinity=False, width=32)


@st.composite
def lab_inputs(draw):
    B, T = draw(st.integers(1, 3)), draw(st.integers(1, 5))
    heads = draw(st.sampled_from([None, 1, 2]))
    C = draw(st.sampled_from([2, 4]))
    d = C if heads else draw(st.integers(1, 3))

    def mat(*shape):
        if len(shape) == 1:
            return draw(st.lists(finite, min_size=shape[0], max_size=shape[0]))
        return [mat(*shape[1:]) for _ in range(shape[0])]

    data = {"x": mat(B, T, C), "w_q": mat(C, d), "w_k": mat(C, d), "w_v": mat(C, d)}
    if heads:
        data["num_heads"] = heads
        data["w_o"] = mat(C, C)
    return data


@given(lab_inputs(), st.sampled_from(["json", "toml"]))
def test_random_files_match_the_library(tmp_path_factory, data, kind) -> None:
    folder = tmp_path_factory.mktemp("rand")
    if kind == "json":
        path = _write(folder, data)
    else:
        lines = [f"{k} = {json.dumps(v)}" for k, v in data.items()]
        path = _write(folder, "\n".join(lines), "in.toml")
    result = invoke("trace", "--input", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    t = {
        k: torch.tensor(v, dtype=torch.float64) for k, v in data.items() if k.startswith(("x", "w"))
    }
    if "num_heads" in data:
        want = multi_head_stages(t["x"], t["w_q"], t["w_k"], t["w_v"], data["num_heads"], t["w_o"])
        got = [doc["stages"][p]["projected"] for p in doc["stages"]]
        heads_w = [[h["weights"] for h in doc["stages"][p]["heads"]] for p in doc["stages"]]
        assert torch.allclose(torch.tensor(heads_w, dtype=torch.float64), want.weights, atol=1e-12)
    else:
        want = attention_stages(t["x"], t["w_q"], t["w_k"], t["w_v"])
        got = [doc["stages"][p]["output"] for p in doc["stages"]]
        masked = [doc["stages"][p]["masked_scores"] for p in doc["stages"]]
        flat = [v for m in masked for row in m for v in row]
        assert flat.count("-inf") == want.x.size(0) * want.x.size(1) * (want.x.size(1) - 1) // 2
    assert torch.allclose(torch.tensor(got, dtype=torch.float64), want.output, atol=1e-12)
    assert not any(math.isnan(v) for v in torch.tensor(got).flatten().tolist())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuch"], "attnlab: error: No such command 'nosuch'."),
        (["trace", "--format", "xml"], "attnlab: error: Invalid value for '--format'"),
        (["cost", "--tokens", "0"], "attnlab: error: Invalid value for '--tokens'"),
    ],
)
def test_console_script_usage_errors_are_one_line(args, message) -> None:
    proc = process_support.attnlab(*args, text=True)  # main(), not CliRunner: its error lines
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), proc.stderr


@pytest.mark.process
def test_the_console_script_exits_2_with_one_line_in_its_own_process() -> None:
    """Once for real: the interpreter's exit code and stderr of ``python -m attnlab``."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "attnlab", "nosuch"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stdout == "" and proc.stderr.startswith("attnlab: error: No such command 'nosuch'.")
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_lesson_trace_reads_the_one_numbers_source(fmt: str, monkeypatch) -> None:
    """`trace` of the lesson shows lesson/numbers' stages; it never runs the pipeline again."""
    from attnlab.inputs.model import LabInput
    from attnlab.lesson import numbers

    def refuse(self):  # pragma: no cover - reaching it is the failure
        raise AssertionError("the lesson's stages were computed a second time")

    monkeypatch.setattr(LabInput, "stages", refuse)
    result = runner.invoke(app, ["--lang", "en", "trace", "--format", fmt, "--stage", "weights"])
    assert result.exit_code == 0, result.output
    final = numbers.get("weights.B.final[0]")  # 0.4256
    if fmt == "json":
        weights = json.loads(result.output)["stages"]["B"]["weights"]
        assert weights[-1][0] == final
    else:
        assert f"{final:.4f}" in result.output


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_trace_text_keeps_the_brackets_of_its_formulas(lang: str) -> None:
    """rich must not read ``P[t,j]`` in the explanation as markup."""
    result = runner.invoke(app, ["--lang", lang, "trace", "--stage", "output", "--prompt", "A"])
    assert result.exit_code == 0, result.output
    assert "P[t,j]·v_j" in result.output


def test_trace_shows_the_causal_mask_as_ones_and_zeros() -> None:
    result = runner.invoke(app, ["--lang", "en", "trace", "--stage", "causal_mask"])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("│ t=")]
    cells = [[c.strip() for c in row.strip("│ ").split("│")][1:] for row in rows]
    assert cells == [["1", "0"], ["1", "1"]], cells
