"""Helpers the notebook's cells call: a stage of the lesson as a labelled table, and the grader.

Example (in a notebook cell)::

    show_stage("weights", "en")   # the weights of both prompts, rows = queries, columns = keys
    check("4c", 0.40, "en")       # ✓ Right: 0.40
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.content.trace import build_views, render_markdown
from attnlab.grading import answers, ladder, reasons
from attnlab.inputs.model import LabInput
from attnlab.lesson import numbers
from attnlab.text.errors import InputError


class Markdown:
    """Markdown text that Jupyter renders (``_repr_markdown_``) and a terminal prints as is."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_markdown_(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


def show_stage(stage: str, lang: str = "zh", precision: int = 4) -> Markdown:
    """Stage ``stage`` of the lesson's head (``q``, ``raw_scores``, ``weights``, ...) as one
    table per prompt, labelled with the tokens, computed by :mod:`attnlab.core.pipeline`."""
    views = build_views(
        LabInput.lesson(lang), lang, stage=stage, precision=precision, computed=numbers.stages()
    )
    return Markdown(render_markdown(views, lang))


def _answer_text(answer: object) -> str:
    if isinstance(answer, str):
        return answer
    if isinstance(answer, Sequence):
        return " ".join(_answer_text(a) for a in answer)
    return repr(answer)


def check(exercise_id: str, answer: object = ..., lang: str = "zh") -> None:
    """Print the grader's verdict on ``answer`` (a number, a list of numbers or text such as
    ``"0.599 0.401"``) to exercise ``exercise_id``; ``...`` means not answered yet."""
    if answer is ...:
        print(
            "还没有作答：把 ... 换成你算出的数，再运行这个单元格。"
            if lang == "zh"
            else "Not answered yet: replace ... with your number and run this cell again."
        )
        return
    text = _answer_text(answer)
    try:
        done = answers.submit(exercise_id, text)
    except InputError as exc:  # no answer at all (too long, empty): one line, no traceback
        print(exc.localized(lang))
        return
    data = done.data()
    print(reasons.present(exercise_id, done.text, data, lang))
    _WRONG[exercise_id] = ladder.next_run(_WRONG.get(exercise_id, 0), data["kind"])
    helped = ladder.help_line(exercise_id, done.text, data, _WRONG.get(exercise_id, 0), lang)
    if helped is not None:
        print(helped)


#: Wrong tries in a row at each exercise in this kernel: the help ladder's rung.
_WRONG: dict[str, int] = {}


class Practice:
    """A dealt exercise in a notebook (:func:`practice`): it shows itself as its text, and
    ``check("0.6 0.4")`` prints the verdict, ``solution()`` the worked stages, ``new()`` deals
    fresh numbers."""

    def __init__(self, section: int, seed: int | None, lang: str) -> None:
        from attnlab.grading import practice as dealing

        self._dealing, self.section, self.lang = dealing, section, lang
        self.dealt = dealing.deal(section, seed)
        self._wrong = 0  # wrong tries in a row: the help ladder's rung

    def __repr__(self) -> str:
        return self._dealing.exercise_text(self.dealt, self.lang)

    def check(self, answer: object = ...) -> None:
        """Print the grader's verdict on ``answer`` for these numbers."""
        if answer is ...:
            print("还没有作答：把 ... 换成你算出的数。" if self.lang == "zh"
                  else "Not answered yet: replace ... with your numbers.")  # fmt: skip
            return
        text = _answer_text(answer)
        try:
            verdict = self.dealt.grade(text)
        except InputError as exc:
            print(exc.localized(self.lang))
            return
        print(self._dealing.verdict_line(self.dealt, verdict, text, self.lang))
        self._wrong = ladder.next_run(self._wrong, verdict.kind)
        data = answers.verdict_data(verdict)
        helped = self._dealing.help_text(self.dealt, data, self._wrong, self.lang, text)
        if helped is not None:
            print(helped)
        if self._dealing.reveals(data, self._wrong):
            self.solution()

    def solution(self) -> None:
        """Print every stage up to the asked one, for these numbers."""
        print(self._dealing.solution_text(self.dealt, self.lang))

    def new(self) -> Practice:
        """The same section with fresh numbers."""
        return Practice(self.section, None, self.lang)


def practice(section: int, seed: int | None = None, lang: str = "zh") -> Practice:
    """A fresh exercise of hand-sized numbers for ``section`` (4, 5, 6, 8, 11 or 16; 9 asks for
    a shape), as ``attnlab practice`` deals it; the same ``seed`` deals the same one."""
    return Practice(section, seed, lang)
