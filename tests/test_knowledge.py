"""The knowledge-check content: schema, computed answers, grading tolerance and the diagnosis of
wrong answers (the published numbers themselves: tests/test_lesson_numbers.py)."""

from __future__ import annotations

import re
import tomllib
from importlib import resources

import pytest
from hypothesis import given
from hypothesis import strategies as st
from published import row

from attnlab.content import knowledge
from attnlab.grading import answers, reasons
from attnlab.mistakes import diagnosis
from attnlab.text.errors import InputError

LANGS = ("zh", "en")
PLACEHOLDER = re.compile(r"\{\{[^}]*\}\}")


def raw(name: str) -> dict:
    return tomllib.loads(resources.files("attnlab").joinpath("data", name).read_text("utf-8"))


SECTIONS = raw("sections.toml")["section"]
GLOSSARY = raw("glossary.toml")["term"]


def test_twenty_sections_with_unique_ids_in_page_order() -> None:
    ids = [s["id"] for s in SECTIONS]
    assert ids == list(range(20)), f"section ids must be 0..19 in order, got {ids}"
    slugs = [s["slug"] for s in SECTIONS]
    assert len(set(slugs)) == len(slugs), f"duplicate slugs: {slugs}"


@pytest.mark.parametrize("lang", LANGS)
def test_every_section_has_every_field_non_empty(lang: str) -> None:
    for s in SECTIONS:
        fields = s.get(lang, {})
        missing = [f for f in knowledge.TEXT_FIELDS if not str(fields.get(f, "")).strip()]
        assert not missing, f"section {s['id']} ({lang}) lacks {missing}"
        extra = set(fields) - set(knowledge.TEXT_FIELDS)
        assert not extra, f"section {s['id']} ({lang}) has unknown fields {extra}"


def test_chinese_text_is_chinese_and_english_text_is_not() -> None:
    han = re.compile(r"[\u4e00-\u9fff]")
    for s in SECTIONS:
        for f in knowledge.TEXT_FIELDS:
            assert han.search(s["zh"][f]), f"section {s['id']} zh.{f} has no Chinese"
            assert not han.search(s["en"][f]), f"section {s['id']} en.{f} contains Chinese"


def test_exercises_cover_the_numeric_sections_and_have_unique_ids() -> None:
    ids = knowledge.exercise_ids()
    assert len(ids) == len(set(ids)), f"duplicate exercise ids: {ids}"
    with_exercise = {s["id"] for s in SECTIONS if s.get("exercise")}
    required = {4, 5, 6, 8, 9, 11, 16, 17}
    assert required <= with_exercise, f"sections without exercise: {required - with_exercise}"
    for s in SECTIONS:
        for e in s.get("exercise", []):
            assert set(e) <= {"id", "answer", "decimals", "zh", "en", "confusable", "hint",
                              "step"}, e  # fmt: skip
            assert e["zh"].strip() and e["en"].strip(), f"exercise {e['id']} lacks a prompt"
            for rung in ("hint", "step"):  # the help after a wrong try, in both languages
                assert {"zh", "en"} == set(e[rung]) and all(e[rung].values()), (e["id"], rung)


def test_every_answer_key_resolves_to_a_computed_number() -> None:
    for ex_id in knowledge.exercise_ids():
        ex = knowledge.exercise(ex_id)
        flat = ex.expected_values
        assert flat, f"exercise {ex_id} ({ex.key}) resolved to nothing"
        assert all(isinstance(v, float) for v in flat), f"{ex_id}: {flat}"


def test_answers_are_stored_as_keys_never_as_numbers() -> None:
    for s in SECTIONS:
        for e in s.get("exercise", []):
            assert isinstance(e["answer"], str), f"exercise {e['id']} stores {e['answer']!r}"
            assert not re.fullmatch(r"[-+\d.eE]+", e["answer"]), f"{e['id']}: a typed number"


def _texts() -> list[tuple[str, str]]:
    out = []
    for s in SECTIONS:
        for lang in LANGS:
            out += [(f"section {s['id']} {lang}.{f}", s[lang][f]) for f in knowledge.TEXT_FIELDS]
        out += [(f"exercise {e['id']} {lang}", e[lang]) for e in s.get("exercise", [])
                for lang in LANGS]  # fmt: skip
    for t in GLOSSARY:
        out += [(f"term {t['id']} {lang}", t[lang]["definition"]) for lang in LANGS]
    return out


def test_no_decimal_number_is_typed_into_the_text() -> None:
    for where, text in _texts():
        bare = PLACEHOLDER.sub("", text)
        typed = re.findall(r"\d+\.\d+", bare)
        assert not typed, f"{where} types {typed}; use {{{{key|decimals}}}} instead"


def test_every_placeholder_renders() -> None:
    for lang in LANGS:
        for s in knowledge.sections(lang):
            for text in (s.summary, s.answer, s.question, *(e.prompt for e in s.exercises)):
                assert "{{" not in text, f"section {s.id} ({lang}) left a placeholder: {text}"


def test_glossary_has_the_weeks_terms_in_both_languages() -> None:
    ids = [t["id"] for t in GLOSSARY]
    assert len(ids) == len(set(ids)), f"duplicate terms: {ids}"
    needed = {"query", "key", "value", "raw-score", "scaled-score", "causal-mask",
              "attention-weights", "head", "w-o", "contextual-features", "logits",
              "vocabulary-softmax"}  # fmt: skip
    assert needed <= set(ids), f"missing terms: {needed - set(ids)}"
    for lang in LANGS:
        terms = knowledge.glossary(lang)
        assert len(terms) == len(ids)
        for term in terms:
            assert term.name.strip() and term.definition.strip(), term
            assert 0 <= term.section < 20, term


def test_rendered_numbers_come_from_the_pipeline() -> None:
    s = knowledge.section(4, "en")
    s_a = row("raw_scores.A").value[1][0]  # 1.131 = [1,1]·[1.131,0]
    assert f"1×{s_a:.3f} + 1×0 = {s_a:.3f}" in s.answer, s.answer
    assert row("experiment.p_target.A").text in knowledge.section(16, "zh").summary


def test_text_may_name_a_number_by_prompt_and_position() -> None:
    published = row("weights.A.final")
    assert knowledge.render("{{weights.A.final|4}}") == published.text


@given(extra=st.integers(min_value=0, max_value=5))
def test_any_correct_rounding_of_the_value_is_right(extra: int) -> None:
    for ex_id in ("4c", "5c", "9c", "16f"):
        ex = knowledge.exercise(ex_id)
        text = f"{ex.expected:.{ex.decimals + extra}f}"  # as many decimals as asked, or more
        grade = answers.check_answer(ex_id, text)
        assert grade.correct, f"{ex_id}: {text} graded {grade.kind} (value {ex.expected})"


@given(offset=st.floats(min_value=0.0006, max_value=0.5), sign=st.sampled_from([-1, 1]))
def test_three_decimals_off_by_more_than_half_a_unit_is_wrong(offset: float, sign: int) -> None:
    value = knowledge.exercise("9c").expected  # a sum of weights: no carried intermediates
    text = f"{round(value, 3) + sign * offset:.3f}"
    if abs(float(text) - value) <= 0.0005:
        return  # rounding the offset brought it back within the tolerance
    assert not answers.check_answer("9c", text).correct, f"{text} accepted for {value}"


@pytest.mark.parametrize(
    ("ex_id", "text", "verdict"),
    [
        ("9c", "1.599", "right"),
        ("9c", "1.5987", "right"),
        ("9c", "1.5986", "wrong"),  # four decimals must be right to four decimals
        ("9c", "1.60", "imprecise"),  # right to two decimals, but three are asked for
        ("9c", "1.5", "wrong"),
        ("4c", "0.40", "right"),
        ("4c", "0.4", "right"),  # 0.566/√2 is 0.4 exactly: fewer decimals, the same number
        ("4c", "0", "wrong"),  # 0 is also what token IDs fed as X give
        ("11c", "0", "wrong"),  # the belief the exercise corrects (it is 0.4875)
        ("5c", "1", "wrong"),  # the weight, not the denominator e^0.05
        ("5d", "1 1", "wrong"),  # the row sums, not the column sums
        ("8d", "0", "wrong"),
        ("16f", "0.876", "wrong"),  # also the loss before the step (0.876051)
        ("16f", "0.8759", "right"),
        ("9c", "2", "imprecise"),  # nothing else gives 2: right as far as it goes
        ("8c", "0.638, 0.362", "right"),
        ("8c", "[0.638 0.362]", "right"),
        ("8c", "0.638", "count"),
        ("6b", "−0.599，0.401", "right"),  # Unicode minus and a full-width comma
        ("17c", "16,000,000", "right"),
        ("17c", "16000001", "wrong"),
        ("17d", "1,000,000", "right"),
        ("1b", "0.25 0.25 0.25 0.25", "right"),
        ("9d", "[1, 2, 2, 3]", "right"),
        ("9d", "[1, 2, 3, 2]", "wrong"),
    ],
)
def test_grading_follows_the_learners_rounding(ex_id: str, text: str, verdict: str) -> None:
    assert answers.check_answer(ex_id, text).kind == verdict


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", r"expected a number, got an empty answer"),
        ("abc", r"expected a number like 0.599, got 'abc'"),
        ("nan", r"expected a number, got 'nan' \(NaN is never an answer\)"),
    ],
)
def test_unreadable_answers_raise_input_error(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        answers.check_answer("9c", text)


def test_a_wrong_answer_is_diagnosed_by_the_mistakes_catalogue() -> None:
    unscaled = diagnosis.mistake_stages("no_scale")["scaled_scores"][0, 0, 0]  # no ÷√d_k
    grade = answers.check_answer("4c", f"{unscaled:.3f}")
    why = reasons.explain(grade, "en")
    assert not grade.correct
    assert why is not None and "no scaling" in why, why
    assert "section 8" in why


def test_a_misread_index_is_named() -> None:
    grade = answers.check_answer("4c", "0.20")  # scaled_scores[0,0,1], the other column
    why = reasons.explain(grade, "en")
    assert why is not None and "scaled_scores[0,0,1]" in why, why


def test_an_unexplained_wrong_answer_has_no_diagnosis() -> None:
    assert reasons.explain(answers.check_answer("4c", "0.123"), "zh") is None


def test_section_lookup_errors() -> None:
    with pytest.raises(KeyError, match=r"section must be one of 0-19"):
        knowledge.section(20)
    with pytest.raises(KeyError, match=r"no exercise called 'zz'"):
        knowledge.exercise("zz")
    with pytest.raises(ValueError, match=r"lang must be one of zh, en, got 'fr'"):
        knowledge.sections("fr")


def test_glossary_command_filters_terms() -> None:
    from typer.testing import CliRunner

    from attnlab.cli.main import app

    result = CliRunner().invoke(app, ["--lang", "en", "glossary", "mask"])
    assert result.exit_code == 0
    assert "Causal mask" in result.stdout and "Query" not in result.stdout
    missing = CliRunner().invoke(app, ["glossary", "zzz"])
    assert missing.exit_code == 2 and "found no match for 'zzz'" in missing.stderr
