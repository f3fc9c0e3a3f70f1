"""The terminal quiz: one section's knowledge check and graded exercises, saved step by step.

For each section: show the title and question; take the learner's answer; ask the graded
exercises, each right or wrong (with the grader's reason); for a section with a computation,
deal one exercise on fresh numbers (:mod:`attnlab.grading.practice`; Enter skips it); then
reveal the model answer and the mistake it guards against, ask for a self-assessment
("understood" or "review again") and recap the section's summary. The summary and model answer
come last because they print the numbers
the exercises ask for. Every step is written to the :class:`~attnlab.progress.store.ProgressStore`
the moment it happens, so stopping the process loses at most the line being typed.

The quiz reads and writes through two functions, so tests drive it with a script of lines and
the command line with the terminal. Typing ``q`` (or end of input) stops it. Every line is
checked as text of its kind before it is graded or saved (:mod:`attnlab.inputs.text_limits`):
one over its limit, or holding a byte that is not UTF-8, raises ``TextError``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from typing import Any

from attnlab.content import knowledge
from attnlab.core.example import SECTION_COUNT
from attnlab.grading import answers, ladder, practice, reasons
from attnlab.grading.grade import Verdict
from attnlab.inputs.text_limits import check_text
from attnlab.progress.store import ProgressStore
from attnlab.progress.summary import Summary
from attnlab.text import fmt
from attnlab.text.errors import InputError
from attnlab.text.i18n import error_message, pick

Ask = Callable[[str], "str | None"]
Say = Callable[[str], None]
MAX_TRIES = 2

_UNDERSTOOD = {"u", "understood", "1", "y", "yes", "懂", "理解", "懂了"}
_REVIEW = {"r", "review", "2", "n", "no", "复习", "再复习"}
#: What asks for a dealt exercise's worked solution.
SOLUTION = {"s", "solution", "?", "解答"}


def save_practice(
    store: ProgressStore, dealt: practice.Dealt, text: str, verdict: Verdict | None
) -> None:
    """Save a graded answer to a dealt exercise (``verdict``), or that its solution was shown
    (None), under ``practice-N`` as every front end does."""
    data = json.dumps(practice.attempt_data(dealt, verdict))
    key = practice.attempt_id(dealt.section)
    if verdict is None:
        store.record_attempt(key, dealt.id, None, data)
    else:
        store.record_attempt(key, text.strip(), verdict.correct, data)


class QuizStopped(Exception):
    """The learner typed ``q`` or the input ended; everything so far is saved."""


def section_label(section_id: int, lang: str) -> str:
    """``"核心目标"``/``"Core goal"`` for 0, else ``"第 N 节"``/``"Section N"``."""
    if section_id == 0:
        return pick(lang, "核心目标", "Core goal")
    return pick(lang, f"第 {section_id} 节", f"Section {section_id}")


def progress_line(summary: Summary, lang: str) -> str:
    """The page's progress bar as text: "Week progress: X of 20 sections (P%)"."""
    done, pct = len(summary.completed), summary.percent
    return pick(
        lang,
        f"本周进度：{SECTION_COUNT} 节中已完成 {done} 节（{pct}%）",
        f"Week progress: {done} of {SECTION_COUNT} sections ({pct}%)",
    )


def plan(
    summary: Summary, section: int | None, review: bool, unmastered: Collection[int] = ()
) -> list[int]:
    """Which sections to go through: one, the ones marked "review" (those whose computation is
    not yet mastered in ``attnlab practice`` first), or every unfinished one in page order (so
    the quiz resumes at :meth:`Summary.next_section`, as the web and ``attnlab progress`` do)."""
    if section is not None:
        return [section]
    if review:
        return sorted(summary.to_review, key=lambda s: s not in unmastered)  # stable
    return list(summary.unfinished())


class Quiz:
    """Runs knowledge checks against a store, reading with ``ask`` and printing with ``say``."""

    def __init__(self, store: ProgressStore, lang: str, ask: Ask, say: Say) -> None:
        self.store, self.lang, self._ask, self.say = store, lang, ask, say

    def t(self, zh: str, en: str) -> str:
        """The UI text in the quiz's language."""
        return pick(self.lang, zh, en)

    def ask(self, prompt: str, kind: str = "reply") -> str:
        """One line from the learner without surrounding blanks (``""`` for an empty one);
        ``q`` or end of input stops the quiz.

        Raises:
            TextError: the line is not text of ``kind`` (:mod:`attnlab.inputs.text_limits`):
                longer than its limit, or holding a byte that is not UTF-8.
        """
        line = self._ask(prompt)
        if line is None or line.strip().lower() in {"q", "quit", "退出"}:
            raise QuizStopped
        return check_text(line, kind) if line.strip() else ""

    def run(self, sections: list[int], resume: bool = False) -> int:
        """Go through ``sections``; return how many were finished. With ``resume`` (plain
        ``attnlab quiz``) the questions already answered are shown, not asked again."""
        finished = 0
        for section_id in sections:
            self.section(section_id, resume)
            finished += 1
        return finished

    def section(self, section_id: int, resume: bool = False) -> None:
        """One section: question, graded exercises, a pointer to practice, reveal,
        self-assessment, recap; then complete. The model answer and the recap come after the
        exercises, so nothing they say can answer an exercise before it is tried."""
        s = knowledge.section(section_id, self.lang)
        saved = self.store.attempts() if resume else []
        self.store.set_last_section(section_id)
        self.say(f"\n== {section_label(section_id, self.lang)} · {s.title} ==")
        self.say(self.t("问题：", "Question: ") + s.question)
        self.check_answer(section_id, [a for a in saved if a["exercise"] == f"check-{section_id}"])
        for ex in s.exercises:
            self.exercise(ex, [a for a in saved if a["exercise"] == ex.id])
        if section_id in practice.SECTIONS:
            self.practice(section_id)
        self.say(self.t("参考答案：", "Model answer: ") + s.answer)
        self.say(self.t("常见错误：", "Common mistake: ") + s.mistake)
        self.store.set_assessment(section_id, self.assess())
        self.say(self.t("回顾：", "Recap: ") + s.summary)
        self.store.mark_complete(section_id)
        self.say(self.t("已保存。", "Saved. ") + progress_line(self.store.summary(), self.lang))

    def practice(self, section_id: int) -> None:
        """One exercise dealt on fresh numbers: Enter skips it, ``s`` shows the worked solution;
        two tries, then the solution. Every graded answer and a shown solution are saved as
        ``attnlab practice`` saves them (they count towards the section's mastery)."""
        dealt = practice.deal(section_id)
        self.say(self.t("换一组没见过的数再练（回车跳过，s 看解答）：",
                        "Practise on numbers you have not seen (Enter skips, s shows the "
                        "solution):"))  # fmt: skip
        self.say(practice.exercise_text(dealt, self.lang))
        tries = 0
        while tries < MAX_TRIES:
            text = self.ask("> ", "exercise_answer")
            if not text:
                return
            if text.lower() in SOLUTION:
                break
            try:
                verdict = dealt.grade(text)
            except InputError as exc:  # not a list of numbers: ask again
                self.say(error_message(exc, self.lang))
                continue
            self.say(practice.verdict_line(dealt, verdict, text, self.lang))
            if verdict.kind not in answers.GRADED:  # too few numbers or decimals: ask again
                continue
            save_practice(self.store, dealt, text, verdict)
            tries += 1
            if verdict.correct:
                self.say(self.t(f"更多练习：attnlab practice --section {section_id}",
                                f"More: attnlab practice --section {section_id}"))  # fmt: skip
                return
            helped = practice.help_text(
                dealt, answers.verdict_data(verdict), tries, self.lang, text
            )
            if helped is not None:
                self.say(helped)
            if tries < MAX_TRIES:
                self.say(self.t("再试一次。", "Try once more."))
        self.say(practice.solution_text(dealt, self.lang))
        save_practice(self.store, dealt, "", None)

    def check_answer(self, section_id: int, saved: list[dict[str, Any]]) -> None:
        """Take the answer to the check question, or show the one saved before."""
        if saved:
            said = fmt.one_line(saved[-1]["answer"])
            self.say(self.t("你已回答（已保存）：", "Your saved answer: ") + said)
            return
        answer = self.ask(
            self.t("你的回答（回车跳过，q 退出）> ", "Your answer (Enter skips, q quits)> "),
            "check_answer",
        )
        if answer:
            self.store.record_attempt(f"check-{section_id}", answer, None)

    def assess(self) -> str:
        """Ask until the learner says "understood" or "review again"."""
        prompt = self.t(
            "自评：[u] 理解了  [r] 需要再复习 > ",
            "Self-assessment: [u] understood  [r] review again > ",
        )
        while True:
            reply = self.ask(prompt).lower()
            if reply in _UNDERSTOOD:
                return "understood"
            if reply in _REVIEW:
                return "review"
            self.say(self.t("请输入 u 或 r。", "Please type u or r."))

    def exercise(self, ex: knowledge.Exercise, saved: list[dict[str, Any]] | None = None) -> None:
        """Ask a graded exercise (two tries); save every graded answer as it is given. An
        exercise already answered in ``saved`` (right, or both tries used) is shown, not asked."""
        graded = [a for a in saved or [] if a["correct"] is not None]
        self.say(self.t(f"练习 {ex.id}：", f"Exercise {ex.id}: ") + ex.prompt + ex.how)
        if any(a["correct"] for a in graded) or len(graded) >= MAX_TRIES:
            self._answered(ex, graded[-1])
            return
        tries = len(graded)
        while tries < MAX_TRIES:
            text = self.ask("> ", "exercise_answer")
            if not text:  # an empty line is no try: ask again
                self.say(self.t("请输入你算出的数（q 结束）。", "Type your numbers (q stops)."))
                continue
            done = answers.submit(ex.id, text)
            data = done.data()
            self.store.record_attempt(ex.id, text, done.graded, json.dumps(data))
            self.say(reasons.present(ex.id, text, data, self.lang))
            if done.graded is None:  # unreadable, too few numbers or decimals: ask again
                continue
            tries += 1
            if done.graded:
                return
            helped = ladder.help_line(ex.id, text, data, tries, self.lang)
            if helped is not None:  # a hint after the first try, the worked step after both
                self.say(helped)
            if tries < MAX_TRIES:
                self.say(self.t("再试一次。", "Try once more."))
        self.say(self.t("正确答案：", "The answer: ") + self._value(ex))

    def _answered(self, ex: knowledge.Exercise, last: dict[str, Any]) -> None:
        said = fmt.one_line(last["answer"])
        if last["correct"]:
            self.say(self.t("✓ 已答对：", "✓ Answered right: ") + said)
            return
        self.say(self.t("✗ 已作答：", "✗ Answered: ") + said)
        self.say(self.t("正确答案：", "The answer: ") + self._value(ex))

    def _value(self, ex: knowledge.Exercise) -> str:
        return fmt.answer(ex.expected, ex.decimals)
