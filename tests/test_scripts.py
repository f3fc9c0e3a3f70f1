"""The two lesson scripts, run as a learner runs them (each file as ``__main__`` with its
arguments, inside this process: see process_support), and their --json documents. That a real
``python week07_attention.py`` starts, and what it imports, is tests/test_startup.py's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import process_support
import pytest
from published import row, text

from attnlab.lesson import numbers
from attnlab.text.fmt import compact_shape

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "week07_attention.py"
GRAD = ROOT / "course_examples" / "week07_attention.py"


def _run(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return process_support.script(script, *args)


@pytest.fixture(scope="module")
def lesson_json() -> dict:
    proc = _run(LESSON, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _near(got: float, key: str) -> bool:
    published = row(key)
    return abs(got - published.value) <= published.tolerance


def test_lesson_text_zh_shows_the_published_numbers() -> None:
    proc = _run(LESSON)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    published = [
        row(key).text
        for key in (
            "weights.A.final",
            "weights.B.final",
            "mask_demo.zero_fill",
            "cost.elements_long",
            "cost.growth_short_to_long",
        )
    ]
    # Section 9's shape check is the page's table, which writes shapes as the lesson does.
    published.append(compact_shape(row("shapes.raw_scores").value))
    # Four decimals the lesson does not print itself: S_A[1,0] and section 5's exact sum.
    computed = [f"{numbers.get(key):.4f}" for key in ("raw_scores.A.final[0]", "exp_sum.A.final")]
    for needle in [*published, *computed, "-∞", "喜欢", "行和"]:
        assert needle in out, f"{needle!r} missing from the lesson walk"


def test_lesson_text_en_uses_english_vocabulary() -> None:
    proc = _run(LESSON, "--lang", "en", "--precision", "3")
    assert proc.returncode == 0, proc.stderr
    assert "t=1 like" in proc.stdout and "喜欢" not in proc.stdout
    assert text(row("weights.A").value[1], 3) in proc.stdout


def test_grad_script_reports_section_16() -> None:
    proc = _run(GRAD, "--lang", "en")
    assert proc.returncode == 0, proc.stderr
    keys = [
        "experiment.p_target.A",
        "experiment.losses.A",
        "experiment.p_target.B",
        "experiment.losses.B",
        "experiment.mean_loss",
        "experiment.grad",
        "experiment.param_new",
        "experiment.mean_loss_after",
        "experiment.p_target_after.B",
    ]
    for needle in [*(row(k).text for k in keys), "[0.8q, 0.2q+0.2]", "[0.1, 0.2q+0.2]"]:
        assert needle in proc.stdout, f"{needle!r} missing"


def test_json_document_has_every_stage(lesson_json: dict) -> None:
    names = [
        "x",
        "q",
        "k",
        "v",
        "raw_scores",
        "scaled_scores",
        "causal_mask",
        "masked_scores",
        "weights",
        "output",
    ]
    for prompt in ("A", "B"):
        assert list(lesson_json["stages"][prompt]) == names
    assert lesson_json["stages"]["A"]["masked_scores"][0][1] == "-inf"
    b_final = row("weights.B.final")
    assert abs(lesson_json["stages"]["B"]["weights"][1][0] - b_final.value[0]) <= b_final.tolerance


def test_json_experiment_keys(lesson_json: dict) -> None:
    e = lesson_json["experiment"]
    assert _near(e["loss_mean"], "experiment.mean_loss")
    assert _near(e["grad_wq_1_0"], "experiment.grad")
    assert _near(e["q_new"], "experiment.param_new")
    assert _near(e["loss_mean_after"], "experiment.mean_loss_after")
    assert e["target_probabilities"][1] > e["target_probabilities_after"][1]


def test_both_scripts_write_the_same_document(lesson_json: dict) -> None:
    proc = _run(GRAD, "--json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == lesson_json


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--lang", "fr"], "argument --lang: invalid choice: 'fr'"),
        (["--precision", "x"], "argument --precision: expected an integer 0-12, got 'x'"),
        (["--precision", "40"], "expected an integer 0-12, got 40"),
    ],
)
def test_bad_options_give_one_line(args, message) -> None:
    proc = _run(LESSON, *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
