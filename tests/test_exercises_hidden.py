"""No graded exercise gives its answer away: in every channel (the web lesson, the notebook, the
terminal quiz, the scripts' plain text) and both languages, the exercise's answer is not printed
anywhere above the exercise.

The page is a worked example, so its numbers stay; an exercise asks for something it has not
shown yet (another row, the next stage, a quantity computed from shown numbers). An answer
counts as shown when it appears at the exercise's decimals, at 3 or at 4 decimals (trailing zeros
dropped or not, ``-`` or ``−``); a vector when its whole row appears as the page writes vectors
(``[0.599, 0.401]``, ``0.599, 0.401`` or the cells of a table row).
"""

from __future__ import annotations

import contextlib
import html
import io
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from attnlab.cli.quiz_session import Quiz
from attnlab.content import knowledge
from attnlab.content.plain import render_section
from attnlab.core.example import LANGS
from attnlab.notebook.build import build_notebook
from attnlab.progress.store import ProgressStore
from attnlab.text import fmt

_TAG = re.compile(r"<[^>]+>")
_SEP = r"[\s,|;\[\]&\\]+"  # between the numbers of a row: blanks, commas, table bars, brackets


def _spellings(value: float, decimals: int) -> set[str]:
    """How the page may write ``value``: at ``decimals``, 3 and 4 places, zeros kept or not."""
    if decimals == 0:
        whole = round(value)
        return {f"{whole}", f"{whole:,}"}
    out = set()
    for d in {decimals, 3, 4, 6}:
        out |= {fmt.num(value, d), fmt.trimmed(value, d)}
    return out | {s.replace("-", "−") for s in out}


def _number(value: float, decimals: int) -> str:
    options = sorted(_spellings(value, decimals), key=len, reverse=True)
    return "(?:" + "|".join(re.escape(s) for s in options) + ")"


def answer_pattern(ex: knowledge.Exercise) -> re.Pattern[str]:
    """The exercise's answer as the page would write it, standing alone (not part of a longer
    number)."""
    body = _SEP.join(_number(v, ex.decimals) for v in ex.expected_values)
    return re.compile(rf"(?<![\d.]){body}(?![\d])")


def _above(text: str, marker: str) -> str:
    at = text.find(marker)
    assert at >= 0, f"{marker!r} not found"
    return text[:at]


def web_above(tmp_path: Path, web_client_factory: Callable[..., Any]) -> Iterator[tuple]:
    for lang in LANGS:
        page = web_client_factory(tmp_path / lang).get(f"/lesson?lang={lang}").text
        for ex_id in knowledge.exercise_ids():
            above = _above(page, f'id="ex-{ex_id}"')
            yield lang, ex_id, html.unescape(_TAG.sub(" ", above))


def _cell_output(source: str, namespace: dict[str, Any]) -> str:
    """What a stage or computation cell prints when it runs (the notebook is not executed here;
    listings and figures are left out: their numbers are the stage tables')."""
    out = io.StringIO()
    namespace["display"] = lambda shown: print(repr(shown), file=out)
    with contextlib.redirect_stdout(out):
        exec(source, namespace)  # the notebook's own cells, built by attnlab
    return out.getvalue()


def _computes(cell: Any) -> bool:
    """A stage table or a computation cell (not the setup, a listing or a figure)."""
    source = cell.source
    shows = "show_stage" in source or "print(" in source
    return (
        cell.cell_type == "code"
        and shows
        and "import torch" not in source
        and "figures." not in source
    )


def notebook_above() -> Iterator[tuple]:
    for lang in LANGS:
        cells = build_notebook(lang).cells
        setup = "\n".join(line for line in cells[1].source.splitlines() if line[:1] != "%")
        namespace: dict[str, Any] = {}
        exec(setup, namespace)
        seen: list[str] = []
        for cell in cells:
            ids = re.findall(r"check\('(\w+)'", cell.source)
            if ids:
                yield lang, ids[0], "\n".join(seen)
            seen.append(cell.source)
            if _computes(cell) and not ids:
                seen.append(_cell_output(cell.source, namespace))


class _Learner:
    """Skips each question, says "understood", and answers each exercise wrongly with the right
    count of numbers, so the quiz also reveals every earlier exercise's answer."""

    def __init__(self, lang: str) -> None:
        self.lang, self.said, self.marks = lang, [], {}

    def say(self, text: str) -> None:
        self.said.append(text)
        found = re.match(r"(?:练习|Exercise) (\w+)：|Exercise (\w+):", text.lstrip())
        if found:
            self.marks[found[1] or found[2]] = len(self.said) - 1

    def ask(self, prompt: str) -> str:
        assert len(self.said) < 2000, "the quiz keeps asking"
        if re.match(r"(?:练习|Practice) \d+-\d+", self.said[-1]):
            return ""  # a dealt exercise: skipped (its numbers are dealt, not the lesson's)
        if prompt != "> ":
            return "u" if "[u]" in prompt else ""
        last = knowledge.exercise(max(self.marks, key=self.marks.__getitem__), self.lang)
        return " ".join(["77.7777"] * len(last.expected_values))


def quiz_above(tmp_path: Path) -> Iterator[tuple]:
    """The whole quiz in one run, answered by :class:`_Learner`."""
    for lang in LANGS:
        learner = _Learner(lang)
        with ProgressStore(tmp_path / f"quiz-{lang}.sqlite3") as store:
            Quiz(store, lang, learner.ask, learner.say).run(list(range(20)))
        for ex_id in knowledge.exercise_ids():
            yield lang, ex_id, "\n".join(learner.said[: learner.marks[ex_id]])


def plain_above() -> Iterator[tuple]:
    """The scripts print a section as plain text; an exercise's section and all before it."""
    for lang in LANGS:
        for ex_id in knowledge.exercise_ids():
            section = knowledge.exercise(ex_id, lang).section
            yield lang, ex_id, "\n".join(render_section(i, lang) for i in range(section + 1))


def _give_aways(found: Iterator[tuple]) -> list[str]:
    bad = []
    for lang, ex_id, above in found:
        ex = knowledge.exercise(ex_id, lang)
        hit = answer_pattern(ex).search(above)
        if hit:
            context = " ".join(above[max(0, hit.start() - 60) : hit.end() + 20].split())
            bad.append(f"{lang} {ex_id} ({ex.key} = {hit[0]!r}): …{context}…")
    return bad


def test_the_pattern_finds_an_answer_however_the_page_writes_it() -> None:
    ex = knowledge.Exercise("x", 5, "", "weights[0,1,:]", 3)
    pattern = answer_pattern(ex)
    for text in ("gets [0.599, 0.401].", "| 0.5987 | 0.4013 |", "row 0.599, 0.401 here"):
        assert pattern.search(text), text
    for text in ("[0.599, 0.402]", "10.599, 0.401", "0.599"):
        assert not pattern.search(text), text


@pytest.mark.parametrize("channel", ["web", "notebook", "quiz", "plain"])
def test_no_exercise_shows_its_answer_above_it(
    channel: str, tmp_path: Path, web_client_factory: Callable[..., Any]
) -> None:
    found = {
        "web": lambda: web_above(tmp_path, web_client_factory),
        "notebook": notebook_above,
        "quiz": lambda: quiz_above(tmp_path),
        "plain": plain_above,
    }[channel]()
    bad = _give_aways(found)
    assert not bad, f"{len(bad)} exercises show their answer above them:\n" + "\n".join(bad)


def test_there_are_still_at_least_18_exercises() -> None:
    assert len(knowledge.exercise_ids()) >= 18
