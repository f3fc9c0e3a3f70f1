"""One resume rule for the three front ends on one store: ``attnlab quiz``, the web's "continue"
and ``attnlab progress`` all go to the first unfinished section in page order
(:meth:`attnlab.progress.summary.Summary.next_section`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner
from web_support import ORIGIN

from attnlab.cli.main import app
from attnlab.cli.quiz_session import section_label
from attnlab.content import knowledge
from attnlab.progress.store import ProgressStore
from attnlab.text.fmt import answer
from attnlab.web.app import create_app


def quiz(data_dir: Path, *args: str, lines: list[str]):
    argv = ["--lang", "en", "quiz", "--data-dir", str(data_dir), *args]
    return CliRunner().invoke(app, argv, input="".join(f"{line}\n" for line in lines))


def resume_points(data_dir: Path) -> tuple[int | None, str, str]:
    """Where each front end would take the learner: the store's rule, the web's "continue"
    redirect and ``attnlab progress``'s "Next:" line."""
    with ProgressStore.open(data_dir) as store:
        rule = store.summary().next_section()
    client = TestClient(create_app(data_dir, figures_on=False), base_url=ORIGIN)
    web = client.get("/continue?lang=en", follow_redirects=False).headers["location"]
    argv = ["--lang", "en", "progress", "--data-dir", str(data_dir)]
    shown = CliRunner().invoke(app, argv).output
    nxt = next(line for line in shown.splitlines() if line.startswith(("Next:", "All 20")))
    return rule, web, nxt


def expect(data_dir: Path, section: int) -> None:
    rule, web, nxt = resume_points(data_dir)
    label = f"{section_label(section, 'en')} · {knowledge.section(section, 'en').title}"
    assert (rule, web, nxt) == (section, f"/section/{section}?lang=en", f"Next: {label}")


def first_title(output: str) -> str:
    """The title of the first section the quiz opened."""
    return output.split("== ", 1)[1].split(" · ", 1)[1].split(" ==", 1)[0]


@pytest.fixture
def started(tmp_path: Path) -> Path:
    """0 understood, 1 done but marked "review again", 2 done, 4 visited last."""
    with ProgressStore.open(tmp_path) as store:
        for s in (0, 1, 2):
            store.mark_complete(s)
        store.set_assessment(0, "understood")
        store.set_assessment(1, "review")
        store.set_last_section(4)
    return tmp_path


def test_the_three_front_ends_resume_at_the_first_unfinished_section(started: Path) -> None:
    expect(started, 1)  # 1 is marked "review again", so not finished; the visit to 4 does not count
    r = quiz(started, lines=["q"])
    assert first_title(r.output) == knowledge.section(1, "en").title, r.output
    assert "continue from Section 1" in r.output


def test_section_and_review_do_not_move_the_resume_point(started: Path) -> None:
    ex = knowledge.section(5, "en").exercises
    right = [answer(e.expected, e.decimals) for e in ex]
    r = quiz(started, "--section", "5", lines=["my answer", *right, "", "u"])
    assert r.exit_code == 0, r.output
    expect(started, 1)
    r = quiz(started, "--review", lines=["q"])
    assert first_title(r.output) == knowledge.section(1, "en").title
    expect(started, 1)


def test_resuming_does_not_ask_again_what_was_answered(started: Path) -> None:
    ex = knowledge.section(1, "en").exercises[0]
    with ProgressStore.open(started) as store:
        store.record_attempt("check-1", "the uniform weights are fixed", None)
        store.record_attempt(ex.id, answer(ex.expected, ex.decimals), True)
    r = quiz(started, lines=["u", "q"])  # the first line read is the self-assessment
    assert "Your saved answer: the uniform weights are fixed" in r.output
    assert f"✓ Answered right: {answer(ex.expected, ex.decimals)}" in r.output
    assert "Your answer (Enter skips" not in r.output.split("== ")[1]
    with ProgressStore.open(started) as store:
        assert len(store.attempts("check-1")) == 1 and len(store.attempts(ex.id)) == 1
        assert store.summary().assessments[1] == "understood"
    expect(started, 3)  # 1 is now finished, 2 was already


def test_a_used_up_exercise_shows_its_answer_and_is_not_asked(tmp_path: Path) -> None:
    ex = knowledge.section(1, "en").exercises[0]
    with ProgressStore.open(tmp_path) as store:
        store.mark_complete(0)
        for wrong in ("1 0 0 0", "0 1 0 0"):
            store.record_attempt(ex.id, wrong, False)
    r = quiz(tmp_path, lines=["", "q"])  # Enter skips the check question, then q
    assert "✗ Answered: 0 1 0 0" in r.output
    assert f"The answer: {answer(ex.expected, ex.decimals)}" in r.output
    with ProgressStore.open(tmp_path) as store:
        assert len(store.attempts(ex.id)) == 2


def test_review_again_does_not_count_as_understood(tmp_path: Path) -> None:
    r = quiz(tmp_path, lines=["", "r", "q"])  # section 0: skip the answer, "review again"
    assert r.exit_code == 0, r.output
    expect(tmp_path, 0)
    again = quiz(tmp_path, lines=["q"])
    assert first_title(again.output) == knowledge.section(0, "en").title
