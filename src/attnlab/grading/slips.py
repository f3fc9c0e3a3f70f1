"""Slips: wrong answers that are not a catalogued bug but a hand-computing accident.

A slip is named next to any catalogue match, since a coincidence can make both fit (B's output
``0.426 0.574`` is the weights row, and also the output with v_we's −1 dropped). The slips seen
in the numbers alone (:data:`IN_THE_NUMBERS`) are named first, before any mistake that needs
another computation to give them:

* ``last_digit``: every number, written with 2 decimals or more, within one unit of its last
  typed digit (a rounding slip);
* ``sign_flipped``: every number has the opposite sign (e.g. a gradient: descent subtracts it);
* ``minus_dropped``: a negative number written without its minus sign;
* ``raw_vs_scaled``: the raw score given for the scaled one, or the other way round;
* ``prompt_swapped``: the numbers of the other prompt at the same place;
* ``shape_order`` (a shape): the right sizes in another order;
* ``shape_of:STAGE`` (a shape): the shape of another tensor of the pipeline, named;
* ``same:zero``, ``same:one``: 0 or 1, given for a number that is neither;
* ``same:stage:STAGE``: the numbers of the stage before, at the same place (a step left out);
* ``same:EXERCISE.I``: the exercise's I-th nearby number (the loss before the step for the
  loss after it), as :attr:`attnlab.content.knowledge.Exercise.confusables` words it.

The grader finds them (:func:`attnlab.grading.grade.judge`, with the numbers of the other
prompt and score stage from :class:`attnlab.grading.keys.AnswerKey`); this module names them.

Example::

    >>> text("last_digit", "en")
    'rounding slip in the last digit: only the last digit is off; round that digit again'
"""

from __future__ import annotations

#: The slips seen in the typed numbers alone, against the right ones: no other computation.
IN_THE_NUMBERS = ("last_digit", "sign_flipped", "minus_dropped")

#: Each slip's text, keyed by language.
TEXTS: dict[str, dict[str, str]] = {
    "last_digit": {
        "zh": "最后一位的舍入失误：只差最后一位，检查这一位的四舍五入",
        "en": "rounding slip in the last digit: only the last digit is off; round that digit again",
    },
    "sign_flipped": {
        "zh": "符号反了：每个数的正负号都与正确值相反（例如梯度：下降时减去它）",
        "en": "wrong sign: every number has the opposite sign (a gradient, for "
        "one: descent subtracts it)",
    },
    "minus_dropped": {
        "zh": "可能丢了负号：去掉负数的负号就是你的数（检查 Value 中的 −1）",
        "en": "possibly a dropped minus sign: these are the right numbers with a "
        "negative one written positive (check the −1 in the values)",
    },
    "raw_vs_scaled": {
        "zh": "原始分数与缩放后分数混淆了：这是另一个阶段的数（÷√d_k 之前/之后）",
        "en": "raw and scaled scores confused: these are the other stage's numbers "
        "(before/after ÷√d_k)",
    },
    "prompt_swapped": {
        "zh": "提示 A/B 弄反了：这是另一条提示同一位置的数",
        "en": "prompts A and B swapped: these are the other prompt's numbers at the same place",
    },
}
TEXTS["shape_order"] = {
    "zh": "各轴大小都对，但顺序不对：逐个写出每个轴的名字（B、n_head、T、d_head……），"
    "再看 transpose 把它放到了哪里",
    "en": "the right sizes in the wrong order: name each axis (B, n_head, T, d_head...) and "
    "check where the transpose puts it",
}
TEXTS["shape_of"] = {
    "zh": "这是「{stage}」的形状，不是所问的张量",
    "en": "that is the shape of {stage}, not of the tensor asked for",
}


TEXTS["same:zero"] = {
    "zh": "这是 0，但所问的数并不是 0：把它算出来",
    "en": "that is 0, but the number asked for is not 0: compute it",
}
TEXTS["same:one"] = {
    "zh": "这是 1，但所问的数并不是 1：把它算出来",
    "en": "that is 1, but the number asked for is not 1: compute it",
}
TEXTS["same:stage"] = {
    "zh": "这是上一步「{stage}」同一位置的数：还差一步",
    "en": "those are the numbers of the step before ({stage}) at the same place: one step "
    "is left to do",
}
TEXTS["same"] = {"zh": "这是{what}，不是所问的数", "en": "that is {what}, not the number asked for"}


def text(slip: str, lang: str) -> str:
    """A slip's words in ``lang``; ``shape_of:STAGE`` names the stage. A slip since renamed
    has no words (an empty string)."""
    if slip in TEXTS:
        return TEXTS[slip][lang]
    if slip.startswith("same:stage:"):
        return TEXTS["same:stage"][lang].format(stage=slip.removeprefix("same:stage:"))
    if slip.startswith("same:"):
        return _exercise_near(slip.removeprefix("same:"), lang)
    name, _, stage = slip.partition(":")
    if name not in TEXTS:
        return ""
    if not stage:
        return TEXTS[name][lang]
    from attnlab.grading.practice_shapes import ASKED, OTHERS

    words = {**OTHERS, **ASKED}.get(stage)
    what = words[0 if lang == "zh" else 1] if words else stage
    return TEXTS[name][lang].format(stage=what)


def _exercise_near(which: str, lang: str) -> str:
    """The words of an exercise's nearby number ``EXERCISE.I``; none for one since removed."""
    from attnlab.content import knowledge

    exercise_id, _, index = which.rpartition(".")
    try:
        near = knowledge.exercise(exercise_id, lang).confusables[int(index)]
    except (KeyError, ValueError, IndexError):
        return ""
    return TEXTS["same"][lang].format(what=near.what)
