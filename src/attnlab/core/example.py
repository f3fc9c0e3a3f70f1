"""The lesson's fixed example, as data: the one place these numbers are written down.

Week 8 reuses this week's X, W_Q, W_K and W_V unchanged, so everything here is importable
without pulling in any front end::

    from attnlab.core.example import lesson_x, lesson_w_q

Axis letters used throughout attnlab:

* ``B``: batch (independent prompts), ``T``: token positions, ``C``: model width,
* ``n_head``: number of heads, ``d_head`` (also ``d_k``): width of one head,
* ``V_vocab``: vocabulary size.

The projections are stored in the lesson's *formula* convention ``[C, d_head]`` (so that
``q = x @ w_q``); ``nn.Linear`` keeps the transpose ``[d_head, C]``.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass

import torch

from attnlab.text.errors import InputError, Text, input_error
from attnlab.text.i18n import LANGS

#: Vocabulary of the whole course: the same IDs in both editions.
VOCAB: dict[str, tuple[str, ...]] = {
    "zh": ("我", "喜欢", "AI", "学习", "猫"),
    "en": ("you", "like", "AI", "study", "we"),  # the course's English edition, same IDs
}


@dataclass(frozen=True)
class Prompt:
    """One prompt of the lesson: its name, token IDs and the next-token target ID."""

    name: str
    token_ids: tuple[int, ...]
    target_id: int


#: Prompt A = [我, 喜欢] → AI; prompt B = [猫, 喜欢] → 我.
PROMPTS: tuple[Prompt, ...] = (
    Prompt("A", (0, 1), 2),
    Prompt("B", (4, 1), 0),
)


def prompt_names(batch: int) -> list[str]:
    """Names of the batch rows: A, B, C, ... (then b26, b27, ... past Z)."""
    letters = string.ascii_uppercase
    return [letters[b] if b < len(letters) else f"b{b}" for b in range(batch)]


def prompt_index(prompt: str | int, batch: int, option: str = "prompt") -> int:
    """The batch row of a prompt named ``"A"``/``"b"`` (any case) or numbered ``"1"``/``1``.

    The inverse of :func:`prompt_names`; every front end reads a prompt with it.

    Raises:
        InputError: ``prompt: expected one of A, B, got 'C'`` (``option`` names the field).
    """
    names = [n.upper() for n in prompt_names(batch)]
    text = str(prompt).strip().upper()
    b = (
        int(text)
        if text.isascii() and text.isdigit() and len(text) <= 9
        else (names.index(text) if text in names else -1)
    )
    if not 0 <= b < batch:
        raise _unknown_prompt(option, batch, prompt)
    return b


def prompt_rows(choice: str, batch: int, option: str = "--prompt") -> list[int]:
    """The rows ``choice`` names: ``"all"`` of them, or the one :func:`prompt_index` reads."""
    if choice.strip().lower() == "all":
        return list(range(batch))
    try:
        return [prompt_index(choice, batch, option)]
    except InputError:
        raise _unknown_prompt(option, batch, choice, {"zh": " 或 all", "en": " or all"}) from None


def _unknown_prompt(option: str, batch: int, got: object, extra: Text = "") -> InputError:
    names = ", ".join(prompt_names(batch))
    return input_error("one_of", option=option, names=names, extra=extra, got=got)


def head_index(number: int, n_head: int, option: str = "head") -> int:
    """The index of head ``number``: heads are numbered from 1 in text, options and JSON."""
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= n_head:
        key = "one_head" if n_head == 1 else "head"
        raise input_error(key, option=option, n=n_head, got=number)
    return number - 1


_SQRT2 = math.sqrt(2.0)

# Embedding rows used by the lesson: one-hot vectors of width C=4, chosen for hand arithmetic.
_EMBEDDING_ROWS: dict[int, tuple[float, ...]] = {
    0: (1.0, 0.0, 0.0, 0.0),  # 我
    1: (0.0, 1.0, 0.0, 0.0),  # 喜欢
    4: (0.0, 0.0, 1.0, 0.0),  # 猫
}

_W_Q = (
    (0.5, 0.5),
    (1.0, 1.0),
    (-0.5, 0.5),
    (0.0, 0.0),
)
#: W_K as the lesson designs it: √2 times these entries (the page writes 0.8√2, 0.2√2, 0.1√2).
W_K_DESIGN = ((0.8, 0.0), (0.2, 0.2), (0.0, 0.1), (0.0, 0.0))
_W_K = tuple(tuple(v * _SQRT2 for v in row) for row in W_K_DESIGN)
_W_V = (
    (1.0, 0.0),
    (0.0, 1.0),
    (-1.0, 0.0),
    (0.0, 0.0),
)
# Section 16's scoring layer: two feature rows, one column per vocabulary ID.
_W_VOCAB = (
    (0.0, 1.0, 2.0, -1.0, 0.0),
    (0.0, 0.0, 0.0, 1.0, 0.0),
)

#: Section 16's experiment nudges this single entry of W_Q (row 1 = the 喜欢 feature).
EXPERIMENT_PARAM: tuple[int, int] = (1, 0)
#: Learning rate of section 16's one-step update.
EXPERIMENT_LR = 0.01
#: Section 7's content-path example: W_V[0, 0], the first value component of 我 (feature 0 is
#: 我's alone), which A's final query reads and W_vocab's row 0 scores, so the loss depends on it.
VALUE_GRAD_PARAM: tuple[int, int] = (0, 0)
#: Section 8 adds each constant to a whole score row to show the softmax does not move.
SHIFT_CONSTANTS: tuple[float, ...] = (1.0, 10.0, -5.0)
#: Section 10 draws the causal mask for this longer sequence too (T=4).
MASK_CHECK_TOKENS = 4
#: The row [0.2, future] that section 11 uses to compare a 0 fill with a −∞ fill.
MASK_DEMO_ROW: tuple[float, float] = (0.2, 0.9)
#: The lesson page's sections: the core goal (0) and sections 1-19, each with one check.
SECTION_COUNT = 20
SECTION_IDS: tuple[int, ...] = tuple(range(SECTION_COUNT))
#: Section 9's extra shape check (keyword arguments of ``attnlab.lesson.shapes.measure_shapes``).
SHAPE_CHECK: dict[str, int] = {"batch": 1, "tokens": 3, "embed": 4, "heads": 2}


@dataclass(frozen=True)
class CostCheck:
    """Section 17's cost table: B, n_head and the sequence lengths compared."""

    batch: int = 2
    heads: int = 2
    tokens: tuple[int, ...] = (2, 1000)


COST_CHECK = CostCheck()

DEFAULT_DTYPE = torch.float64


def vocab(lang: str = "zh") -> tuple[str, ...]:
    """Token strings by ID for ``lang`` ("zh" or "en")."""
    if lang not in VOCAB:
        raise ValueError(f"lang must be one of {', '.join(LANGS)}, got {lang!r}")
    return VOCAB[lang]


def prompt_tokens(lang: str = "zh") -> list[list[str]]:
    """Token strings of prompts A and B, ``[B][T]``."""
    words = vocab(lang)
    return [[words[i] for i in p.token_ids] for p in PROMPTS]


def _tensor(rows: object, dtype: torch.dtype) -> torch.Tensor:
    return torch.tensor(rows, dtype=dtype)


def lesson_x(dtype: torch.dtype = DEFAULT_DTYPE) -> torch.Tensor:
    """The lesson's input X, ``[B, T, C] = [2, 2, 4]``: prompt A then prompt B."""
    rows = [[_EMBEDDING_ROWS[i] for i in p.token_ids] for p in PROMPTS]
    return _tensor(rows, dtype)  # [B, T, C]


def lesson_w_q(dtype: torch.dtype = DEFAULT_DTYPE) -> torch.Tensor:
    """W_Q in formula convention, ``[C, d_head] = [4, 2]``."""
    return _tensor(_W_Q, dtype)


def lesson_w_k(dtype: torch.dtype = DEFAULT_DTYPE) -> torch.Tensor:
    """W_K in formula convention, ``[C, d_head] = [4, 2]``; the √2 factors are exact."""
    return _tensor(_W_K, dtype)


def lesson_w_v(dtype: torch.dtype = DEFAULT_DTYPE) -> torch.Tensor:
    """W_V in formula convention, ``[C, d_head] = [4, 2]``."""
    return _tensor(_W_V, dtype)


def lesson_w_vocab(dtype: torch.dtype = DEFAULT_DTYPE) -> torch.Tensor:
    """Section 16's scoring matrix W_vocab, ``[d_head, V_vocab] = [2, 5]``."""
    return _tensor(_W_VOCAB, dtype)


def lesson_targets() -> torch.Tensor:
    """Next-token target ID of each prompt, ``[B]``: A → AI (2), B → 我 (0)."""
    return torch.tensor([p.target_id for p in PROMPTS], dtype=torch.long)


def lesson_token_ids() -> torch.Tensor:
    """Token IDs of the two prompts, ``[B, T]`` (integers: never feed these to attention)."""
    return torch.tensor([list(p.token_ids) for p in PROMPTS], dtype=torch.long)
