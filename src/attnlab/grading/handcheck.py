"""``attnlab check``'s questions: a stage of one prompt (optionally one row and head), the
learner's numbers for it, from the command line or an answer file (TOML or JSON).

An :class:`Answer` is read with :func:`attnlab.grading.answers.parse_numbers` and graded by
:func:`attnlab.grading.grade.grade`, the grader of the quiz and the web exercises too. The
right numbers come from :func:`attnlab.mistakes.diagnosis.correct_stages` (i.e.
:mod:`attnlab.core.pipeline`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import torch

from attnlab.core import memory_guard
from attnlab.core.example import head_index, prompt_index
from attnlab.core.steps import MistakeInput, lesson_input
from attnlab.grading import grade as grading
from attnlab.grading.answers import (
    MAX_NUMBER_CHARS,
    AnswerError,
    Typed,
    check_count,
    parse_numbers,
    read_number,
)
from attnlab.grading.grade import Address, Verdict
from attnlab.inputs import safe_load
from attnlab.mistakes import diagnosis
from attnlab.mistakes.catalogue import CATALOGUE
from attnlab.text.errors import TEXT, input_error

# Stages without a head axis in a multi-head input.
_NO_HEAD_AXIS = ("x", "output", "concat", "logits")


@dataclass(frozen=True)
class Answer:
    """One hand-computed answer: the stage, prompt, row, head and the numbers as typed.

    ``prompt`` is read by :func:`attnlab.core.example.prompt_index` (``"A"``, ``"b"``, ``"1"``);
    ``row`` is the query position ``t`` (from 0, as the tables label rows); ``head`` is numbered
    from 1, as ``trace`` and the lesson number heads (1 is the only head of a single-head
    input); ``text`` is the answer as typed, when it was one string (a decimal comma in it is
    pointed out).
    """

    stage: str
    prompt: str
    values: tuple[Typed, ...]
    row: int | None = None
    head: int = 1
    text: str = ""
    decimals: int = 0  #: the decimals asked for (practice's); 0: any rounding judged as given


def lab_input(path: Path | None) -> MistakeInput:
    """The lesson example, or the learner's ``--input`` file as a :class:`MistakeInput`."""
    if path is None:
        return lesson_input()
    from attnlab.inputs.model import load_input

    lab = load_input(path)
    # The catalogue recomputes every stage once per mistake and keeps them all; batch_mixed
    # reads the B prompts as one sequence of B·T tokens, so its scores are B times larger.
    copies = len(CATALOGUE) + 1
    memory_guard.check_budget(
        copies * lab.stage_bytes() + memory_guard.SCORE_TENSORS * lab.x.size(0) * lab.score_bytes(),
        {"zh": f"check --input：正确的各阶段和 {copies - 1} 种错误的各阶段",
         "en": f"check --input: the right stages and {copies - 1} mistakes' stages"},
        {lang: TEXT[lang]["grows"] for lang in TEXT},
    )  # fmt: skip
    lab.stages()  # refuses, naming the stage, numbers that overflow float64
    return lab.mistake_input()


def address(answer: Answer, inp: MistakeInput) -> Address:
    """Where ``answer`` sits in the stages of ``inp`` (raises ``InputError`` for an unknown
    stage, prompt, head or row, naming what is there; a single-head input has head 1 only)."""
    stages = diagnosis.correct_stages(inp)
    if answer.stage not in stages:
        raise input_error("stage", names=", ".join(stages), got=answer.stage[:40])
    b = prompt_index(answer.prompt, inp.x.size(0))
    # Every head is checked, for every stage: one the input does not have is a mistake even
    # where the stage has no head axis (the single head is head 1).
    head = head_index(answer.head, 1 if inp.is_single_head else inp.num_heads)
    t = stages[answer.stage][b]
    if answer.stage not in _NO_HEAD_AXIS and not inp.is_single_head:
        t = t[head]  # [T, ...]
    if answer.row is not None and not 0 <= answer.row < t.size(0):
        raise input_error("row", last=t.size(0) - 1, stage=answer.stage, got=answer.row)
    return Address(answer.stage, b, 1 if inp.is_single_head else answer.head, answer.row)


def expected_slice(at: Address, inp: MistakeInput) -> torch.Tensor:
    """The right numbers at ``at`` (from :func:`address`), flattened."""
    t = diagnosis.correct_stages(inp)[at.stage][at.prompt]
    if at.stage not in _NO_HEAD_AXIS and not inp.is_single_head:
        t = t[at.head - 1]  # [T, ...]
    return (t if at.row is None else t[at.row]).flatten()


def check_answer(answer: Answer, inp: MistakeInput) -> Verdict:
    """Grade one answer with :func:`attnlab.grading.grade.grade`; a wrong one is matched
    against the catalogue, and too few or too many numbers is the ``"count"`` verdict."""
    at = address(answer, inp)
    want = expected_slice(at, inp)
    if at.row is None and answer.values:
        _one_row_for_a_table(answer, expected_slice(replace(at, row=0), inp).numel(), want.numel())
    return grading.grade(list(answer.values), want.tolist(), answer.decimals, at=at, inp=inp)


def _one_row_for_a_table(answer: Answer, per: int, total: int) -> None:
    """Refuse one row's worth of numbers given for a whole table: the question is which row,
    and the grader cannot guess it (``check --stage logits`` without ``--row``)."""
    rows = total // per if per else 0
    if rows > 1 and len(answer.values) == per:
        raise input_error("which_row", stage=answer.stage, prompt=answer.prompt, rows=rows,
                          per=per, got=len(answer.values), last=rows - 1, total=total)  # fmt: skip


def _answer(entry: Any, n: int) -> Answer:
    if not isinstance(entry, dict):
        raise input_error("answer_table", n=n, got=type(entry).__name__)
    for key in ("stage", "values"):
        if key not in entry:
            raise input_error("answer_key", n=n, key=key, keys=", ".join(entry) or "-")
    raw, text = entry["values"], ""
    where = f"answer {n}: values"
    if isinstance(raw, list):
        flat = _flat(raw, where)
        check_count(len(flat), where)
        values = tuple(file_value(v, where) for v in flat)
    else:
        text = str(raw)
        values = tuple(parse_numbers(text, where, infinity=True))
    row = entry.get("row")
    if row is not None and (isinstance(row, bool) or not isinstance(row, int)):
        raise input_error("answer_row", n=n, got=row)
    head = entry.get("head", 1)  # numbered from 1, as trace and the lesson number heads
    if isinstance(head, bool) or not isinstance(head, int) or head < 1:
        raise input_error("answer_head", n=n, got=head)
    return Answer(str(entry["stage"]), str(entry.get("prompt", "A")), values, row, head, text)


def file_value(value: Any, where: str) -> Typed:
    """One number of an answer file's list: a string is read as typed, a JSON/TOML number as
    written (``0.426`` → 3 decimals, ``0.430`` → 3, ``1`` → 0: the file is read with
    :class:`~decimal.Decimal` numbers, which keep the digits written)."""
    if isinstance(value, str):
        return read_number(value.strip(), where, infinity=True)
    if isinstance(value, Decimal):
        if value.is_nan() or value.is_infinite():  # TOML's nan/inf
            value = float(value)
        else:
            text = str(value)
            number = float(value)
            if math.isfinite(number) and len(text) <= MAX_NUMBER_CHARS:
                return read_number(text, where)
            value = number
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        found = f"{type(value).__name__} {value!r:.20}"
        raise AnswerError(
            f"{where}: expected numbers, got {found}", f"{where}：应为数字，收到的是 {found}"
        )
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise AnswerError(
            f"{where}: expected numbers a float can hold (|x| <= 1.8e308), got {number}; "
            'write "-inf" (a string) for a masked score',
            f"{where}：应为浮点数能表示的数（|x| <= 1.8e308），收到的是 {number}；"
            '被掩码的分数请写成字符串 "-inf"',
        )
    written = str(value) if isinstance(value, int) else repr(number)
    return read_number(written if len(written) <= MAX_NUMBER_CHARS else repr(number), where)


def _flat(items: list[Any], where: str) -> list[Any]:
    """The numbers of a nested list, in order (one level of rows, e.g. a whole table)."""
    out: list[Any] = []
    for v in items:
        if isinstance(v, list):
            if any(isinstance(w, list) for w in v):
                raise input_error("answer_deep", where=where)
            out.extend(v)
        else:
            out.append(v)
    return out


_ANSWER_FILE = {"zh": "答案文件", "en": "answer file"}
#: Largest answer file: a few stages of a few numbers take a kilobyte; this refuses a huge
#: file before it is parsed (a 64 MiB one would build billions of bytes of numbers).
MAX_ANSWER_FILE_BYTES = 2**20


def load_answers(path: Path) -> list[Answer]:
    """Answers from a TOML (``[[answer]]`` tables) or JSON (a list, or ``{"answer": [...]}``)
    file of at most :data:`MAX_ANSWER_FILE_BYTES`."""
    if not path.exists():
        raise input_error("no_file", what=_ANSWER_FILE, path=path)
    data: Any = safe_load.load(path, _ANSWER_FILE, max_bytes=MAX_ANSWER_FILE_BYTES, exact=True)
    entries = data.get("answer", data.get("answers")) if isinstance(data, dict) else data
    if not isinstance(entries, list) or not entries:
        raise input_error("answer_list", name=path.name)
    return [_answer(e, n) for n, e in enumerate(entries, start=1)]
