"""Practice with fresh numbers: an exercise dealt for one section's computation, small enough to
do by hand, graded by the one grader with the mistake named.

A :class:`Practice` is dealt from a section and a seed (the same pair always gives the same
exercise). Its numbers are hand-sized: one prompt of ``T = 3`` tokens, ``C ≤ 3`` input
features, ``d_head = 2``, ``X`` in whole numbers and the weights in halves. The asked row is
chosen so that the common mistakes give a visibly different answer: the exercise is dealt again
until each mistake that can touch the asked stage (0 instead of −∞, no ÷√d_k, the softmax over
the query axis, Q and K swapped) is off by more than the precision the exercise asks for.

Example::

    >>> p = deal(5, seed=7)
    >>> p.ask()
    {'stage': 'weights', 'prompt': 'A', 'row': 1}
    >>> p.grade(" ".join(f"{v:.2f}" for v in p.expected())).correct
    True
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import torch

from attnlab.core import example
from attnlab.core.steps import MistakeInput
from attnlab.core.threads import one_thread
from attnlab.grading import practice_shapes
from attnlab.grading.answers import parse_numbers
from attnlab.grading.grade import Verdict
from attnlab.grading.handcheck import Answer, address, check_answer, expected_slice
from attnlab.grading.keys import Address
from attnlab.grading.practice_shapes import ShapePractice
from attnlab.mistakes.catalogue import CHECK_STAGES, get
from attnlab.mistakes.diagnosis import correct_stages, mistake_values
from attnlab.text.i18n import pick

#: The stage each section's practice asks for, and the row (None: the last row).
SECTIONS: dict[int, tuple[str, int | None]] = {
    4: ("raw_scores", None),  # q·k for every key: the mask comes later
    5: ("weights", 1),  # a row with a future key, so the −∞ fill matters
    6: ("output", 1),
    8: ("scaled_scores", None),
    9: ("shape", None),  # a shape, not numbers: dealt by attnlab.grading.practice_shapes
    11: ("masked_scores", 1),
    16: ("logits", 1),  # the head's output row scored by section 16's fixed W_vocab
}
#: The mistakes a dealt exercise must tell apart from the right answer (where they apply).
TELL_APART = ("mask_zero_fill", "no_scale", "softmax_query_axis", "swapped_qk")
DECIMALS = 2  #: the precision asked for
T, D_HEAD = 3, 2
_X_VALUES = (-1, 0, 1, 2)
_W_VALUES = (-1.0, -0.5, 0.0, 0.5, 1.0)
_MAX_RAW = 6.0  #: no raw score larger than this: products a learner does in their head
#: Three-token prompts, in Chinese and their English glosses, word for word.
PROMPTS = {
    "zh": (("我", "喜欢", "猫"), ("猫", "喜欢", "鱼"), ("我", "看", "书"), ("狗", "追", "猫"),
           ("你", "喜欢", "鱼"), ("猫", "看", "狗")),
    "en": (("I", "like", "cats"), ("cats", "like", "fish"), ("I", "read", "books"),
           ("dogs", "chase", "cats"), ("you", "like", "fish"), ("cats", "watch", "dogs")),
}  # fmt: skip
_MAX_DEALS = 200


@dataclass(frozen=True)
class Practice:
    """One dealt exercise: its inputs (one prompt), the stage and row asked, and its seed."""

    decimals = DECIMALS  #: the precision asked for

    section: int
    seed: int
    prompt: int  # index into :data:`PROMPTS`
    x: tuple[tuple[float, ...], ...]  # [T, C]
    w_q: tuple[tuple[float, ...], ...]  # [C, d_head]
    w_k: tuple[tuple[float, ...], ...]
    w_v: tuple[tuple[float, ...], ...]

    @property
    def id(self) -> str:
        return f"{self.section}-{self.seed}"

    @property
    def stage(self) -> str:
        return SECTIONS[self.section][0]

    @property
    def row(self) -> int:
        row = SECTIONS[self.section][1]
        return T - 1 if row is None else row

    def tokens(self, lang: str) -> list[str]:
        return list(PROMPTS[lang][self.prompt])

    def ask(self) -> dict[str, Any]:
        """What is asked, as ``attnlab check`` takes it: stage, prompt and row."""
        return {"stage": self.stage, "prompt": "A", "row": self.row}

    def input_document(self, lang: str = "zh") -> dict[str, Any]:
        """A valid ``--input`` document (one prompt): ``tokens``, ``x`` [1,T,C], the weights."""
        return {
            "tokens": [self.tokens(lang)],
            "x": [[list(r) for r in self.x]],
            "w_q": [list(r) for r in self.w_q],
            "w_k": [list(r) for r in self.w_k],
            "w_v": [list(r) for r in self.w_v],
            **({} if self.w_vocab is None else {"w_vocab": [list(r) for r in self.w_vocab]}),
        }

    @cached_property
    def inp(self) -> MistakeInput:
        """The exercise as the grader and the catalogue run it (float64)."""
        mat = lambda rows: torch.tensor(rows, dtype=torch.float64)  # noqa: E731
        w_vocab = self.w_vocab
        return MistakeInput(
            mat([self.x]), mat(self.w_q), mat(self.w_k), mat(self.w_v),
            w_vocab=None if w_vocab is None else mat(w_vocab),
        )  # fmt: skip

    @property
    def w_vocab(self) -> tuple[tuple[float, ...], ...] | None:
        """Section 16's fixed scoring layer ``[d_head, V_vocab]`` when the logits are asked."""
        if self.stage != "logits":
            return None
        return tuple(tuple(row) for row in example.lesson_w_vocab(torch.float64).tolist())

    def expected(self) -> list[float]:
        """The right numbers of the asked row, unrounded."""
        at = address(Answer(self.stage, "A", (), self.row), self.inp)
        return [float(v) for v in expected_slice(at, self.inp)]

    def grade(self, text: str) -> Verdict:
        """Grade the learner's ``text`` with the one grader (raises ``InputError`` when it is no
        list of numbers or has the wrong count)."""
        typed = tuple(parse_numbers(text, infinity=True))
        asked = Answer(self.stage, "A", typed, self.row, 1, text, self.decimals)
        return check_answer(asked, self.inp)

    def solution(self) -> list[tuple[str, torch.Tensor]]:
        """Every stage up to the asked one, for these numbers: the worked solution."""
        stages = correct_stages(self.inp)
        upto = CHECK_STAGES[: CHECK_STAGES.index(self.stage) + 1]
        return [(s, stages[s][0]) for s in upto if s in stages]


#: A dealt exercise: numbers to compute, or (section 9) a shape to name.
Dealt = Practice | ShapePractice


def _draw(section: int, seed: int, rng: random.Random) -> Practice:
    C = rng.choice((2, 3))
    prompt = rng.randrange(len(PROMPTS["en"]))
    x = tuple(tuple(float(rng.choice(_X_VALUES)) for _ in range(C)) for _ in range(T))
    w = [tuple(tuple(rng.choice(_W_VALUES) for _ in range(D_HEAD)) for _ in range(C))
         for _ in range(3)]  # fmt: skip
    return Practice(section, seed, prompt, x, w[0], w[1], w[2])


def answer_text(values: list[float] | torch.Tensor, decimals: int = DECIMALS) -> str:
    """``values`` as a learner would type them at ``decimals`` (−∞ as ``-inf``)."""
    return " ".join(
        "-inf" if v == float("-inf") else f"{v:.{decimals}f}" for v in [float(v) for v in values]
    )


def _fair(p: Practice) -> bool:
    """True when the inputs are not degenerate and the grader tells the asked mistakes apart:
    the right numbers typed at :data:`DECIMALS` are right, and each mistake that can change the
    asked stage, typed the same way, is wrong with that mistake named."""
    inp = p.inp
    if (inp.x[0].abs().sum(-1) == 0).any():
        return False  # a token with an all-zero vector
    if any((w.abs().sum(0) == 0).any() for w in (inp.w_q, inp.w_k, inp.w_v)):
        return False  # a projection with an all-zero column
    stages = correct_stages(inp)
    if stages["raw_scores"].abs().max() > _MAX_RAW:
        return False
    visible = stages["scaled_scores"][0, p.row, : p.row + 1]
    if p.stage in ("weights", "output") and float(visible.max() - visible.min()) < 0.2:
        return False  # a near-uniform row: the softmax would teach nothing
    if not p.grade(answer_text(p.expected())).correct:
        return False
    wrong = mistake_values(p.stage, 0, 1, p.row, None, inp)
    for name in TELL_APART:
        if CHECK_STAGES.index(get(name).redo) > CHECK_STAGES.index(p.stage):
            continue  # this mistake cannot change the asked stage
        if name not in wrong or wrong[name].numel() != len(p.expected()):
            return False  # here it gives the right numbers: it would go unnoticed
        verdict = p.grade(answer_text(wrong[name]))
        if verdict.correct or name not in {m.name for m in verdict.mistakes}:
            return False
    return True


def deal(section: int, seed: int | None = None) -> Dealt:
    """A fresh exercise for ``section`` (one of :data:`SECTIONS`); the same ``seed`` deals the
    same exercise, no seed a new one.

    Raises:
        ValueError: for a section with no computation to practise, or a negative seed.
    """
    if section not in SECTIONS:
        known = ", ".join(str(s) for s in SECTIONS)
        raise ValueError(f"section must be one of {known}, got {section}")
    if seed is None:
        seed = secrets.randbelow(10**6)
    if seed < 0:
        raise ValueError(f"seed must be 0 or more, got {seed}")
    if section == practice_shapes.SECTION:
        return practice_shapes.deal_shape(seed)
    rng = random.Random(f"attnlab-practice-{section}-{seed}")
    with one_thread():
        for _ in range(_MAX_DEALS):
            p = _draw(section, seed, rng)
            if _fair(p):
                return p
    raise RuntimeError(f"no fair exercise for section {section} in {_MAX_DEALS} deals")


def exercise_text(p: Dealt, lang: str) -> str:
    """The exercise as the learner reads it (:mod:`~attnlab.grading.practice_text`; for section
    9 :mod:`~attnlab.grading.practice_shapes`). It never contains the answer."""
    if isinstance(p, ShapePractice):
        return practice_shapes.exercise_text(p, lang)
    from attnlab.grading.practice_text import numbers_text

    return numbers_text(p, lang)


def solution_text(p: Dealt, lang: str) -> str:
    """The worked solution: every stage up to the asked one for these numbers, then the answer."""
    if isinstance(p, ShapePractice):
        return practice_shapes.solution_text(p, lang)
    from attnlab.grading.practice_text import numbers_solution

    return numbers_solution(p, lang)


def shown(p: Dealt) -> str:
    """The right answer as it is shown beside ✓ and in the solution."""
    if isinstance(p, ShapePractice):
        return " ".join(str(n) for n in p.shape)
    return answer_text(p.expected())


def verdict_line(p: Dealt, verdict: Verdict, text: str, lang: str) -> str:
    """One line for a dealt exercise's verdict, in the words every exercise uses
    (:func:`attnlab.grading.reasons.say`)."""
    from attnlab.grading import answers, reasons

    return reasons.say(answers.verdict_data(verdict), lang, shown(p), p.decimals, text)


def document(p: Dealt, lang: str) -> dict[str, Any]:
    """``attnlab practice --json``: ``id``, ``section``, ``input`` (a valid ``--input``
    document), ``ask`` (as ``attnlab check`` takes it) and ``text`` (never the answer)."""
    return {"id": p.id, "section": p.section, "input": p.input_document(lang), "ask": p.ask(),
            "text": exercise_text(p, lang)}  # fmt: skip


#: Dealt exercises right in a row, without the solution shown, that master a section.
MASTERY = 3


def attempt_id(section: int) -> str:
    """The id a dealt exercise's attempts are stored under: ``practice-N``."""
    return f"practice-{section}"


def attempt_data(p: Dealt, verdict: Verdict | None) -> dict[str, Any]:
    """What is stored with an attempt: the verdict as data plus the exercise's seed; with no
    verdict, the record that the worked solution was shown (``kind`` ``"solution"``)."""
    from attnlab.grading.answers import verdict_data

    data = {"kind": "solution"} if verdict is None else verdict_data(verdict)
    return {**data, "seed": p.seed}


def stored_data(attempt: dict[str, Any]) -> dict[str, Any]:
    """The verdict data kept with a stored ``practice-N`` attempt (with its ``seed``), or
    ``{}`` for one whose data cannot be read."""
    import json

    try:
        data = json.loads(attempt.get("diagnosis") or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def streak(attempts: list[dict[str, Any]]) -> int:
    """Distinct dealt exercises answered right in a row at the end of ``attempts`` (a section's
    ``practice-N`` attempts, oldest first): a wrong answer or a shown solution starts again, and
    an exercise whose solution was shown never counts (typing the answer shown is no skill)."""
    right: list[object] = []
    revealed: set[object] = set()
    for a in attempts:
        data = stored_data(a)
        if data.get("kind") == "solution":
            revealed.add(data.get("seed"))
            right = []
        elif a.get("correct") is False:
            right = []
        elif a.get("correct") and data.get("seed") not in [*right, *revealed]:
            right.append(data.get("seed"))
    return len(right)


#: The wrong try after which the worked solution is shown (and the exercise no longer counts).
REVEAL_AFTER = 2


def reveals(data: dict[str, Any], wrong: int) -> bool:
    """Whether the verdict ``data``, the ``wrong``-th wrong try in a row, is the one after which
    every front end shows the worked solution and records it as shown."""
    return data.get("kind") == "wrong" and wrong == REVEAL_AFTER


def help_text(p: Dealt, data: dict[str, Any], wrong: int, lang: str, text: str = ""
              ) -> str | None:  # fmt: skip
    """The help under a dealt exercise's verdict ``data`` after ``wrong`` wrong tries in a row
    (:mod:`attnlab.grading.ladder`): the stage's hint after the first; after
    :data:`REVEAL_AFTER`, the learner's ``text`` beside the right answer and where each named
    mistake first goes wrong (the caller shows the worked solution, :func:`solution_text`, and
    records it as shown: :func:`reveals`). None for any other verdict."""
    from attnlab.grading import ladder

    if data.get("kind") != "wrong" or wrong < 1:
        return None
    stage = "shape" if isinstance(p, ShapePractice) else p.stage
    if wrong < REVEAL_AFTER:
        return ladder.stage_hint(stage, lang)
    lines = [pick(lang, "你的答案仍不对，下面是解题过程。",
                  "Still not right: here is the worked solution.")]  # fmt: skip
    if text:
        lines.append(ladder.beside(" ".join(text.split()), shown(p), lang))
    if isinstance(p, Practice):
        at = Address(p.stage, 0, row=p.row)
        lines += ladder.first_wrong_lines(list(data.get("mistakes", [])), at, p.inp, lang)
    return "\n".join(lines)


def mastered(attempts: list[dict[str, Any]]) -> bool:
    """Whether :data:`MASTERY` dealt exercises were ever right in a row without the solution."""
    return any(streak(attempts[: i + 1]) >= MASTERY for i in range(len(attempts)))


def mastery(attempts: list[dict[str, Any]]) -> dict[int, tuple[int, bool]]:
    """Each practised section's current run and whether it is mastered, from a learner's
    attempts (a store's ``attempts()``, oldest first); sections never practised are left out."""
    found = {}
    for section in SECTIONS:
        key = attempt_id(section)
        tries = [a for a in attempts if a["exercise"] == key]
        if tries:
            found[section] = (streak(tries), mastered(tries))
    return found
