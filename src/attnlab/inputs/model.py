"""A learner's own numbers: load and validate an ``--input`` file (JSON or TOML).

Fields (the lesson's formula convention)::

    x          [B][T][C]  input vectors (not token IDs)
    w_q, w_k   [C][d]     query and key projections (same d)
    w_v        [C][d_v]   value projection
    num_heads  int        optional; then w_q, w_k, w_v are [C][C], split into heads in order
    w_o        [C][C]     optional output projection (only with num_heads)
    w_vocab    [d_v][V]   optional scoring layer of section 16: logits = output @ w_vocab
    tokens     [B][T]     optional labels for the positions

Other keys are ignored, so a document written by ``attnlab trace --format json`` is a valid input.
Every problem raises :class:`attnlab.text.errors.InputError` with one line naming the field, what
was expected and what was found.

:class:`LabInput` is the one input model: :meth:`LabInput.lesson` is the lesson's example
(:func:`attnlab.core.steps.lesson_input`, with the prompts' labels) and
:meth:`LabInput.mistake_input` what the mistakes catalogue runs on. The checks a cell, a count
and the token labels pass (:func:`finite_number`, :func:`is_whole`, :func:`token_labels`) are
the explorer's too (:mod:`attnlab.inputs.explorer`), each front end wording its own message.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from attnlab.core import example, memory_guard, steps
from attnlab.core.finite import check_finite_stages
from attnlab.core.pipeline import (
    AttentionStages,
    MultiHeadStages,
    attention_stages,
    multi_head_stages,
)
from attnlab.core.steps import MistakeInput
from attnlab.inputs import safe_load
from attnlab.text.errors import TEXT, InputError, Text, input_error, kind

#: The matrices every input holds (``x`` and the three projections).
MATRICES: tuple[str, ...] = ("x", "w_q", "w_k", "w_v")
MAX_NUMBERS = 1_000_000
MAX_FILE_BYTES = safe_load.MAX_FILE_BYTES
#: Longest token label kept from ``tokens`` (longer ones are cut); figures are sized for it.
TOKEN_MAX = 24
#: Largest sizes shown as text or Markdown tables; JSON has no limit but MAX_NUMBERS.
DISPLAY_LIMITS = {"B": 8, "T": 16, "C": 16}


_TEXT_TABLES = {"zh": "文本表格", "en": "text tables"}


@dataclass(frozen=True)
class LabInput:
    """Validated input tensors (float64) and position labels."""

    x: torch.Tensor  # [B, T, C]
    w_q: torch.Tensor  # [C, d_head] (or [C, C] with num_heads)
    w_k: torch.Tensor
    w_v: torch.Tensor
    tokens: list[list[str]]  # [B][T]
    num_heads: int | None = None
    w_o: torch.Tensor | None = None  # [C, C]
    source: str = "lesson"
    w_vocab: torch.Tensor | None = None  # [d_v, V_vocab]

    @classmethod
    def lesson(cls, lang: str = "zh") -> LabInput:
        """The lesson's fixed example (:func:`attnlab.core.steps.lesson_input`) with its prompts'
        token labels in ``lang``."""
        inp = steps.lesson_input()
        return cls(inp.x, inp.w_q, inp.w_k, inp.w_v, example.prompt_tokens(lang))

    def mistake_input(self) -> MistakeInput:
        """These numbers as the mistakes catalogue runs on them (one head when no
        ``num_heads`` was given)."""
        return MistakeInput(
            self.x, self.w_q, self.w_k, self.w_v, self.heads, self.w_o, w_vocab=self.w_vocab
        )

    @property
    def heads(self) -> int:
        """``n_head``: 1 for a single head."""
        return self.num_heads or 1

    def score_bytes(self) -> int:
        """Bytes of one ``[B, n_head, T, T]`` float64 score tensor."""
        B, T, _ = self.x.shape
        return B * self.heads * T * T * self.x.element_size()

    def stage_bytes(self) -> int:
        """Bytes of every stage the pipeline keeps for these numbers (four score tensors, the
        ``[T, T]`` mask, and the ``[B, T, ·]`` stages)."""
        B, T, C = self.x.shape
        # x; q, k; v, head outputs (and slack); concat and output with several heads
        widths = C + 2 * self.w_q.size(1) + 3 * self.w_v.size(1) + 2 * C
        rows = B * T * widths * self.x.element_size()
        return memory_guard.SCORE_TENSORS * self.score_bytes() + T * T + rows

    def stages(self) -> AttentionStages | MultiHeadStages:
        """Run the one attention pipeline on these numbers.

        Raises:
            attnlab.core.memory_guard.TooLargeError: the stages would need more than
                :data:`~attnlab.core.memory_guard.COMMAND_BUDGET_BYTES` (predicted, nothing built).
            attnlab.core.finite.NonFiniteStageError: a stage overflowed float64.
        """
        shape, n = list(self.x.shape), self.heads
        memory_guard.check_budget(
            self.stage_bytes(),
            {"zh": f"x [B, T, C] = {shape}、{n} 个头的各阶段",
             "en": f"the stages of x [B, T, C] = {shape} with {n} head(s)"},
            {lang: TEXT[lang]["grows"] for lang in TEXT},
        )  # fmt: skip
        if self.num_heads is None:
            result: AttentionStages | MultiHeadStages = attention_stages(
                self.x, self.w_q, self.w_k, self.w_v
            )
        else:
            result = multi_head_stages(
                self.x, self.w_q, self.w_k, self.w_v, self.num_heads, self.w_o
            )
        check_finite_stages(result)
        return result

    def check_display(self, what: Text = _TEXT_TABLES) -> None:
        """Raise unless every size fits :data:`DISPLAY_LIMITS` (for text/Markdown/figures)."""
        B, T, C = self.x.shape
        for axis, size in (("B", B), ("T", T), ("C", C)):
            limit = DISPLAY_LIMITS[axis]
            if size > limit:
                raise input_error("display", axis=axis, size=size, limit=limit, what=what)


class _Counter:
    def __init__(self) -> None:
        self.n = 0

    def add(self, k: int) -> None:
        self.n += k
        if self.n > MAX_NUMBERS:
            raise input_error("too_many", limit=MAX_NUMBERS)


def is_whole(value: Any) -> bool:
    """Whether ``value`` is an integer as JSON or TOML writes one (``true`` is not)."""
    return isinstance(value, int) and not isinstance(value, bool)


#: Raises a token-label problem in a front end's words: ``(what, where, found)`` with ``what``
#: ``"rows"`` (not B rows), ``"row"`` (row ``where[0]`` not T labels) or ``"label"`` (the label
#: at ``where`` is not a string).
Refuse = Callable[[str, tuple[int, ...], Any], Exception]


def token_labels(
    value: Any, B: int, T: int, refuse: Refuse, each: Callable[[str, str], None] | None = None
) -> list[list[str]]:
    """``value`` checked to be ``B`` rows of ``T`` strings (as sent, not cut); ``each(label,
    "tokens[b][t]")`` checks every label more, in order."""
    if not isinstance(value, list) or len(value) != B:
        raise refuse("rows", (), value)
    for b, row in enumerate(value):
        if not isinstance(row, list) or len(row) != T:
            raise refuse("row", (b,), row)
        for t, label in enumerate(row):
            if not isinstance(label, str):
                raise refuse("label", (b, t), label)
            if each is not None:
                each(label, f"tokens[{b}][{t}]")
    return value


def finite_number(value: Any, field: str) -> float:
    """``value`` as a float, refusing what a float64 cannot hold with the field named."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise input_error("not_number", field=field, found=kind(value))
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            digits = int(value.bit_length() * math.log10(2)) + 1
            raise input_error("too_big_int", field=field, digits=digits) from None
    if math.isnan(value):
        raise input_error("nan", field=field)
    if math.isinf(value):
        raise input_error("inf", field=field, value=value)
    return value


def _array(value: Any, field: str, ndim: int, counter: _Counter) -> Any:
    """Check ``value`` is a non-ragged ``ndim``-deep list of finite numbers."""
    if ndim == 0:
        return finite_number(value, field)
    if not isinstance(value, list):
        raise input_error("not_list", field=field, ndim=ndim, found=kind(value))
    if not value:
        raise input_error("empty_list", field=field)
    if ndim == 1:
        counter.add(len(value))
    items = [_array(v, f"{field}[{i}]", ndim - 1, counter) for i, v in enumerate(value)]
    if ndim > 1:
        first = len(items[0])
        for i, item in enumerate(items):
            if len(item) != first:
                raise input_error("ragged", field=field, i=i, n=len(item), first=first)
    return items


def _read(path: Path) -> dict[str, Any]:
    data = safe_load.load(path, "--input")
    if not isinstance(data, dict):
        raise input_error("not_object", found=kind(data))
    return data


def _tensor(data: dict[str, Any], key: str, ndim: int, counter: _Counter) -> torch.Tensor:
    if key not in data:
        shape = "[B][T][C]" if key == "x" else "[C][d]"
        raise input_error("missing", key=key, shape=shape)
    return torch.tensor(_array(data[key], key, ndim, counter), dtype=torch.float64)


def _check_rows(name: str, w: torch.Tensor, C: int, cols: int | None, why: Text = "") -> None:
    if w.size(0) != C:
        raise input_error("rows", name=name, C=C, n=w.size(0))
    if cols is not None and w.size(1) != cols:
        raise input_error("columns", name=name, cols=cols, why=why, n=w.size(1))


def _num_heads(data: dict[str, Any], C: int) -> int | None:
    n = data.get("num_heads")
    if n is None:
        return None
    if not is_whole(n) or n <= 0:
        raise input_error("heads_positive", found=kind(n), value=repr(n))
    if C % n != 0:
        raise input_error("heads_divisor", C=C, n=n)
    return n


def _tokens(data: dict[str, Any], B: int, T: int) -> list[list[str]]:
    tokens = data.get("tokens")
    if tokens is None:
        return [[str(t) for t in range(T)] for _ in range(B)]

    def refuse(what: str, where: tuple[int, ...], found: Any) -> InputError:
        if what == "rows":
            return input_error("token_rows", B=B, found=kind(found))
        if what == "row":
            return input_error("token_row", b=where[0], T=T, found=kind(found))
        return input_error("token_label", b=where[0], t=where[1], found=kind(found))

    rows = token_labels(tokens, B, T, refuse)
    return [[label[:TOKEN_MAX] for label in row] for row in rows]


_WITH_HEADS = {"zh": "（有 num_heads 时为 C）", "en": " (C, with num_heads)"}


def parse_input(data: dict[str, Any], source: str = "input") -> LabInput:
    """Validate an already-parsed input object (from a file or the web explorer)."""
    counter = _Counter()
    x = _tensor(data, "x", 3, counter)
    B, T, C = x.shape
    w_q, w_k, w_v = (_tensor(data, k, 2, counter) for k in MATRICES[1:])
    num_heads = _num_heads(data, C)
    width = C if num_heads else None
    _check_rows("w_q", w_q, C, width, _WITH_HEADS)
    _check_rows("w_k", w_k, C, w_q.size(1), {"zh": "（d 取自 w_q）", "en": " (d from w_q)"})
    _check_rows("w_v", w_v, C, width, _WITH_HEADS)
    w_o = None
    if "w_o" in data:
        if num_heads is None:
            raise input_error("w_o_alone")
        w_o = _tensor(data, "w_o", 2, counter)
        _check_rows("w_o", w_o, C, C, {"zh": "（C）", "en": " (C)"})
    w_vocab = None
    if "w_vocab" in data:
        w_vocab = _tensor(data, "w_vocab", 2, counter)
        width = C if num_heads else w_v.size(1)
        if w_vocab.size(0) != width:
            why = {"zh": "有 num_heads 时为 C", "en": "C, with num_heads"} if num_heads else {
                "zh": "w_v 的列数", "en": "the columns of w_v"}  # fmt: skip
            raise input_error("vocab_rows", d=width, why=why, n=w_vocab.size(0))
    tokens = _tokens(data, B, T)
    return LabInput(x, w_q, w_k, w_v, tokens, num_heads, w_o, source, w_vocab)


def load_input(path: str | Path) -> LabInput:
    """Read and validate an ``--input`` file; raises :class:`InputError` with one line."""
    path = Path(path)
    return parse_input(_read(path), source=str(path))
