"""Hand answers, as learners type them, through the one grader: ``attnlab check``, and where the
same numbers are an exercise, the quiz's grader and the web form too (the same verdict).

Each row: stage, prompt, row, what was typed, the verdict kind, and what is named (a catalogue
mistake, a slip of :mod:`attnlab.grading.slips`, ``"carried"`` for work from rounded
intermediates, or the decimals a too-coarse answer needs).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner
from web_support import ORIGIN, post_form

from attnlab.cli.main import app
from attnlab.cli.quiz_session import Quiz
from attnlab.content import knowledge
from attnlab.grading import answers, reasons
from attnlab.progress.store import ProgressStore
from attnlab.text import fmt
from attnlab.web.app import create_app

runner = CliRunner()
TABLE: list[tuple[str, str, int, str, str, str | int | None]] = [
    # right
    ("weights", "A", 1, "0.599 0.401", "right", None),
    ("weights", "B", 1, "0.426 0.574", "right", None),
    ("weights", "B", 1, "0.4256 0.5744", "right", None),
    ("weights", "A", 0, "1.0 0.0", "right", None),
    ("scaled_scores", "A", 1, "0.8 0.4", "right", None),
    ("raw_scores", "A", 1, "1.131 0.566", "right", None),
    ("output", "B", 1, "-0.426 0.574", "right", None),
    ("output", "A", 1, "[0.599, 0.401]", "right", None),
    ("masked_scores", "A", 0, "0.40 −∞", "right", None),
    ("logits", "A", 1, "0 0.599 1.197 -0.197 0", "right", None),
    # rounded: right work carried from 3-decimal intermediates
    ("weights", "B", 1, "0.4255 0.5745", "right", "carried"),  # 1.105 / 2.597
    ("logits", "A", 1, "0 0.599 1.198 -0.198 0", "right", "carried"),  # 2 × 0.599
    ("output", "B", 1, "-0.4260 0.5740", "right", "carried"),  # 0.426 × −1, 0.574 × 1
    # coarse: a catalogued mistake fits the typed rounding too
    ("weights", "A", 1, "1 0", "coarse", 2),
    ("weights", "B", 1, "0 1", "coarse", 2),
    ("scaled_scores", "A", 1, "1 0", "coarse", 1),
    ("weights", "A", 1, "0.6 0.4", "coarse", 2),  # ÷d_k gives 0.570 0.430
    ("weights", "A", 0, "1 0", "right", None),  # exactly [1, 0]: whole numbers typed exactly
    ("masked_scores", "A", 0, "0.4 -inf", "right", None),  # 0.4 exactly: one decimal is enough
    # mistaken
    ("weights", "A", 1, "0.638 0.362", "wrong", "no_scale"),
    ("weights", "A", 1, "0.570 0.430", "wrong", "scale_by_d_k"),
    ("weights", "A", 0, "0.550 0.450", "wrong", "no_mask"),
    ("masked_scores", "A", 0, "0.4 0", "wrong", "mask_zero_fill"),
    # B's weights row, and its output with the minus dropped: both are named, never the LM
    # head fed the weights (that changes the logits, not the output).
    ("output", "B", 1, "0.426 0.574", "wrong", "same:stage:weights"),
    ("output", "B", 1, "0.426 0.574", "wrong", "minus_dropped"),
    ("logits", "B", 1, "0 0.426 0.851 0.149 0", "wrong", "lm_head_on_weights"),
    ("scaled_scores", "A", 1, "1.131 0.566", "wrong", "raw_vs_scaled"),
    ("raw_scores", "B", 1, "0.1 0.4", "wrong", "raw_vs_scaled"),
    ("weights", "B", 1, "0.599 0.401", "wrong", "prompt_swapped"),
    ("weights", "B", 1, "0.4257 0.5743", "wrong", "last_digit"),
    ("weights", "A", 1, "0.123 0.877", "wrong", None),
    # not as many numbers as asked
    ("weights", "A", 1, "0.599", "count", None),
    ("weights", "B", 1, "0,426 0,574", "count", None),  # four numbers, with a comma hint
]

MALFORMED: list[tuple[str, str, int, str, str]] = [
    ("weights", "A", 1, "nan 1", "NaN is never an answer"),
    ("weights", "A", 1, "inf 0", "expected a finite number, got 'inf'"),
    ("weights", "A", 1, "zero", "expected a number like 0.599"),
    ("output", "B", 1, "-inf 0.574", "only masked_scores holds -inf"),
]


def _check(stage: str, prompt: str, row: int, text: str) -> Any:
    argv = ["--lang", "en", "check", "--stage", stage, "--prompt", prompt, "--row", str(row),
            "--values", text]  # fmt: skip
    return runner.invoke(app, [*argv, "--json"]), runner.invoke(app, argv)


def _named(entry: dict[str, Any]) -> set[Any]:
    names: set[Any] = {m["name"] for m in entry["mistakes"]} | set(entry["slips"])
    if entry["carried"]:
        names.add("carried")
    if entry["needed_decimals"] is not None:
        names.add(entry["needed_decimals"])
    return names


def test_the_table_has_every_kind_of_hand_answer() -> None:
    kinds = {row[4] for row in TABLE} | {"malformed"} if MALFORMED else set()
    assert len(TABLE) + len(MALFORMED) >= 30
    assert {"right", "coarse", "wrong", "count", "malformed"} <= kinds
    assert any(row[5] == "carried" for row in TABLE)


@pytest.mark.parametrize(("stage", "prompt", "row", "text", "kind", "named"), TABLE)
def test_check_grades_the_hand_answer(
    stage: str, prompt: str, row: int, text: str, kind: str, named: str | int | None
) -> None:
    as_json, as_text = _check(stage, prompt, row, text)
    (entry,) = json.loads(as_json.output)
    assert entry["kind"] == kind, entry
    assert as_json.exit_code == (0 if kind == "right" else 1)
    if named is None:
        assert _named(entry) == set(), entry
    else:
        assert named in _named(entry), entry
    if kind == "coarse":
        unit = "decimal" if named == 1 else "decimals"
        assert f"Too coarse: give at least {named} {unit} (" in as_text.output
        assert "is right" not in as_text.output
    if named == "carried":
        assert "Right, given intermediates rounded to 3 decimals; carry 4" in as_text.output
    if named is None and kind == "wrong":
        assert as_text.output.splitlines()[0].endswith("✗ Not yet"), as_text.output
    if kind == "count":
        assert "Needs 2 numbers, got " in as_text.output
    if text.startswith("0,"):
        assert "decimal point: 0,426 → 0.426" in as_text.output


@pytest.mark.parametrize(("stage", "prompt", "row", "text", "message"), MALFORMED)
def test_check_refuses_malformed_answers(
    stage: str, prompt: str, row: int, text: str, message: str
) -> None:
    result, _ = _check(stage, prompt, row, text)
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_web_shows_the_reason_in_the_pages_language(tmp_path: Path) -> None:
    client = TestClient(create_app(tmp_path, figures_on=False), base_url=ORIGIN)
    assert client.get("/lesson").status_code == 200
    for ex, text, zh in (
        ("9c", "1.60", "↻ 请再答一次 · 方向对，但请至少保留 3 位小数"),
        ("4c", "0.40 0.05", "↻ 请再答一次 · 需要 1 个数，你给了 2 个"),
        ("4c", "abc", "⚠ 无法读取 · 需要像 0.599 这样的数，收到的是 'abc'"),
    ):
        r = post_form(client, f"/exercise/{ex}?lang=zh", answer=text)
        form = html.unescape(client.get(r.headers["location"]).text).split(f'id="ex-{ex}"')[1]
        assert zh in form.split("</form>")[0] and ' hint">' in form
    with ProgressStore.open(tmp_path) as store:
        assert store.summary().attempts == 0, "an ungradable answer counted as an attempt"


@pytest.mark.parametrize(
    ("exercise", "text", "kind", "named"),
    [
        ("16d", "-0.229", "wrong", "sign_flipped"),  # a probability's sign
        ("4c", "0.566", "wrong", "raw_vs_scaled"),  # the raw score for the scaled one
        ("4d", "0.40", "wrong", "prompt_swapped"),  # prompt A's score for prompt B's
        ("9c", "1.5986", "wrong", "last_digit"),
        ("6b", "0.599 0.401", "wrong", "minus_dropped"),
    ],
)
def test_quiz_names_the_slip(exercise: str, text: str, kind: str, named: str) -> None:
    verdict = answers.check_answer(exercise, text)
    assert verdict.kind == kind
    assert named in _named(verdict.to_json()), verdict


def test_a_decimal_comma_gets_a_hint_in_the_quiz() -> None:
    verdict = answers.check_answer("16d", "0,229")
    why = reasons.explain(verdict, "en", 3, "0,229")
    assert verdict.kind == "count" and why is not None and "0,229 → 0.229" in why


def _quiz_leaks(lang: str, data: Path) -> tuple[list[str], list[str]]:
    """Drive the quiz through all 20 sections, answering each exercise right; return what it
    said and each exercise answer already printed in its section before the exercise."""
    said: list[str] = []
    leaks: list[str] = []
    exercises = [e for s in knowledge.sections(lang) for e in s.exercises]

    def ask(prompt: str) -> str:
        assert len(said) < 3000, "the quiz keeps asking"
        if prompt != "> ":
            return "u" if "[u]" in prompt else ""
        if re.match(r"(?:练习|Practice) \d+-\d+", said[-1]):
            return ""  # a dealt exercise on fresh numbers: skipped
        ex = next(e for e in reversed(exercises) if any(e.prompt in s for s in said))
        start = max(i for i, s in enumerate(said) if s.lstrip().startswith("== "))
        before = "\n".join(said[start:])  # this section's text so far
        value = ex.expected
        shown = [fmt.answer(value, ex.decimals)]
        if isinstance(value, list) and len(value) > 1:
            shown.append(", ".join(fmt.answer(v, ex.decimals) for v in value))
        for text in shown:  # as a number of its own, not a digit of 4,000,000
            if re.search(rf"(?<![\d.,]){re.escape(text)}(?![\d.,]?\d)", before):
                leaks.append(f"{lang} {ex.id}: {text!r}")
        return fmt.answer(value, ex.decimals).strip("[]")

    with ProgressStore.open(data) as store:
        Quiz(store, lang, ask, said.append).run(list(range(20)))
    asked = [s for s in said if re.match(r"(?:练习 \w+：|Exercise \w+: )", s)]
    assert len(asked) == len(exercises), asked
    return said, leaks


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_no_section_prints_an_exercise_answer_before_the_exercise(
    tmp_path: Path, lang: str
) -> None:
    """Every section, every exercise: the computed answer (as the quiz writes it, and as its
    numbers) is not in the section's text said before the exercise."""
    said, leaks = _quiz_leaks(lang, tmp_path)
    assert leaks == [], leaks
    assert any("[0.0, 0.5, 0.5, 0.0]" in s for s in said)  # section 1's recap, after 1a


# In a child process: the peak memory of refusing a huge answer file, against the peak of
# refusing a tiny one (same imports, same lesson stages). ru_maxrss is in KiB on Linux.
PEAK = r"""
import json, resource, sys
from typer.testing import CliRunner
from attnlab.cli.main import app
def check(path):
    r = CliRunner().invoke(app, ["--lang", "en", "check", path])
    return r.exit_code, r.stderr.strip()
before = check(sys.argv[1]), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
after = check(sys.argv[2]), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps([before, after]))
"""


@pytest.mark.parametrize("values", ["string", "list"])
@pytest.mark.process
def test_a_huge_answer_file_is_refused_before_it_is_parsed(tmp_path: Path, values: str) -> None:
    tiny = tmp_path / "tiny.json"
    tiny.write_text(json.dumps([{"stage": "nope", "values": "1"}]), encoding="utf-8")
    huge = tmp_path / "huge.json"
    numbers = "0.5 " * 2_000_000  # 8 MB: one answer of two million numbers
    body = f'"{numbers}"' if values == "string" else "[" + numbers.strip().replace(" ", ",") + "]"
    huge.write_text(f'[{{"stage": "weights", "values": {body}}}]', encoding="utf-8")
    done = __import__("subprocess").run(
        [__import__("sys").executable, "-c", PEAK, str(tiny), str(huge)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (first, peak_tiny), ((code, line), peak_huge) = json.loads(done.stdout)
    assert first[0] == 2 and "stage: expected one of" in first[1], first
    assert code == 2 and "answer file" in line and "is larger than 1 MiB" in line, line
    grown = (peak_huge - peak_tiny) / 1024
    assert grown < 32, f"refusing an 8 MB answer file took {grown:.0f} MiB more at its peak"


@pytest.mark.parametrize(
    "values",
    [" ".join(["0.5"] * 10_001), [0.5] * 10_001, [[0.5] * 100] * 101],
    ids=["string", "list", "rows"],
)
def test_an_answer_of_more_numbers_than_any_stage_is_refused(tmp_path: Path, values) -> None:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps([{"stage": "weights", "values": values}]), encoding="utf-8")
    result = runner.invoke(app, ["--lang", "en", "check", str(path)])
    assert result.exit_code == 2, result.output
    assert "answer 1: values: expected at most 10,000 numbers, got more" in result.stderr
    cli = runner.invoke(app, ["--lang", "en", "check", "--stage", "weights", "--values",
                              " ".join(["1"] * 10_001)])  # fmt: skip
    assert "--values: expected at most 10,000 numbers, got more" in cli.stderr, cli.stderr


TWO_HEADS = {"x": [[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]], "w_q": [[1.0] * 4] * 4,
             "w_k": [[1.0] * 4] * 4, "w_v": [[1.0] * 4] * 4, "num_heads": 2}  # fmt: skip
SINGLE = "head: expected 1 (the input has a single head), got 7"


@pytest.mark.parametrize(
    ("heads", "stage", "lang", "message"),
    [
        (1, "weights", "en", SINGLE),
        (1, "weights", "zh", "head：应为 1（输入只有一个头），收到的是 7"),
        (1, "x", "en", SINGLE),  # a stage without a head axis
        (2, "weights", "en", "head: expected 1..2, got 7"),
        (2, "x", "en", "head: expected 1..2, got 7"),
    ],
)
def test_a_head_the_input_does_not_have_is_refused(tmp_path: Path, heads, stage, lang, message):  # type: ignore[no-untyped-def]
    argv = ["--lang", lang, "check", "--stage", stage, "--row", "0", "--head", "7", "--values",
            "1 0 0 0" if stage == "x" else "1"]  # fmt: skip
    if heads == 2:
        path = tmp_path / "two.json"
        path.write_text(json.dumps(TWO_HEADS), encoding="utf-8")
        argv += ["--input", str(path)]
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"attnlab: error: {message}", result.stderr


def test_an_answer_file_head_the_input_does_not_have_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "answers.toml"
    path.write_text('[[answer]]\nstage = "weights"\nrow = 1\nhead = 2\nvalues = "0.599 0.401"\n')
    result = runner.invoke(app, ["--lang", "en", "check", str(path)])
    assert result.exit_code == 2 and "head: expected 1 (the input has a single head), got 2" in (
        result.stderr
    ), result.output
