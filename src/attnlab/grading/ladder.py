"""Help after a wrong try, one rung at a time: what every front end (web, quiz, notebook,
practice) says under a wrong verdict.

* After the first wrong try: a hint in the learner's terms, what to compute next, never the
  number (an exercise's ``hint`` in ``sections.toml``; for a dealt exercise, its stage's).
* After the second and later: the worked step with the numbers, the right answer beside the
  learner's own and, when the learner's numbers are a catalogued mistake's, the first stage that
  mistake changes, its numbers there beside the right ones. A worked step shows the answer, so
  a dealt exercise whose step was shown never counts towards mastery
  (:func:`attnlab.grading.practice.streak`).

Only a ``"wrong"`` verdict climbs the ladder: an answer asked again (too coarse, too few
numbers) is no try.

Example::

    >>> help_line("4c", "0.3", {"kind": "wrong"}, 1, "en")[:41]
    "Hint: Take prompt A's raw score at row t="
"""

from __future__ import annotations

from typing import Any

from attnlab.content import knowledge
from attnlab.content.explain import title
from attnlab.core.steps import MistakeInput, lesson_input
from attnlab.grading.keys import Address, exercise_key
from attnlab.mistakes import catalogue, diagnosis
from attnlab.mistakes.catalogue import CHECK_STAGES
from attnlab.text import fmt
from attnlab.text.i18n import pick

#: What to compute next at each stage a dealt exercise asks for (the first rung).
STAGE_HINTS: dict[str, dict[str, str]] = {
    "raw_scores": {
        "zh": "先算这一行的 q = x·W_Q，再算每个 Key k = x·W_K，原始分数是 q·k（还不缩放、"
        "不掩码）。",
        "en": "First this row's q = x·W_Q, then each key k = x·W_K; a raw score is q·k (not "
        "scaled, not masked yet).",
    },
    "scaled_scores": {
        "zh": "先算原始分数 q·k，再把每个都除以 √d_k（d_k 是 Key 的宽度）。",
        "en": "First the raw scores q·k, then divide each by √d_k (d_k is the key width).",
    },
    "masked_scores": {
        "zh": "先缩放，再看哪些 Key 在这一行的未来（列号大于行号）：那些位置写 -inf。",
        "en": "Scale first, then find the keys in this row's future (a column after the "
        "row): write -inf there.",
    },
    "weights": {
        "zh": "缩放、掩码之后沿这一行做 Softmax：每个看得到的分数取 e^s，除以它们的和；"
        "未来位置是 0。",
        "en": "Scale and mask, then a softmax along the row: e^s of each visible score "
        "divided by their sum; the future gets 0.",
    },
    "output": {
        "zh": "先算这一行的权重，再用它们给每个 Value 行加权求和：Σ α_j v_j。",
        "en": "First this row's weights, then weigh each value row by them and add: Σ α_j v_j.",
    },
    "logits": {
        "zh": "先算这一行的输出 h = weights·V，再乘 W_vocab：每个词表 ID 一个数。",
        "en": "First this row's output h = weights·V, then h·W_vocab: one number per "
        "vocabulary ID.",
    },
    "shape": {
        "zh": "按轴名写出形状（B、n_head、T、d_head……，d_head = C / n_head），再看这一步"
        "怎样移动或合并轴。",
        "en": "Write the shape by axis names (B, n_head, T, d_head..., d_head = C / n_head), "
        "then see how this step moves or merges axes.",
    },
}


def wrong_run(attempts: list[dict[str, Any]]) -> int:
    """Wrong tries in a row at the end of one exercise's ``attempts`` (oldest first): a right
    one starts again, an ungraded one (an answer asked again) is no try."""
    run = 0
    for attempt in attempts:
        if attempt.get("correct") is True:
            run = 0
        elif attempt.get("correct") is False:
            run += 1
    return run


def next_run(run: int, kind: str) -> int:
    """The wrong tries in a row after a verdict of ``kind``: one more after a wrong one, none
    after a right one, as many as before after an answer asked again (no try)."""
    return run + 1 if kind == "wrong" else 0 if kind == "right" else run


def help_line(exercise_id: str, text: str, data: dict[str, Any], wrong: int, lang: str
              ) -> str | None:  # fmt: skip
    """The help under a knowledge-check exercise's verdict ``data`` after ``wrong`` wrong tries
    in a row (this one included), or None when there is none to give (a right answer, one asked
    again, no wrong try yet)."""
    if data.get("kind") != "wrong" or wrong < 1:
        return None
    ex = knowledge.exercise(exercise_id, lang)
    if wrong == 1:
        return pick(lang, "提示：", "Hint: ") + ex.hint
    right = fmt.answer(ex.expected, ex.decimals)
    lines = [pick(lang, "解题步骤：", "Worked step: ") + ex.step,
             beside(" ".join(text.split()), right, lang)]  # fmt: skip
    at = exercise_key(exercise_id).at
    if at is not None:
        lines += first_wrong_lines(data.get("mistakes", []), at, None, lang)
    return "\n".join(lines)


def stage_hint(stage: str, lang: str) -> str:
    """The first rung for a dealt exercise asking for ``stage`` (``"shape"`` for section 9)."""
    return pick(lang, "提示：", "Hint: ") + STAGE_HINTS[stage][lang]


def beside(given: str, right: str, lang: str) -> str:
    """``yours: 0.7 · right: 0.40``: the learner's answer beside the right one."""
    return pick(lang, f"你的答案：{given} · 正确答案：{right}",
                f"yours: {given} · right: {right}")  # fmt: skip


def first_wrong_lines(names: list[str], at: Address, inp: MistakeInput | None, lang: str
                      ) -> list[str]:  # fmt: skip
    """The second rung's lines on a named mistake: for each of ``names``, the first stage whose
    numbers at ``at``'s row it changes (on ``inp``, default the lesson's), its numbers there
    beside the right ones: ``"W_Q and W_K swapped: it first goes wrong at Query: [..] where the
    right numbers are [..]"``."""
    lines = []
    for mistake in map(catalogue.get, names):
        found = first_wrong_stage(mistake, at, inp)
        if found is None:
            continue
        stage, theirs, right = found
        lines.append(pick(
            lang,
            f"{mistake.title['zh']}：最先出错的是“{title(stage, 'zh')}”：这样算得 {theirs}，"
            f"正确的是 {right}",
            f"{mistake.title['en']}: it first goes wrong at {title(stage, 'en')}: it gives "
            f"{theirs} where the right numbers are {right}",
        ))  # fmt: skip
    return lines


def first_wrong_stage(
    mistake: catalogue.Mistake, at: Address, inp: MistakeInput | None = None
) -> tuple[str, str, str] | None:
    """The first stage up to ``at.stage`` where ``mistake`` changes the numbers of ``at``'s
    row (the whole table for a table asked), with the mistaken and the right numbers written to
    3 decimals; None when it changes none there (or cannot be made on ``inp``)."""
    inp = lesson_input() if inp is None else inp
    if not mistake.applies_to(inp):
        return None
    right = diagnosis.correct_stages(inp)
    wrong = diagnosis.mistake_stages(mistake, inp)
    for stage in CHECK_STAGES[: CHECK_STAGES.index(at.stage) + 1]:
        if stage not in right or stage not in wrong or wrong[stage].shape != right[stage].shape:
            continue
        good = diagnosis.value_at(right[stage], at.prompt, at.head, at.row, None)
        bad = diagnosis.value_at(wrong[stage], at.prompt, at.head, at.row, None)
        if good is None or bad is None or diagnosis.values_match(bad, good, 1e-9):
            continue
        return stage, fmt.answer(bad.flatten().tolist(), 3), fmt.answer(good.flatten().tolist(), 3)
    return None
