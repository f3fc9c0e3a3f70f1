"""``attnlab quiz`` driven through its input stream: answer, reveal, self-assess, exercises,
resume after an interruption, review, and a hard kill mid-quiz."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.content import knowledge
from attnlab.mistakes import diagnosis
from attnlab.progress.store import ProgressStore


def quiz(tmp_path: Path, *args: str, lines: list[str], lang: str = "en"):
    argv = ["--lang", lang, "quiz", "--data-dir", str(tmp_path), *args]
    return CliRunner().invoke(app, argv, input="".join(f"{line}\n" for line in lines))


def store(tmp_path: Path) -> ProgressStore:
    return ProgressStore(tmp_path / "progress.sqlite3")


def test_one_section_question_reveal_assessment_and_exercises(tmp_path: Path) -> None:
    lines = ["batch B, last query, key 0", "1.599", "1 2 2 3", "", "u"]  # "": skip the practice
    r = quiz(tmp_path, "--section", "9", lines=lines)
    assert r.exit_code == 0, r.output
    s9 = knowledge.section(9, "en")
    order = [s9.title, s9.question, "Exercise 9c", "✓ Right: 1.599", "Exercise 9d",
             "✓ Right: [1, 2, 2, 3]", s9.answer, s9.mistake, "Self-assessment", s9.summary,
             "Week progress: 1 of 20 sections (5%)"]  # fmt: skip
    positions = [r.output.find(text) for text in order]
    assert -1 not in positions, f"missing {order[positions.index(-1)]!r} in\n{r.output}"
    assert positions == sorted(positions), f"steps out of order: {positions}"
    with store(tmp_path) as st:
        s = st.summary()
        attempts = [(a["exercise"], a["answer"], a["correct"]) for a in st.attempts()]
    assert s.completed == (9,) and s.assessments == {9: "understood"} and s.last_section == 9
    assert attempts == [
        ("check-9", "batch B, last query, key 0", None),
        ("9c", "1.599", True),
        ("9d", "1 2 2 3", True),
    ]


def test_wrong_answer_gets_the_diagnosis_and_a_second_try(tmp_path: Path) -> None:
    unscaled = f"{diagnosis.mistake_stages('no_scale')['scaled_scores'][0, 0, 0]:.3f}"  # no ÷√d_k
    r = quiz(tmp_path, "--section", "4", lines=["", unscaled, "0.40", "0.05", "", "r"])
    assert r.exit_code == 0, r.output
    assert "✗ Not yet · That is the number this mistake gives: no scaling" in r.output
    assert "Try once more." in r.output and "✓ Right: 0.40" in r.output
    with store(tmp_path) as st:
        tries = st.attempts("4c")
        assert st.summary().assessments == {4: "review"}
        assert st.attempts("check-4") == [], "an empty (skipped) answer was saved"
    assert [(a["answer"], a["correct"]) for a in tries] == [(unscaled, False), ("0.40", True)]
    assert json.loads(tries[0]["diagnosis"])["mistakes"] == ["no_scale"]


def test_two_wrong_answers_reveal_the_computed_answer(tmp_path: Path) -> None:
    r = quiz(tmp_path, "--section", "17", lines=["", "2", "3", "8", "1000000", "u"])
    assert r.exit_code == 0, r.output
    assert "The answer: 16,000,000" in r.output
    assert "✓ Right: 1,000,000" in r.output


def test_unreadable_or_too_coarse_answers_are_asked_again_and_kept_ungraded(
    tmp_path: Path,
) -> None:
    lines = ["", "abc", "1.60", "1.599", "1 2 2 3", "", "u"]  # 9c asks 3 decimals: 1.599
    r = quiz(tmp_path, "--section", "9", lines=lines)
    assert r.exit_code == 0, r.output
    assert "⚠ Could not read it · expected a number like 0.599, got 'abc'" in r.output
    assert "Right as far as it goes; give at least 3 decimals" in r.output
    with store(tmp_path) as st:
        tries = [(a["answer"], a["correct"]) for a in st.attempts("9c")]
    assert tries == [("abc", None), ("1.60", None), ("1.599", True)]


def test_self_assessment_is_asked_until_understood_or_review(tmp_path: Path) -> None:
    r = quiz(tmp_path, "--section", "2", lines=["", "maybe", "r"])
    assert r.exit_code == 0, r.output
    assert r.output.count("Please type u or r.") == 1
    with store(tmp_path) as st:
        assert st.summary().assessments == {2: "review"}


def test_resume_after_an_interruption(tmp_path: Path) -> None:
    # Section 0 in full, then section 1's answer; the input ends before its self-assessment.
    first = quiz(tmp_path, lines=["a bigram reads one row", "u", "uniform is fixed"])
    assert first.exit_code == 0, first.output
    assert "Saved. Run attnlab quiz to continue from Section 1." in first.output
    with store(tmp_path) as st:
        s = st.summary()
        assert s.completed == (0,) and s.last_section == 1 and 1 not in s.assessments
        assert [a["answer"] for a in st.attempts("check-1")] == ["uniform is fixed"]
    second = quiz(tmp_path, lines=["q"])
    title1, title0 = knowledge.section(1, "en").title, knowledge.section(0, "en").title
    assert title1 in second.output and title0 not in second.output, second.output


def test_q_stops_and_later_runs_skip_completed_sections(tmp_path: Path) -> None:
    quiz(tmp_path, "--section", "0", lines=["", "u"])
    quiz(tmp_path, "--section", "1", lines=["", "0.25 0.25 0.25 0.25", "u"])
    r = quiz(tmp_path, lines=["", "q"])
    assert knowledge.section(2, "en").title in r.output
    assert "Saved." in r.output and r.exit_code == 0


def test_review_goes_through_the_sections_marked_review(tmp_path: Path) -> None:
    with store(tmp_path) as st:
        for section, status in ((3, "review"), (7, "review"), (8, "understood")):
            st.set_assessment(section, status)
    r = quiz(tmp_path, "--review", lines=["", "u", "", "u"])
    assert r.exit_code == 0, r.output
    titles = [knowledge.section(i, "en").title for i in (3, 7, 8)]
    assert titles[0] in r.output and titles[1] in r.output and titles[2] not in r.output
    again = quiz(tmp_path, "--review", lines=[])
    assert "Nothing to review." in again.output


def test_chinese_is_the_default(tmp_path: Path) -> None:
    argv = ["quiz", "--data-dir", str(tmp_path), "--section", "0"]
    r = CliRunner().invoke(app, argv, input="\n懂\n")
    assert r.exit_code == 0, r.output
    assert "问题：" in r.output and "参考答案：" in r.output
    assert "本周进度：20 节中已完成 1 节（5%）" in r.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--section", "20"], r"--section must be 0-19 \(0 = core goal\), got 20"),
        (["--section", "3", "--review"], r"use either --section or --review, got both"),
        (["--profile", "a b"], r"profile: expected 1-64 letters"),
    ],
)
def test_bad_options_fail_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    r = quiz(tmp_path, *args, lines=[])
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and re.search(message, lines[0]), r.stderr


def _read_until(proc: subprocess.Popen[bytes], marker: bytes, seen: bytearray, times: int) -> None:
    deadline = time.monotonic() + 60
    while seen.count(marker) < times:
        if time.monotonic() > deadline or proc.poll() is not None:
            raise AssertionError(f"never saw {marker!r} x{times}: {seen.decode(errors='replace')}")
        chunk = os.read(proc.stdout.fileno(), 4096)  # type: ignore[union-attr]
        seen.extend(chunk)


@pytest.mark.slow
@pytest.mark.process
def test_killing_the_process_mid_quiz_keeps_every_finished_step(tmp_path: Path) -> None:
    env = {**os.environ, "ATTNLAB_DATA_DIR": str(tmp_path), "ATTNLAB_LANG": "en"}
    cmd = [sys.executable, "-m", "attnlab", "quiz"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert proc.stdin is not None
    seen = bytearray()
    steps = [(b"Your answer", 1, "bigram"), (b"Self-assessment", 1, "u"),
             (b"Your answer", 2, "uniform")]  # fmt: skip
    try:
        for marker, times, line in steps:
            _read_until(proc, marker, seen, times)
            proc.stdin.write(f"{line}\n".encode())
            proc.stdin.flush()
        _read_until(proc, b"Exercise 1b", seen, 1)  # section 1 waits for its first exercise
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    with store(tmp_path) as st:
        s = st.summary()
        assert s.completed == (0,) and s.assessments == {0: "understood"}
        assert s.last_section == 1
        assert [a["answer"] for a in st.attempts()] == ["bigram", "uniform"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_question_that_names_its_integers_gets_no_second_hint(lang: str, tmp_path) -> None:
    """The shape exercises say "(4 integers)"; the quiz does not add "(whole numbers)"."""
    from typer.testing import CliRunner

    from attnlab.cli.main import app

    args = ["--lang", lang, "quiz", "--section", "9", "--data-dir", str(tmp_path)]
    done = CliRunner().invoke(app, args, input="\n\n0.5\n0.5\nq\n")  # an empty line re-asks 9c
    out = done.output
    assert done.exit_code == 0, out
    asked = [line for line in out.splitlines() if "9d" in line]
    assert asked, out
    assert not any(("整数）（整数" in a) or ("integers) (whole" in a) for a in asked), asked
