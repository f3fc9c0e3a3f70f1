"""Answer keys: what is right at the place an answer is about, and what each way of going wrong
gives there, computed from the lesson once and then only read by the grader.

:class:`Address` names the numbers of a stage an answer is about. An :class:`AnswerKey` holds
the right numbers and the decimals asked for and, computed the first time a verdict needs them,
the numbers a learner reaches by hand from rounded intermediates (:mod:`~attnlab.grading.rounding`),
every catalogued mistake's numbers (:mod:`attnlab.mistakes.diagnosis`), the other prompt's and the
other score stage's numbers (slips), and the places of the stage an index read on the wrong axis
lands on. :func:`exercise_key` keeps one key per exercise of the knowledge checks for the life of
the process, so grading a second answer reads the lesson no more. Prompts are batch rows
(:func:`attnlab.core.example.prompt_index`), heads are numbered from 1, rows from 0 as ``trace``
labels them.

Example::

    >>> key = exercise_key("4c")
    >>> key.at.label(), [m.name for m, _ in key.mistakes][:1]
    ('scaled_scores[0,0,0]', ['token_ids_as_x'])
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Any

import torch

from attnlab.content import knowledge
from attnlab.core import example
from attnlab.core.steps import MistakeInput, lesson_input
from attnlab.grading import rounding
from attnlab.lesson import numbers
from attnlab.mistakes import diagnosis
from attnlab.mistakes.catalogue import CHECK_STAGES, Mistake, get

#: The score stages a learner confuses with each other (before and after ÷√d_k).
_SCORE_PAIR = {"raw_scores": "scaled_scores", "scaled_scores": "raw_scores"}
#: The sources of lesson numbers whose first index is the prompt (batch row).
_BY_PROMPT = ("lesson", "experiment")
#: The stage before each one where the same place may hold as many numbers: what a learner who
#: stops a step early gives (the masked row for its weights, the weights for the output).
_PREVIOUS = {"masked_scores": "scaled_scores", "weights": "masked_scores", "output": "weights",
             "logits": "output"}  # fmt: skip
#: Numbers a learner may give without computing anything: 0 ("a 0 score gets no weight") and 1
#: ("a row sums to 1"), each with the slip that names it.
_CONSTANTS = (("same:zero", 0.0), ("same:one", 1.0))
#: The slips of those numbers given without computing anything.
GUESSES = tuple(slip for slip, _ in _CONSTANTS)


@dataclass(frozen=True)
class Address:
    """Which numbers of a stage an answer is about.

    ``prompt`` is the batch row (:func:`attnlab.core.example.prompt_index` reads ``"A"``/``"1"``),
    ``head`` is numbered from 1 (ignored for a single head), ``row`` is the query position
    ``t`` from 0 (None: the whole table), ``column`` one number of the row (None: all of it).
    """

    stage: str
    prompt: int = 0
    head: int = 1
    row: int | None = None
    column: int | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"stage", "prompt": "A", "head": 1, "row", "column"}``, heads from 1."""
        name = example.prompt_names(self.prompt + 1)[self.prompt]
        return {"stage": self.stage, "prompt": name, "head": self.head, "row": self.row,
                "column": self.column}  # fmt: skip

    def label(self) -> str:
        """``weights[1,1,0]``: the stage and its indices, as the lesson writes them."""
        index = [self.prompt, *(i for i in (self.row, self.column) if i is not None)]
        return f"{self.stage}[{','.join(str(i) for i in index)}]"


class AnswerKey:
    """The right numbers of one question and the wrong numbers the grader names.

    Args:
        expected: the right numbers, flattened.
        decimals: how many decimals the question asks for (0: any rounding is judged as given).
        at: the stage numbers asked for (None: a number that is no stage's, e.g. a loss).
        inp: the input ``at`` refers to (default: the lesson example).
        other_prompts: for a number that is not a stage, the same number of the other prompts.
        section: the section the question belongs to.
        declared: nearby numbers the question names (the loss before a step for the loss after
            it), each with the slip id that names it (``"same:16f.0"``).

    :attr:`carried`, :attr:`right`, :attr:`mistakes`, :attr:`score_pair`, :attr:`swapped`,
    :attr:`confusables` and :attr:`misread` are computed the first time a verdict needs them,
    then kept with the key.
    """

    def __init__(
        self,
        expected: list[float],
        decimals: int = 0,
        at: Address | None = None,
        inp: MistakeInput | None = None,
        other_prompts: tuple[list[float], ...] = (),
        section: int = 0,
        declared: tuple[tuple[str, list[float]], ...] = (),
    ) -> None:
        self.expected, self.decimals, self.at, self.section = expected, decimals, at, section
        self.inp = lesson_input() if inp is None else inp
        self._other_prompts = other_prompts
        self._declared = declared

    @functools.cached_property
    def confusables(self) -> tuple[tuple[str, list[float]], ...]:
        """The nearby numbers a learner may give for these, each with the slip that names it:
        the question's own (:attr:`declared`), 0 and 1, the signs flipped or the minus signs
        dropped, the other score stage, the other prompts, the stage before at the same place.
        Only those of the right length that are not the right numbers, each once (the first
        name kept); the catalogue mistakes are :attr:`mistakes`."""
        n = len(self.expected)
        found = [*self._declared, *((slip, [c] * n) for slip, c in _CONSTANTS)]
        if self.score_pair is not None:
            found.append(("raw_vs_scaled", self.score_pair))
        found += [("prompt_swapped", values) for values in self.swapped]
        before = _PREVIOUS.get(self.at.stage) if self.at is not None else None
        if self.at is not None and before is not None:
            table = diagnosis.correct_stages(self.inp).get(before)
            got = None if table is None else diagnosis.value_at(table, *_place(self.at))
            if got is not None:
                found.append((f"same:stage:{before}", got.flatten().double().tolist()))
        found += _signs(self.expected)  # last: a stage that holds them is named first
        kept: list[tuple[str, list[float]]] = []
        for slip, values in found:
            if len(values) == n and values != self.expected and all(v != values for _, v in kept):
                kept.append((slip, values))
        return tuple(kept)

    @functools.cached_property
    def others(self) -> list[list[float]]:
        """Every wrong set of numbers the grader knows here: the catalogue mistakes' and the
        :attr:`confusables`, those as long as the answer."""
        n = len(self.expected)
        return [v for _, v in (*self.mistakes, *self.confusables) if len(v) == n]

    @functools.cached_property
    def carried(self) -> tuple[list[float], ...]:
        """The right numbers reached from intermediates rounded to
        :data:`~attnlab.grading.rounding.CARRIED` decimals, one set per way of carrying
        (:func:`~attnlab.grading.rounding.carried`); none when there is nothing to carry."""
        if self.at is None:
            return ()
        return tuple(rounding.carried(self.at.stage, *_place(self.at), self.inp))

    @functools.cached_property
    def right(self) -> list[float] | None:
        """The right numbers at :attr:`at` as the catalogue's tables hold them."""
        if self.at is None:
            return None
        table = diagnosis.correct_stages(self.inp).get(self.at.stage, torch.empty(0))
        part = diagnosis.value_at(table, *_place(self.at))
        return None if part is None else part.flatten().double().tolist()

    @functools.cached_property
    def mistakes(self) -> tuple[tuple[Mistake, list[float]], ...]:
        """Each catalogue mistake whose numbers at :attr:`at` are not the right ones, with those
        numbers, in catalogue order (:func:`attnlab.mistakes.diagnosis.mistake_values`)."""
        if self.at is None:
            return ()
        found = diagnosis.mistake_values(self.at.stage, *_place(self.at), self.inp)
        return tuple((get(name), t.flatten().double().tolist()) for name, t in found.items())

    @functools.cached_property
    def score_pair(self) -> list[float] | None:
        """The other score stage's numbers at the same place (raw for scaled and back)."""
        at = self.at
        other = _SCORE_PAIR.get(at.stage) if at is not None else None
        if at is None or other is None:
            return None
        got = diagnosis.value_at(diagnosis.correct_stages(self.inp)[other], *_place(at))
        return None if got is None else got.flatten().tolist()

    @functools.cached_property
    def swapped(self) -> tuple[list[float], ...]:
        """The same numbers of each other prompt, where they differ from the right ones."""
        if self.at is None:
            return self._other_prompts
        table = diagnosis.correct_stages(self.inp)[self.at.stage]
        prompt, head, row, column = _place(self.at)
        right = diagnosis.value_at(table, prompt, head, row, column)
        found = []
        for b in range(table.size(0)):
            got = diagnosis.value_at(table, b, head, row, column)
            if b == prompt or got is None or right is None:
                continue
            if not diagnosis.values_match(got, right, 1e-9):
                found.append(got.flatten().tolist())
        return tuple(found)

    @functools.cached_property
    def misread(self) -> tuple[torch.Tensor, list[tuple[tuple[int, int, int], Address]]] | None:
        """For one number of a single head's ``[B, T, T']`` stage: the whole table and its
        other places, the likeliest misreading first (the same prompt before the other, the
        same row before another, then the nearest column); else None."""
        at = self.at
        if at is None or at.row is None or at.column is None or not self.inp.is_single_head:
            return None
        table = diagnosis.correct_stages(self.inp)[at.stage]
        if table.dim() != 3:
            return None
        row, column = at.row, at.column
        every = itertools.product(*(range(n) for n in table.shape))  # [b, t, c], row-major
        places = [p for p in every if p != (at.prompt, row, column)]
        places.sort(
            key=lambda p: (p[0] != at.prompt, p[1] != row, abs(p[1] - row) + abs(p[2] - column))
        )
        return table, [((b, t, c), Address(at.stage, b, row=t, column=c)) for b, t, c in places]


def _signs(expected: list[float]) -> list[tuple[str, list[float]]]:
    """The right numbers with every sign flipped, and with the minus signs dropped (the slips
    of :func:`attnlab.grading.grade.judge` seen in the numbers alone); −∞ stays −∞."""
    finite = [e for e in expected if math.isfinite(e)]
    found = []
    if any(e != 0 for e in finite):
        found.append(("sign_flipped", [-e if math.isfinite(e) else e for e in expected]))
    if any(e < 0 for e in finite):
        found.append(("minus_dropped", [abs(e) if math.isfinite(e) else e for e in expected]))
    return found


def _place(at: Address) -> tuple[int, int, int | None, int | None]:
    return at.prompt, at.head, at.row, at.column


@functools.cache
def exercise_key(exercise_id: str) -> AnswerKey:
    """The key of a knowledge-check exercise (``"4c"``), built on first use and kept.

    Raises:
        KeyError: for an exercise id that does not exist.
    """
    ex = knowledge.exercise(exercise_id, "en")
    return _key(ex.key, ex.decimals, [c.key for c in ex.confusables], ex.id, ex.section)


def _key(key: str, decimals: int, declared: list[str], exercise_id: str = "", section: int = 0
         ) -> AnswerKey:  # fmt: skip
    """The answer key of the lesson number ``key``, with the nearby numbers ``declared`` (lesson
    number keys) named ``same:EXERCISE.i``."""
    at = address_of(key)
    others = () if at is not None else _other_prompts(key)
    near = tuple((f"same:{exercise_id}.{i}", numbers.tensor(k).double().flatten().tolist())
                 for i, k in enumerate(declared))  # fmt: skip
    expected = numbers.tensor(key).double().flatten().tolist()
    return AnswerKey(expected, decimals, at, None, others, section, near)


def separating_decimals(key: str, declared: list[str], asked: int) -> int:
    """The decimals an exercise asks for: ``asked``, or more when rounded to that few its
    answer (the lesson number ``key``) could not be told from a catalogued mistake or a nearby
    number (:attr:`AnswerKey.confusables`, with ``declared`` keys): the loss after a step from
    the one before it. An exercise about whole numbers (``asked`` 0) stays at 0."""
    if asked <= 0:
        return asked
    from attnlab.grading.grade import needed_decimals

    answer = _key(key, asked, declared)
    return max(asked, needed_decimals(answer.expected, answer.others))


def address_of(key: str) -> Address | None:
    """The stage numbers a lesson-number key names (``"weights[1,1,0]"``), or None when the key
    is not one row or number of a stage (``"cost.elements_long"``, ``"uniform.mean[1,1,:]"``)."""
    source, stage, index = numbers.parse_key(key)
    if source != "lesson" or stage not in CHECK_STAGES or not index or len(index) > 3:
        return None
    shape = numbers.tensor(stage).shape  # [B, T, ...]
    places: list[int | None] = []
    for i, n in zip(index, shape, strict=False):
        if isinstance(i, slice):
            if i != slice(None):
                return None
            places.append(None)
        else:
            places.append(i % n)
    prompt, row, column = [*places, None, None][:3]
    if prompt is None or (row is None and column is not None):
        return None
    return Address(stage, prompt, row=row, column=column)


def _other_prompts(key: str) -> tuple[list[float], ...]:
    """The same lesson number for the other prompts, when the key's first index is the prompt
    (``experiment.losses[1]`` → A's loss): what a learner who swapped the prompts typed."""
    source, name, index = numbers.parse_key(key)
    if source not in _BY_PROMPT or not index or not isinstance(index[0], int):
        return ()  # a demo row (mask_demo.late_zero[0]) has no prompts to swap
    if index[0] not in (0, 1):
        return ()
    rest = ["" if isinstance(i, slice) else str(i) for i in index[1:]]
    rest = [":" if r == "" else r for r in rest]
    return tuple(
        numbers.tensor(f"{source}.{name}[{','.join([str(b), *rest])}]").double().flatten().tolist()
        for b in range(2)
        if b != index[0]
    )
