"""``attnlab check``: hand-computed numbers graded, wrong ones traced to a catalogue mistake."""

from __future__ import annotations

import json
from pathlib import Path

import published
import pytest
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.core.steps import lesson_input
from attnlab.grading.answers import parse_numbers
from attnlab.grading.handcheck import Answer, check_answer, lab_input
from attnlab.mistakes import catalogue, diagnosis

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def invoke(*args: str):
    return runner.invoke(app, list(args))


def test_right_answer_exits_0() -> None:
    result = invoke(
        "--lang",
        "en",
        "check",
        "--stage",
        "weights",
        "--prompt",
        "A",
        "--row",
        "1",
        "--values",
        "0.599 0.401",
    )
    assert result.exit_code == 0, result.output
    assert "weights (prompt A, row 1): ✓ Right: [0.599, 0.401]" in result.output


def test_wrong_answer_names_the_mistake_in_both_languages() -> None:
    unscaled = diagnosis.mistake_stages("no_scale")["weights"][0, 1]  # A's final row, no ÷√d_k
    values = " ".join(f"{v:.3f}" for v in unscaled.tolist())
    args = ["check", "--stage", "weights", "--prompt", "A", "--row", "1", "--values", values]
    zh = invoke(*args)
    en = invoke("--lang", "en", *args)
    assert zh.exit_code == en.exit_code == 1
    assert "✗ 还不对 · 这正是这个错误会算出的数：没有缩放（重读第 8 节）" in zh.output
    assert "✗ Not yet · That is the number this mistake gives: no scaling (reread section 8)" in (
        en.output
    )
    assert f"the right numbers: {published.row('weights.A.final').text}" in en.output


@pytest.mark.parametrize(
    "m", [m for m in catalogue.CATALOGUE if not m.multihead_only], ids=lambda m: m.name
)
def test_every_single_head_mistake_is_named_from_its_own_weights_or_output(
    m: catalogue.Mistake,
) -> None:
    inp = lesson_input()
    wrong, right = diagnosis.mistake_stages(m, inp), diagnosis.correct_stages(inp)
    for stage in ("weights", "output", "logits", "raw_scores", "x"):
        if wrong[stage].shape != right[stage].shape:
            continue
        for b, prompt in enumerate("AB"):
            for row in range(2):
                got = wrong[stage][b, row]
                if diagnosis.values_match(got, right[stage][b, row], 1e-3) or got.isnan().any():
                    continue  # NaN is never an answer a learner can type
                typed = tuple(parse_numbers(" ".join(f"{v:.4f}" for v in got.tolist()), "", True))
                verdict = check_answer(Answer(stage, prompt, typed, row), inp)
                if m in verdict.mistakes:
                    return
    pytest.fail(f"{m.name}: no stage row of its own numbers was traced back to it")


def test_answer_files_toml_and_json(tmp_path: Path) -> None:
    toml = tmp_path / "a.toml"
    toml.write_text(
        '[[answer]]\nstage = "raw_scores"\nprompt = "A"\nvalues = "0.566 0.283 1.131 0.566"\n'
        '[[answer]]\nstage = "output"\nprompt = "B"\nrow = 1\nvalues = [0.426, 0.574]\n',
        encoding="utf-8",
    )
    result = invoke("--lang", "en", "check", str(toml))
    assert result.exit_code == 1, result.output
    assert "raw_scores (prompt A): ✓ Right" in result.output
    assert "possibly a dropped minus sign" in result.output  # and the weights row, not the LM head
    js = tmp_path / "a.json"
    js.write_text(
        json.dumps(
            {"answer": [{"stage": "masked_scores", "prompt": "A", "row": 0, "values": "0.40 -inf"}]}
        ),
        encoding="utf-8",
    )
    result = invoke("check", str(js), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["correct"] is True


def test_input_file_is_used(tmp_path: Path) -> None:
    path = tmp_path / "in.json"
    path.write_text(
        json.dumps(
            {
                "x": [[[1, 0], [0, 1]]],
                "w_q": [[1, 0], [0, 1]],
                "w_k": [[1, 0], [0, 1]],
                "w_v": [[1, 0], [0, 1]],
            }
        )
    )
    stages = diagnosis.correct_stages(lab_input(path))
    want = " ".join(f"{v:.4f}" for v in stages["weights"][0, 1].tolist())
    result = invoke(
        "check", "--input", str(path), "--stage", "weights", "--row", "1", "--values", want
    )
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stage", "wts", "--values", "1 2"], "stage: expected one of x, q, k"),
        (
            ["--stage", "weights", "--values", "abc"],
            "--values: expected a number like 0.599 (or -inf), got 'abc'",
        ),
        (["--stage", "weights", "--row", "5", "--values", "1 2"], "row: expected 0..1"),
        (
            ["--stage", "weights", "--prompt", "Z", "--values", "1 2"],
            "prompt: expected one of A, B",
        ),
        (["--values", "1 2"], "expected --stage and --values"),
        (["missing.toml"], "answer file: file not found: missing.toml"),
    ],
)
def test_bad_input_one_line_exit_2(args: list[str], message: str) -> None:
    result = invoke("--lang", "en", "check", *args)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", "↻ Answer again · Needs 2 numbers, got 3"),
        ("zh", "↻ 请再答一次 · 需要 2 个数，你给了 3 个"),
    ],
)
def test_a_wrong_count_is_the_count_verdict_exit_1(lang: str, words: str) -> None:
    """As on the web and in the quiz: not as many numbers as asked is a wrong answer, not an
    error, in the answer service's words."""
    args = ["--lang", lang, "check", "--stage", "weights", "--row", "1", "--values", "1 2 3"]
    result = invoke(*args)
    assert result.exit_code == 1, result.output
    assert words in result.output and result.stderr == ""
    (entry,) = json.loads(invoke(*args, "--json").output)
    assert (entry["kind"], entry["correct"]) == ("count", False)


def test_values_accept_learner_spellings() -> None:
    def texts(text: str) -> tuple[str, ...]:
        return tuple(n.text for n in parse_numbers(text, "--values", infinity=True))

    assert texts("[0.6, 0.4]") == ("0.6", "0.4")
    assert texts("1; −∞") == ("1", "-inf")


def test_multi_head_input_and_a_multi_head_mistake(tmp_path: Path) -> None:
    inp = diagnosis.multihead_example()
    path = tmp_path / "mh.json"
    path.write_text(json.dumps({"x": inp.x.tolist(), "w_q": inp.w_q.tolist(),
                                "w_k": inp.w_k.tolist(), "w_v": inp.w_v.tolist(),
                                "num_heads": 2, "w_o": inp.w_o.tolist()}))  # fmt: skip
    loaded = lab_input(path)
    head2 = diagnosis.correct_stages(loaded)["weights"][1, 1, 1]  # prompt B, head 2, row 1
    typed = tuple(parse_numbers(" ".join(f"{v:.4f}" for v in head2)))
    verdict = check_answer(Answer("weights", "B", typed, 1, 2), loaded)
    assert verdict.correct
    result = invoke("check", "--input", str(path), "--stage", "weights", "--prompt", "B",
                    "--row", "1", "--head", "2", "--values", "2 2", "--json")  # fmt: skip
    (entry,) = json.loads(result.output)
    assert entry["head"] == 2 and entry["prompt"] == "B" and not entry["correct"]
    assert entry["expected"] == pytest.approx(head2.tolist())
    no_wo = diagnosis.mistake_stages("no_output_projection", loaded)["output"][1, 1]
    typed = tuple(parse_numbers(" ".join(f"{v:.4f}" for v in no_wo)))
    verdict = check_answer(Answer("output", "B", typed, 1), loaded)
    assert not verdict.correct
    assert [m.name for m in verdict.mistakes] == ["no_output_projection"]
