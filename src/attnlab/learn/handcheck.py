"""Grade numbers a learner computed by hand, and name the mistake behind a wrong answer.

An :class:`Answer` is one stage of one prompt (optionally one row) as the learner wrote it. The
right numbers come from :func:`attnlab.debug.diagnosis.correct_stages` (i.e.
:mod:`attnlab.pipeline`); a wrong answer is compared with every catalogue mistake through
:func:`attnlab.debug.diagnosis.diagnose`.
The tolerance follows the learner's rounding (three decimals → ±0.0005, plus float slack).
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from attnlab.debug import diagnosis
from attnlab.debug.catalogue import Mistake
from attnlab.debug.steps import MistakeInput
from attnlab.errors import InputError
from attnlab.example import head_index, prompt_index
from attnlab.show.document import to_json

_NUMBER = re.compile(r"[-−+]?(?:inf|∞|nan|\d+\.?\d*(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?)", re.I)


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
        raise InputError(f'--values: expected numbers like "0.6 0.4" (or -inf), got {text!r}')
    return found


def _to_float(text: str) -> float:
    t = text.replace("−", "-").replace("∞", "inf").lower()
    return float(t)


def lab_input(path: Path | None) -> MistakeInput:
    """The lesson example, or the learner's ``--input`` file as a :class:`MistakeInput`."""
    if path is None:
        return diagnosis.lesson_input()
    from attnlab.inputs import load_input

    lab = load_input(path)
    return MistakeInput(lab.x, lab.w_q, lab.w_k, lab.w_v, lab.num_heads or 1, lab.w_o)


def expected_slice(answer: Answer, inp: MistakeInput) -> torch.Tensor:
    """The right numbers for ``answer`` (raises ``InputError`` for an unknown stage/row/head)."""
    stages = diagnosis.correct_stages(inp)
    if answer.stage not in stages:
        raise InputError(f"stage: expected one of {', '.join(stages)}, got {answer.stage!r}")
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
    if isinstance(raw, list):
        values = tuple(repr(float(v)) if not isinstance(v, str) else v for v in _flat(raw))
    else:
        values = parse_values(str(raw))
    row = entry.get("row")
    if row is not None and (isinstance(row, bool) or not isinstance(row, int)):
        raise InputError(f"answer {n}: row must be an integer, got {row!r}")
    head = entry.get("head", 1)  # numbered from 1, as trace and the lesson number heads
    if isinstance(head, bool) or not isinstance(head, int) or head < 1:
        raise InputError(f"answer {n}: head must be an integer from 1, got {head!r}")
    return Answer(str(entry["stage"]), str(entry.get("prompt", "A")), values, row, head)


def _flat(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in items:
        out.extend(_flat(v) if isinstance(v, list) else [v])
    return out


def load_answers(path: Path) -> list[Answer]:
    """Answers from a TOML (``[[answer]]`` tables) or JSON (a list, or ``{"answer": [...]}``)
    file."""
    if not path.is_file():
        raise InputError(f"answer file not found: {path}")
    text = path.read_text(encoding="utf-8")
    try:
        data: Any = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path.name}: not valid {path.suffix[1:].upper()}: {exc}") from None
    entries = data.get("answer", data.get("answers")) if isinstance(data, dict) else data
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{path.name}: expected a list of answers ([[answer]] tables in TOML)")
    return [_answer(e, n) for n, e in enumerate(entries, start=1)]
