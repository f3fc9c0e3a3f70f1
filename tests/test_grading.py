"""The one grader: ``check``, the quiz and the web give the same typed answer the same verdict.

Exercise 5b asks for ``weights[1,1,:]``, the numbers ``check --stage weights --prompt B --row 1``
grades; each answer below is typed into all three front ends and must fare the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from web_support import post_form

from attnlab.cli.main import app
from attnlab.content import knowledge
from attnlab.grading import answers, keys
from attnlab.grading import grade as grading
from attnlab.grading.answers import parse_numbers, read_number
from attnlab.grading.grade import Address
from attnlab.mistakes import diagnosis
from attnlab.progress.store import ProgressStore
from attnlab.text.errors import InputError

pytestmark = pytest.mark.usefixtures("one_torch_thread")
runner = CliRunner()
EXERCISE = "4c"  # scaled_scores[0,0,0]: a stage number, so the catalogue applies


def _no_scale_row() -> str:
    return " ".join(f"{v:.3f}" for v in diagnosis.mistake_stages("no_scale")["weights"][1, 1])


def _no_scale_value() -> str:
    return f"{diagnosis.mistake_stages('no_scale')['scaled_scores'][0, 0, 0]:.3f}"


def _check(text: str) -> dict[str, Any]:
    args = ["check", "--stage", "weights", "--prompt", "B", "--row", "1", "--values", text]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code in (0, 1), result.output
    (entry,) = json.loads(result.output)
    return entry


def _quiz_attempt(tmp_path: Path, text: str) -> dict[str, Any]:
    second = knowledge.exercise("4d").expected
    lines = ["", text, "0.40", f"{second:.2f}", "", "u", "u"]  # "": skip the practice
    argv = ["--lang", "en", "quiz", "--section", "4", "--data-dir", str(tmp_path)]
    result = runner.invoke(app, argv, input="".join(f"{line}\n" for line in lines))
    assert result.exit_code == 0, result.output
    with ProgressStore.open(tmp_path) as store:
        return store.attempts(EXERCISE)[0]


def _web_attempt(tmp_path: Path, web_client_factory: Any, text: str) -> dict[str, Any]:
    client = web_client_factory(tmp_path)
    r = post_form(client, f"/exercise/{EXERCISE}?lang=en", answer=text)
    assert r.status_code == 303, r.text
    with ProgressStore.open(tmp_path) as store:
        return store.attempts(EXERCISE)[0]


@pytest.mark.parametrize(
    ("text", "correct"),
    [
        ("0.40", True),
        ("[0.400]", True),
        ("0.4000", True),
        ("0.123", False),
        (None, False),  # the no_scale mistake's number, to three decimals
    ],
)
def test_quiz_web_and_the_grader_agree(tmp_path: Path, web_client_factory, text, correct) -> None:
    """No exercise asks for a whole row any more (the page prints every row above them), so
    ``attnlab check`` is compared on a row below; the quiz and the web agree with the grader."""
    text = _no_scale_value() if text is None else text
    graded = answers.check_answer(EXERCISE, text)
    quizzed = _quiz_attempt(tmp_path / "quiz", text)
    posted = _web_attempt(tmp_path / "web", web_client_factory, text)
    assert graded.correct is quizzed["correct"] is posted["correct"] is correct
    assert quizzed["diagnosis"] == posted["diagnosis"]
    kept = json.loads(posted["diagnosis"])
    assert kept["mistakes"] == [m.name for m in graded.mistakes], (graded, posted)
    assert kept["kind"] == graded.kind
    assert ("no_scale" in kept["mistakes"]) is (text == _no_scale_value())


@pytest.mark.parametrize(
    ("text", "correct"),
    [("0.426 0.574", True), ("0.4256 0.574", True), ("0.426，0.574", True), (None, False)],
)
def test_check_grades_a_row_as_the_grader_does(text, correct) -> None:
    text = _no_scale_row() if text is None else text
    checked = _check(text)
    assert checked["correct"] is correct
    assert ("no_scale" in [m["name"] for m in checked["mistakes"]]) is (text == _no_scale_row())


def test_tolerance_follows_each_numbers_rounding() -> None:
    assert grading.tolerance(read_number("0.599"), 0.5987) == pytest.approx(0.0005, abs=2e-9)
    assert grading.tolerance(read_number("0.599"), 0.599) == pytest.approx(0.0, abs=2e-9)  # exact
    assert grading.tolerance(read_number("0.4"), 0.4000000059604645) < 1e-8  # float32 0.4
    assert grading.tolerance(read_number("1"), 1.2) == pytest.approx(0.5, abs=2e-9)
    assert grading.tolerance(read_number("1"), 1.0) == pytest.approx(0.0, abs=2e-9)  # exact
    v = grading.grade(parse_numbers("0.599 0.4"), [0.5987, 0.4013])
    assert (v.kind, v.correct) == ("right", True)
    assert v.tolerance == pytest.approx([0.0005, 0.05], abs=2e-9)
    assert grading.grade(parse_numbers("0.599 0.4"), [0.5987, 0.46]).kind == "wrong"


def test_an_exercise_asks_for_decimals_check_does_not() -> None:
    assert answers.check_answer("8c", "0.64 0.36").kind == "imprecise"
    assert _check("0.43 0.57")["kind"] == "right"
    assert grading.grade(parse_numbers("0.8"), [0.8], decimals=3).kind == "right"


def test_infinity_only_where_a_masked_score_is_the_answer() -> None:
    masked = [
        "check",
        "--stage",
        "masked_scores",
        "--prompt",
        "A",
        "--row",
        "0",
        "--json",
        "--values",
    ]
    (entry,) = json.loads(runner.invoke(app, [*masked, "0.40 −∞"]).output)  # 0.4 is too coarse
    assert entry["correct"] and entry["given"] == [0.4, "-inf"] and entry["head"] == 1
    bad = ["--lang", "en", "check", "--stage", "weights", "--row", "0", "--values", "1 -inf"]
    result = runner.invoke(app, bad)
    assert result.exit_code == 2
    assert "expected a finite number, got '-inf' (only masked_scores holds -inf)" in result.output
    with pytest.raises(InputError, match="expected a finite number, got '-inf'"):
        answers.check_answer("8c", "0.638 −∞")


def test_verdict_json_numbers_heads_from_1(tmp_path: Path) -> None:
    inp = diagnosis.multihead_example()
    path = tmp_path / "mh.json"
    path.write_text(json.dumps({"x": inp.x.tolist(), "w_q": inp.w_q.tolist(),
                                "w_k": inp.w_k.tolist(), "w_v": inp.w_v.tolist(),
                                "num_heads": 2, "w_o": inp.w_o.tolist()}))  # fmt: skip
    args = ["--lang", "en", "check", "--input", str(path), "--stage", "weights", "--prompt", "1",
            "--row", "1", "--head", "2", "--values", "2 2"]  # fmt: skip
    result = runner.invoke(app, args)
    assert "weights (prompt B, head 2, row 1): ✗ Not yet" in result.output
    (entry,) = json.loads(runner.invoke(app, [*args, "--json"]).output)
    assert (entry["prompt"], entry["head"], entry["row"], entry["kind"]) == ("B", 2, 1, "wrong")
    unscaled = diagnosis.mistake_stages("no_scale", inp)["weights"][1, 1, 1]  # B, head 2, row 1
    args[-1] = " ".join(f"{v:.4f}" for v in unscaled.tolist())
    (entry,) = json.loads(runner.invoke(app, [*args, "--json"]).output)
    assert "no_scale" in [m["name"] for m in entry["mistakes"]], entry


def test_exercise_keys_are_addressed_like_check() -> None:
    assert keys.address_of("weights[1,1,0]") == Address("weights", 1, row=1, column=0)
    assert keys.address_of("weights.A.final") == Address("weights", 0, row=1)
    assert keys.address_of("output[1,1,:]") == Address("output", 1, row=1)
    assert keys.address_of("cost.elements_long") is None
    assert Address("weights", 1, row=1, column=0).label() == "weights[1,1,0]"


def test_parser_reads_both_front_ends_spellings() -> None:
    def values(text: str) -> list[float]:
        return [n.value for n in parse_numbers(text, infinity=True)]

    assert values("4,000,000") == [4_000_000.0]
    assert values("[[1, 2], [3, 4]]") == [1.0, 2.0, 3.0, 4.0]
    assert values("1, -inf; 0.8 0.4") == [1.0, float("-inf"), 0.8, 0.4]
    assert values("−0.426、0.574") == [-0.426, 0.574]
    assert [n.decimals for n in parse_numbers("0.599 4 4e6")] == [3, 0, -6]
    with pytest.raises(InputError, match=r"^--values: expected a number like 0\.599, got '1_0'$"):
        parse_numbers("1_0", "--values")
