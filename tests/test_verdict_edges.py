"""Verdicts at the edges (issue 32): a verdict is a claim the grader computed. An answer with
fewer decimals than asked is "right as far as it goes" only when no catalogued mistake or nearby
number (0, 1, the value before the step, the scaled value, the other prompt's) gives it too; a
number that is the value exactly is right at any decimals; each exercise asks for enough
decimals to tell its answer from every such number; answer files keep the decimals written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.content import knowledge
from attnlab.grading import keys, practice
from attnlab.grading.answers import submit
from attnlab.grading.grade import confusable
from attnlab.grading.reasons import present


@pytest.mark.parametrize(
    ("exercise", "text", "kind", "says_en", "says_zh"),
    [
        ("11c", "0", "wrong", "filled with −∞", "填 −∞"),
        ("5c", "1", "wrong", "that is 1", "这是 1"),
        ("5d", "1 1", "wrong", "that is 1", "这是 1"),
        ("8d", "0", "wrong", "that is 0", "这是 0"),
        ("4c", "0.4", "right", "Right", "正确"),
        ("16f", "0.876", "wrong", "the loss before the update", "更新之前的损失"),
        ("8c", "0.599 0.401", "wrong", "the scaled weights", "缩放之后的权重"),
        ("17c", "2e7", "imprecise", "write the whole number out", "完整的整数"),
    ],
)
def test_the_listed_answers_get_their_true_verdict(
    exercise: str, text: str, kind: str, says_en: str, says_zh: str
) -> None:
    data = submit(exercise, text).data()
    assert data["kind"] == kind, data
    assert says_en in present(exercise, text, data, "en")
    assert says_zh in present(exercise, text, data, "zh")
    assert "0 decimals" not in present(exercise, text, data, "en")


@pytest.mark.parametrize("exercise", knowledge.exercise_ids())
def test_each_exercise_asks_for_decimals_that_tell_its_answer_from_every_nearby_number(
    exercise: str,
) -> None:
    ex = knowledge.exercise(exercise, "en")
    declared = [c.key for c in ex.confusables]
    assert ex.decimals >= keys.separating_decimals(ex.key, declared, ex.decimals), ex
    key = keys.exercise_key(exercise)
    shown = [round(v, ex.decimals) for v in key.expected]
    # The right answer at the decimals asked is right, and nothing else the grader knows fits.
    assert not confusable(shown, [0.5 * 10.0**-ex.decimals] * len(shown), key.others) or (
        ex.decimals == 0
    )
    assert submit(exercise, " ".join(f"{v:.{max(ex.decimals, 0)}f}" for v in key.expected)
                  ).data()["kind"] == "right"  # fmt: skip


def test_the_loss_after_the_step_is_asked_to_four_decimals() -> None:
    assert knowledge.exercise("16f").decimals == 4  # 0.876 is also the loss before the step


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_an_answer_file_keeps_the_decimals_written(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"answers{suffix}"
    # 0.4260 claims four decimals: B's 0.42556 (0.4255 carried) to four is wrong; read as
    # 0.426 it would be right.
    if suffix == ".toml":
        path.write_text('[[answer]]\nstage = "weights"\nprompt = "B"\nrow = 1\n'
                        "values = [0.4260, 0.5740]\n", encoding="utf-8")  # fmt: skip
    else:
        path.write_text('{"answer": [{"stage": "weights", "prompt": "B", "row": 1,'
                        ' "values": [0.4260, 0.5740]}]}', encoding="utf-8")  # fmt: skip
    result = CliRunner().invoke(app, ["check", str(path), "--json", "--lang", "en"])
    (entry,) = json.loads(result.output)
    assert entry["kind"] == "wrong" and entry["tolerance"][0] < 1e-4, entry
    assert result.exit_code == 1


def test_practice_grades_to_the_decimals_it_asks_for() -> None:
    dealt = practice.deal(4, seed=1)
    whole = " ".join(str(round(v)) for v in dealt.expected())
    exact = all(abs(v - round(v)) < 1e-9 for v in dealt.expected())
    verdict = dealt.grade(whole)
    assert verdict.correct is exact, (whole, dealt.expected(), verdict.kind)
    assert dealt.grade(practice.answer_text(dealt.expected())).correct


def test_a_row_with_no_prompts_never_names_prompts_swapped() -> None:
    """11d's score row [0.2, 0.9] is a demo row, not prompt A's or B's: its index 0 is no
    prompt, so no answer to it is called the other prompt's."""
    assert keys.exercise_key("11d").swapped == ()
    assert keys.exercise_key("16f").swapped  # a loss of prompt A: B's is the swap
    for text in ("0.668", "1", "0.332", "0"):
        assert "prompt_swapped" not in submit("11d", text).data()["slips"]


@pytest.mark.parametrize(("exercise", "text"), [("5c", "1,051"), ("9c", "1,599")])
def test_a_decimal_comma_is_asked_again_with_both_readings(exercise: str, text: str) -> None:
    got = submit(exercise, text)
    assert got.graded is None  # asked again, never a try
    thousands, decimal = text.replace(",", ""), text.replace(",", ".")
    for lang in ("zh", "en"):
        line = present(exercise, text, got.data(), lang)
        assert thousands in line and decimal in line, line


def test_a_thousands_separator_that_is_right_stays_right() -> None:
    assert submit("17c", "16,000,000").data()["kind"] == "right"
    assert submit("16d", "1,000").data()["kind"] == "wrong"  # neither reading is right


@pytest.mark.parametrize("section", [s for s in practice.SECTIONS if s != 9])
def test_a_deal_without_token_ids_never_names_token_ids_fed_as_x(section: int) -> None:
    """A practice deal is vectors alone: no answer to it, not even the numbers the IDs read as
    each row's largest entry would give, is called "token IDs fed as X"."""
    from dataclasses import replace

    from attnlab.mistakes import diagnosis

    for seed in range(8):
        dealt = practice.deal(section, seed=seed)
        assert isinstance(dealt, practice.Practice)
        ids = dealt.inp.x.argmax(-1)  # what the grader once invented
        guessed = replace(dealt.inp, token_ids=ids)
        wrong = diagnosis.mistake_stages("token_ids_as_x", guessed)[dealt.stage][0, dealt.row]
        verdict = dealt.grade(practice.answer_text(wrong.flatten().tolist()))
        assert "token_ids_as_x" not in [m.name for m in verdict.mistakes], (section, seed)
        assert dealt.grade(practice.answer_text(dealt.expected())).correct


@pytest.mark.parametrize(
    ("stage", "prompt", "values"),
    [
        ("weights", "B", "0.425 0.575"),  # 1.105 / 2.597, as the lesson prints them
        ("output", "B", "-0.425 0.575"),  # those weights carried on into weights @ V
        ("scaled_scores", "A", "0.802 0.401"),  # 1.131 / 1.41
        ("masked_scores", "A", "0.802 0.401"),  # and carried on into the mask
        ("scaled_scores", "A", "0.800 0.400"),  # 1.131 / 1.414
    ],
)
def test_carried_work_is_right_at_every_later_stage(stage: str, prompt: str, values: str) -> None:
    result = CliRunner().invoke(app, ["check", "--stage", stage, "--prompt", prompt, "--row", "1",
                                      "--values", values, "--json"])  # fmt: skip
    (entry,) = json.loads(result.output)
    assert entry["kind"] == "right", entry
    assert result.exit_code == 0


def test_carried_work_is_no_licence_for_a_mistake() -> None:
    """Carrying rounded work widens nothing a mistake gives: B's unscaled weights stay wrong."""
    result = CliRunner().invoke(app, ["check", "--stage", "weights", "--prompt", "B", "--row",
                                      "1", "--values", "0.426 0.574", "--json"])  # fmt: skip
    (right,) = json.loads(result.output)
    assert right["kind"] == "right"
    result = CliRunner().invoke(app, ["check", "--stage", "output", "--prompt", "B", "--row",
                                      "1", "--values", "-0.423 0.577", "--json"])  # fmt: skip
    (entry,) = json.loads(result.output)
    assert entry["kind"] == "wrong", entry
