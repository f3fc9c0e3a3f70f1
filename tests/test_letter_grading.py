"""Issue 22's "right to the letter" items about the grader, each failing on the grader before
it: exact whole-number answers are right, a trailing letter is refused wherever it stands, and
a wrong answer names only the mistakes that give exactly the whole numbers typed."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.grading.answers import AnswerError, parse_numbers
from attnlab.grading.grade import Address, grade
from attnlab.lesson import numbers

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _check(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(app, ["--lang", "en", "check", *args])
    return done.exit_code, done.output


@pytest.mark.parametrize(
    ("stage", "row", "values"),
    [("weights", 0, "1 0"), ("logits", 0, "0 1 2 -1 0"), ("weights", 0, "1.0 0.0")],
)
def test_an_exact_whole_number_answer_is_right(stage: str, row: int, values: str) -> None:
    assert numbers.tensor(stage)[0, row].tolist() == [float(v) for v in values.split()]
    code, out = _check("--stage", stage, "--row", str(row), "--values", values)
    assert code == 0, out


def test_a_whole_number_next_to_a_fraction_keeps_the_coarse_rule() -> None:
    """The rule is per number: an integer typed for a right value that is not that integer
    is still read with its rounding (1 for 0.5987 is ±0.5: too coarse, not right)."""
    v = grade(parse_numbers("1 0"), [0.5987, 0.4013], at=Address("weights", 0, row=1))
    assert not v.correct and v.tolerance[0] == pytest.approx(0.5, abs=1e-6)


@pytest.mark.parametrize("text", ["1.0 0.0x", "1.0x 0.0", "1 0 倍", "0.6, 0.4x"])
def test_a_trailing_letter_is_refused_wherever_it_stands(text: str) -> None:
    with pytest.raises(AnswerError):
        parse_numbers(text)
    code, out = _check("--stage", "weights", "--row", "0", "--values", text)
    assert code == 2 and "Traceback" not in out


@pytest.mark.parametrize("text", ["4x", "4 倍", "4 times", "4×"])
def test_a_ratio_keeps_its_times_sign(text: str) -> None:
    assert [t.value for t in parse_numbers(text)] == [4.0]


def test_only_the_mistakes_that_give_the_numbers_are_named() -> None:
    code, out = _check("--stage", "masked_scores", "--row", "0", "--values", "0.4 0", "--json")
    assert code == 1
    (entry,) = json.loads(out)
    assert [m["name"] for m in entry["mistakes"]] == ["mask_zero_fill"], entry


@pytest.mark.parametrize(
    ("exercise", "text", "likely", "others"),
    [
        ("4c", "0.20", "scaled_scores[0,0,1]", set()),
        ("4c", "0.80", "scaled_scores[0,1,0]", set()),
        ("4d", "0.00", "scaled_scores[1,0,1]", set()),
    ],
)
def test_a_misread_index_names_the_likeliest_place_first(
    exercise: str, text: str, likely: str, others: set[str]
) -> None:
    """A number from another place of the scaled scores is named by its index; when it sits in
    several places, the one in the same prompt and row comes first and the rest are named too."""
    from attnlab.grading import reasons
    from attnlab.grading.answers import check_answer, submit
    from attnlab.grading.reasons import present

    verdict = check_answer(exercise, text)
    assert verdict.misread is not None and verdict.misread.label() == likely
    assert {a.label() for a in verdict.also} == others
    line = reasons.explain(verdict, "en") or ""
    assert all(line.index(likely) < line.index(o) for o in others)
    stored = present(exercise, text, submit(exercise, text).data(), "zh")
    assert likely in stored and all(o in stored for o in others)


def test_the_other_prompts_number_is_named_as_a_slip() -> None:
    """16e asks for B's p(study); A's typed there is the prompts swapped, not only "wrong"."""
    from attnlab.grading.answers import check_answer, submit
    from attnlab.grading.reasons import present

    a_value = numbers.get("experiment.probs[0,3]")
    text = f"{a_value:.3f}"
    assert "prompt_swapped" in check_answer("16e", text).slips
    assert "swapped" in present("16e", text, submit("16e", text).data(), "en")
    assert check_answer("16e", "0.123").slips == ()


def test_one_decimal_is_singular() -> None:
    from attnlab.grading import reasons

    verdict = grade(parse_numbers("1 0"), [0.8, 0.4], at=Address("scaled_scores", 0, row=1))
    assert verdict.kind == "coarse" and verdict.needed == 1
    assert "give at least 1 decimal (" in (reasons.explain(verdict, "en") or "")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_one_row_for_a_whole_table_asks_which_row(lang: str) -> None:
    """``check --stage logits`` without --row said "expected 10 numbers"; one row's worth of
    numbers now asks for --row, and all of them are graded as the whole table."""
    done = CliRunner().invoke(app, ["--lang", lang, "check", "--stage", "logits",
                                    "--values", "0 1 2 -1 0"])  # fmt: skip
    assert done.exit_code == 2 and "--row 0..1" in done.output and "Traceback" not in done.output
    whole = " ".join(f"{v:.3f}" for v in numbers.tensor("logits")[0].flatten().tolist())
    code, out = _check("--stage", "logits", "--values", whole)
    assert code == 0, out
