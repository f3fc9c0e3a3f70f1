"""Grade numbers a learner computed by hand, and name the mistake behind a wrong answer.

An :class:`Answer` is one stage of one prompt (optionally one row) as the learner wrote it. The
right numbers come from :func:`attnlab.debug.diagnosis.correct_stages` (i.e.
:mod:`attnlab.pipeline`); a wrong answer is compared with every catalogue mistake through
:func:`attnlab.debug.diagnosis.diagnose`.
The tolerance follows the learner's rounding (three decimals → ±0.0005, plus float slack).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from attnlab import memory_guard, safe_load
from attnlab.debug import diagnosis
from attnlab.debug.catalogue import CATALOGUE, Mistake
from attnlab.errors import InputError
from attnlab.example import head_index, prompt_index
from attnlab.lesson.steps import MistakeInput
from attnlab.show.document import to_json

_NUMBER = re.compile(r"[-−+]?(?:inf|∞|nan|\d+\.?\d*(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?)", re.I)
_INFINITY = re.compile(r"inf|∞", re.I)
#: Longest number accepted as written (seventeen significant digits is all a float keeps).
MAX_NUMBER_CHARS = 64


@dataclass(frozen=True)
class Answer:
    """One hand-computed answer: the stage, prompt, row, head and the numbers as written.

    ``prompt`` is read by :func:`attnlab.example.prompt_index` (``"A"``, ``"b"``, ``"1"``);
    ``row`` is the query position ``t`` (from 0, as the tables label rows); ``head`` is numbered
    from 1, as ``trace`` and the lesson number heads (ignored for a single head).
    """

    stage: str
    prompt: str
    values: tuple[str, ...]
    row: int | None = None
    head: int = 1


@dataclass
class Verdict:
    """How one answer fared: right or not, the expected numbers and the matching mistakes."""

    answer: Answer
    correct: bool
    expected: list[float]
    entered: list[float]
    tol: float
    mistakes: list[Mistake] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        a = self.answer
        return {
            "stage": a.stage,
            "prompt": a.prompt,
            "row": a.row,
            "head": a.head,
            "entered": to_json(self.entered),
            "expected": to_json(self.expected),
            "tolerance": self.tol,
            "correct": self.correct,
            "mistakes": [
                {"name": m.name, "item": m.item, "section": m.section, "redo": m.redo}
                for m in self.mistakes
            ],
        }


def parse_values(text: str) -> tuple[str, ...]:
    """``"0.6 0.4"``, ``"[0.6, 0.4]"`` or ``"1, -inf; 0.8 0.4"`` → the numbers as written."""
    found = tuple(_NUMBER.findall(text))
    leftover = _NUMBER.sub("", text)
    if not found or re.search(r"[^\s,;\[\]()]", leftover):
        raise InputError(f'--values: expected numbers like "0.6 0.4" (or -inf), got {text[:40]!r}')
    return tuple(check_number(v, "--values") for v in found)


def check_number(text: str, where: str) -> str:
    """``text`` if it is one number a float64 holds; ``inf``/``-inf`` only when written so.

    Raises:
        InputError: for NaN, a number that overflows a float (``1e999``, 400 digits) or more
            than :data:`MAX_NUMBER_CHARS` characters, naming ``where``.
    """
    if len(text) > MAX_NUMBER_CHARS:
        raise InputError(
            f"{where}: expected a number of at most {MAX_NUMBER_CHARS} characters, got one of "
            f"{len(text):,} ({text[:12]!r}...)"
        )
    if not _NUMBER.fullmatch(text):
        raise InputError(f"{where}: expected a number like 0.6 (or -inf), got {text!r}")
    value = _to_float(text)
    if math.isnan(value):
        raise InputError(f"{where}: expected a number, got {text!r} (NaN is never an answer)")
    if math.isinf(value) and not _INFINITY.search(text):
        raise InputError(
            f"{where}: expected a number a float can hold (|x| <= 1.8e308), got {text!r}; "
            "write -inf for a masked score"
        )
    return text


def _to_float(text: str) -> float:
    t = text.replace("−", "-").replace("∞", "inf").lower()
    return float(t)


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


def expected_slice(answer: Answer, inp: MistakeInput) -> torch.Tensor:
    """The right numbers for ``answer`` (raises ``InputError`` for an unknown stage/row/head)."""
    stages = diagnosis.correct_stages(inp)
    if answer.stage not in stages:
        raise InputError(f"stage: expected one of {', '.join(stages)}, got {answer.stage[:40]!r}")
    t = stages[answer.stage][prompt_index(answer.prompt, inp.x.size(0))]
    if answer.stage not in ("x", "output", "concat", "logits") and not inp.is_single_head:
        t = t[head_index(answer.head, t.size(0))]  # [T, ...]
    if answer.row is not None:
        if not 0 <= answer.row < t.size(0):
            raise InputError(
                f"row: expected 0..{t.size(0) - 1} for {answer.stage}, got {answer.row}"
            )
        t = t[answer.row]
    return t.flatten()


def check_answer(answer: Answer, inp: MistakeInput) -> Verdict:
    """Grade one answer; a wrong one is matched against the catalogue."""
    want = expected_slice(answer, inp)
    if len(answer.values) != want.numel():
        where = f"row {answer.row}" if answer.row is not None else "the whole table"
        raise InputError(
            f"{answer.stage} ({where}) of prompt {answer.prompt}: expected "
            f"{want.numel()} numbers, got {len(answer.values)}"
        )
    entered = [_to_float(v) for v in answer.values]
    tol = diagnosis.decimals_tolerance(list(answer.values))
    got = torch.tensor(entered, dtype=torch.float64)
    correct = diagnosis.values_match(got, want, tol)
    found = (
        []
        if correct
        else diagnosis.diagnose(
            answer.stage,
            entered,
            prompt=prompt_index(answer.prompt, inp.x.size(0)),
            row=answer.row,
            head=0 if inp.is_single_head else head_index(answer.head, inp.num_heads),
            tol=tol,
            inp=inp,
        )
    )
    return Verdict(answer, correct, want.tolist(), entered, tol, found)


def _answer(entry: Any, n: int) -> Answer:
    if not isinstance(entry, dict):
        raise InputError(
            f"answer {n}: expected a table with stage, prompt, values; got {type(entry).__name__}"
        )
    for key in ("stage", "values"):
        if key not in entry:
            raise InputError(f"answer {n}: missing {key!r} (keys found: {', '.join(entry) or '-'})")
    raw = entry["values"]
    where = f"answer {n}: values"
    if isinstance(raw, list):
        values = tuple(_entry_value(v, where) for v in _flat(raw, where))
    else:
        values = parse_values(str(raw))
    row = entry.get("row")
    if row is not None and (isinstance(row, bool) or not isinstance(row, int)):
        raise InputError(f"answer {n}: row must be an integer, got {row!r}")
    head = entry.get("head", 1)  # numbered from 1, as trace and the lesson number heads
    if isinstance(head, bool) or not isinstance(head, int) or head < 1:
        raise InputError(f"answer {n}: head must be an integer from 1, got {head!r}")
    return Answer(str(entry["stage"]), str(entry.get("prompt", "A")), values, row, head)


def _entry_value(value: Any, where: str) -> str:
    """One value of an answer file's list, as the text the tolerance is read from."""
    if isinstance(value, str):
        return check_number(value.strip(), where)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: expected numbers, got {type(value).__name__} {value!r:.20}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise InputError(
            f"{where}: expected numbers a float can hold (|x| <= 1.8e308), got {number}; "
            'write "-inf" (a string) for a masked score'
        )
    return repr(number)


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
