"""Help after a wrong try (issue 32): the first wrong try earns a hint for the stage (never the
number), the second the worked step with the learner's numbers beside the right ones; in the
web exercises and practice, the quiz, the notebook and ``attnlab practice`` alike. A dealt
exercise whose solution was shown never counts towards mastery."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.content import knowledge
from attnlab.core.steps import lesson_input
from attnlab.grading import ladder, practice
from attnlab.grading.answers import submit, verdict_data
from attnlab.grading.keys import Address
from attnlab.mistakes import catalogue
from attnlab.text import fmt

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _typed(values: list[float]) -> str:
    return " ".join(f"{v:.2f}" for v in values)


@pytest.mark.parametrize("exercise", knowledge.exercise_ids())
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_exercise_has_a_hint_without_its_answer_then_a_worked_step(
    exercise: str, lang: str
) -> None:
    ex = knowledge.exercise(exercise, lang)
    wrong = {"kind": "wrong", "mistakes": [], "slips": []}
    hint = ladder.help_line(exercise, "12345", wrong, 1, lang)
    assert hint is not None and hint.startswith(("提示：", "Hint: "))
    shown = fmt.answer(ex.expected, ex.decimals)
    assert shown not in hint  # the first rung says what to compute, not the number
    step = ladder.help_line(exercise, "12345", wrong, 2, lang)
    assert step is not None and "12345" in step and shown in step  # theirs beside the right one
    assert ladder.help_line(exercise, "1", {"kind": "right"}, 2, lang) is None
    assert ladder.help_line(exercise, "1", {"kind": "coarse"}, 2, lang) is None  # no try


def test_the_worked_step_says_where_a_named_mistake_first_goes_wrong() -> None:
    data = submit("4c", "0.566").data()  # the raw score: no ÷√d_k
    assert data["mistakes"] == ["no_scale"]
    step = ladder.help_line("4c", "0.566", data, 2, "en")
    assert step is not None
    assert "no scaling: it first goes wrong at Scaled scores" in step
    assert "yours: 0.566 · right: 0.40" in step


@pytest.mark.parametrize("name", [m.name for m in catalogue.CATALOGUE if not m.multihead_only])
def test_the_first_wrong_stage_is_the_first_whose_numbers_differ(name: str) -> None:
    """Checked against the stages themselves: every stage before the one named is right."""
    from attnlab.mistakes import diagnosis

    mistake = catalogue.get(name)
    at = Address("logits", 1, row=1)
    found = ladder.first_wrong_stage(mistake, at)
    right, wrong = diagnosis.correct_stages(lesson_input()), diagnosis.mistake_stages(mistake)
    order = [s for s in catalogue.CHECK_STAGES if s in right and s in wrong]
    differs = [s for s in order if wrong[s].shape != right[s].shape
               or not torch.allclose(wrong[s][1, 1], right[s][1, 1], equal_nan=True)]  # fmt: skip
    same_shape = [s for s in differs if wrong[s].shape == right[s].shape]
    if found is None:
        assert not same_shape, (name, differs)
    else:
        assert found[0] == same_shape[0], (name, found, differs)


def test_the_quiz_hints_after_the_first_wrong_try_and_works_the_step_after_the_second(
    tmp_path: Path,
) -> None:
    args = ["--lang", "en", "quiz", "--data-dir", str(tmp_path), "--section", "4"]
    lines = "\n".join(["", "0.3", "0.7", "q"]) + "\n"  # skip the check question, two wrong tries
    done = CliRunner().invoke(app, args, input=lines)
    out = done.output
    hint = out.index("Hint: Take prompt A's raw score")
    step = out.index("Worked step: raw score = 0.566")
    assert hint < out.index("Try once more.") < step
    assert "yours: 0.7 · right: 0.40" in out
    assert "(give 2 decimals)" in out  # the label says how many decimals it wants


def test_the_web_exercise_climbs_the_ladder(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient
    from web_support import ORIGIN, post_form

    from attnlab.web.app import create_app

    client = TestClient(create_app(data_dir=tmp_path, figures_on=False), base_url=ORIGIN)
    page = html.unescape(client.get("/section/4?lang=en").text)
    assert "(give 2 decimals)" in page and "Hint:" not in page
    post_form(client, "/exercise/4c?lang=en", answer="0.3", back="section")
    page = html.unescape(client.get("/section/4?lang=en").text)
    assert "Hint: Take prompt A's raw score" in page and "Worked step" not in page
    post_form(client, "/exercise/4c?lang=en", answer="0.7", back="section")
    page = html.unescape(client.get("/section/4?lang=zh").text)  # words in the viewer's language
    assert "解题步骤：原始分数 = 0.566" in page and "你的答案：0.7 · 正确答案：0.40" in page
    post_form(client, "/exercise/4c?lang=en", answer="0.40", back="section")
    page = html.unescape(client.get("/section/4?lang=en").text)
    assert "Worked step" not in page and "Hint:" not in page  # right: the ladder starts again


def test_the_terminal_practice_hints_then_shows_the_solution_which_never_counts(
    tmp_path: Path,
) -> None:
    p = practice.deal(5, 1)
    right = _typed(p.expected())
    store = ["--data-dir", str(tmp_path), "--lang", "en"]
    args = ["practice", "--section", "5", "--seed", "1", *store]
    out = CliRunner().invoke(app, args, input=f"9 9 9\n8 8 8\n{right}\nq\n").output
    first = out.index("Hint: Scale and mask")
    assert first < out.index("Still not right: here is the worked solution.")
    assert f"Answer (row t={p.row}): {right}" in out
    assert f"yours: 8 8 8 · right: {practice.shown(p)}" in out
    assert "0 of 3 right in a row" in out  # typed after it was shown: no credit
    # s, then the answer shown: no credit either.
    shown = _typed(practice.deal(5, 2).expected())
    args = ["practice", "--section", "5", "--seed", "2", *store]
    out = CliRunner().invoke(app, args, input=f"s\n{shown}\nq\n").output
    assert "0 of 3 right in a row" in out


def test_the_web_practice_reveals_after_two_wrong_tries_and_gives_no_credit(
    tmp_path: Path,
) -> None:
    from fastapi.testclient import TestClient
    from web_support import ORIGIN, post_form

    from attnlab.web.app import create_app

    client = TestClient(create_app(data_dir=tmp_path, figures_on=False), base_url=ORIGIN)
    client.get("/practice/5?lang=en&seed=3")  # the page first: its form's session token
    right = _typed(practice.deal(5, 3).expected())
    done = post_form(client, "/practice/5/answer?lang=en", seed="3", answer="9 9 9")
    page = html.unescape(client.get(done.headers["location"]).text)
    assert "Hint: Scale and mask" in page and f"Answer (row t=1): {right}" not in page
    done = post_form(client, "/practice/5/answer?lang=en", seed="3", answer="8 8 8")
    page = html.unescape(client.get(done.headers["location"]).text)
    assert "Still not right" in page and f"Answer (row t=1): {right}" in page
    done = post_form(client, "/practice/5/answer?lang=en", seed="3", answer=right)
    page = html.unescape(client.get(done.headers["location"]).text)
    assert "✓ Right" in page and "0 of 3" in page


def test_the_notebook_climbs_the_ladder(capsys: pytest.CaptureFixture[str]) -> None:
    from attnlab.notebook import kernel

    kernel._WRONG.clear()
    kernel.check("4d", "0.3", "en")
    assert "Hint:" in capsys.readouterr().out
    kernel.check("4d", "0.7", "en")
    assert "Worked step:" in capsys.readouterr().out
    dealt = kernel.practice(5, seed=1, lang="en")
    dealt.check("9 9 9")
    assert "Hint: Scale and mask" in capsys.readouterr().out
    dealt.check("8 8 8")
    assert "Answer (row t=" in capsys.readouterr().out


def test_a_dealt_mistake_is_shown_where_it_first_goes_wrong() -> None:
    from attnlab.mistakes import diagnosis

    p = practice.deal(5, 1)
    unscaled = diagnosis.mistake_stages("no_scale", p.inp)["weights"][0, p.row].tolist()
    data = verdict_data(p.grade(practice.answer_text(unscaled)))
    assert "no_scale" in data["mistakes"]
    said = practice.help_text(p, data, practice.REVEAL_AFTER, "en")
    assert said is not None and "no scaling: it first goes wrong at Scaled scores" in said
