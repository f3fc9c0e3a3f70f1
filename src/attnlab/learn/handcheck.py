"""``attnlab check``'s questions: a stage of one prompt (optionally one row and head), the
learner's numbers for it, from the command line or an answer file (TOML or JSON).

An :class:`Answer` is read with :mod:`attnlab.learn.answer_parse` and graded by
:func:`attnlab.learn.grading.grade`, the grader of the quiz and the web exercises too. The
right numbers come from :func:`attnlab.debug.diagnosis.correct_stages` (i.e.
:mod:`attnlab.pipeline`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from attnlab import memory_guard, safe_load
from attnlab.debug import diagnosis
from attnlab.debug.catalogue import CATALOGUE
from attnlab.errors import InputError
from attnlab.example import head_index, prompt_index
from attnlab.learn import grading
from attnlab.learn.answer_parse import Typed, file_value, parse_numbers
from attnlab.learn.grading import Address, Verdict
from attnlab.learn.reasons import comma_hint
from attnlab.lesson.steps import MistakeInput

# Stages without a head axis in a multi-head input.
_NO_HEAD_AXIS = ("x", "output", "concat", "logits")


@dataclass(frozen=True)
class Answer:
    """One hand-computed answer: the stage, prompt, row, head and the numbers as typed.

    ``prompt`` is read by :func:`attnlab.example.prompt_index` (``"A"``, ``"b"``, ``"1"``);
    ``row`` is the query position ``t`` (from 0, as the tables label rows); ``head`` is numbered
    from 1, as ``trace`` and the lesson number heads (ignored for a single head); ``text`` is
    the answer as typed, when it was one string (a decimal comma in it is pointed out).
    """

    stage: str
    prompt: str
    values: tuple[Typed, ...]
    row: int | None = None
    head: int = 1
    text: str = ""


def lab_input(path: Path | None) -> MistakeInput:
    """The lesson example, or the learner's ``--input`` file as a :class:`MistakeInput`."""
    if path is None:
        return diagnosis.lesson_input()
    from attnlab.inputs import load_input

    lab = load_input(path)
    # The catalogue recomputes every stage once per mistake and keeps them all; batch_mixed
    # reads the B prompts as one sequence of B·T tokens, so its scores are B times larger.
    copies = len(CATALOGUE) + 1
    memory_guard.check_budget(
        copies * lab.stage_bytes() + memory_guard.SCORE_TENSORS * lab.x.size(0) * lab.score_bytes(),
        f"check --input: the right stages and {copies - 1} mistakes' stages",
        "they grow with B·n_head·T²; use a shorter sequence or fewer prompts",
    )
    lab.stages()  # refuses, naming the stage, numbers that overflow float64
    return MistakeInput(lab.x, lab.w_q, lab.w_k, lab.w_v, lab.num_heads or 1, lab.w_o)


def address(answer: Answer, inp: MistakeInput) -> Address:
    """Where ``answer`` sits in the stages of ``inp`` (raises ``InputError`` for an unknown
    stage, prompt, head or row, naming what is there)."""
    stages = diagnosis.correct_stages(inp)
    if answer.stage not in stages:
        raise InputError(f"stage: expected one of {', '.join(stages)}, got {answer.stage[:40]!r}")
    b = prompt_index(answer.prompt, inp.x.size(0))
    t = stages[answer.stage][b]
    if answer.stage not in _NO_HEAD_AXIS and not inp.is_single_head:
        t = t[head_index(answer.head, t.size(0))]  # [T, ...]
    if answer.row is not None and not 0 <= answer.row < t.size(0):
        raise InputError(f"row: expected 0..{t.size(0) - 1} for {answer.stage}, got {answer.row}")
    return Address(answer.stage, b, 1 if inp.is_single_head else answer.head, answer.row)


def expected_slice(at: Address, inp: MistakeInput) -> torch.Tensor:
    """The right numbers at ``at`` (from :func:`address`), flattened."""
    t = diagnosis.correct_stages(inp)[at.stage][at.prompt]
    if at.stage not in _NO_HEAD_AXIS and not inp.is_single_head:
        t = t[at.head - 1]  # [T, ...]
    return (t if at.row is None else t[at.row]).flatten()


def check_answer(answer: Answer, inp: MistakeInput) -> Verdict:
    """Grade one answer with :func:`attnlab.learn.grading.grade`; a wrong one is matched
    against the catalogue. Raises ``InputError`` when the count of numbers is off."""
    at = address(answer, inp)
    want = expected_slice(at, inp)
    verdict = grading.grade(list(answer.values), want.tolist(), at=at, inp=inp)
    if verdict.kind == "count":
        where = f"row {answer.row}" if answer.row is not None else "the whole table"
        hint = comma_hint(answer.text)
        raise InputError(
            f"{answer.stage} ({where}) of prompt {answer.prompt}: expected "
            f"{want.numel()} numbers, got {len(answer.values)}"
            + (f" (decimal point: {hint})" if hint else "")
        )
    return verdict


def _answer(entry: Any, n: int) -> Answer:
    if not isinstance(entry, dict):
        raise InputError(
            f"answer {n}: expected a table with stage, prompt, values; got {type(entry).__name__}"
        )
    for key in ("stage", "values"):
        if key not in entry:
            raise InputError(f"answer {n}: missing {key!r} (keys found: {', '.join(entry) or '-'})")
    raw, text = entry["values"], ""
    where = f"answer {n}: values"
    if isinstance(raw, list):
        values = tuple(file_value(v, where) for v in _flat(raw, where))
    else:
        text = str(raw)
        values = tuple(parse_numbers(text, where, infinity=True))
    row = entry.get("row")
    if row is not None and (isinstance(row, bool) or not isinstance(row, int)):
        raise InputError(f"answer {n}: row must be an integer, got {row!r}")
    head = entry.get("head", 1)  # numbered from 1, as trace and the lesson number heads
    if isinstance(head, bool) or not isinstance(head, int) or head < 1:
        raise InputError(f"answer {n}: head must be an integer from 1, got {head!r}")
    return Answer(str(entry["stage"]), str(entry.get("prompt", "A")), values, row, head, text)


def _flat(items: list[Any], where: str) -> list[Any]:
    """The numbers of a nested list, in order (one level of rows, e.g. a whole table)."""
    out: list[Any] = []
    for v in items:
        if isinstance(v, list):
            if any(isinstance(w, list) for w in v):
                raise InputError(f"{where}: expected numbers or rows of numbers, got deeper lists")
            out.extend(v)
        else:
            out.append(v)
    return out


def load_answers(path: Path) -> list[Answer]:
    """Answers from a TOML (``[[answer]]`` tables) or JSON (a list, or ``{"answer": [...]}``)
    file."""
    if not path.exists():
        raise InputError(f"answer file not found: {path}")
    data: Any = safe_load.load(path, "answer file")
    entries = data.get("answer", data.get("answers")) if isinstance(data, dict) else data
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{path.name}: expected a list of answers ([[answer]] tables in TOML)")
    return [_answer(e, n) for n, e in enumerate(entries, start=1)]
