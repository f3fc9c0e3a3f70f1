"""The explorer's input: check what the learner typed, one line in the page's language.

The explorer sends numbers per cell (a form field ``w_q[1][0]`` or a JSON list), so it knows
the exact shape it expects; :func:`check_payload` checks sizes, ``n_head`` and every cell and
raises :class:`ExplorerError`, whose :meth:`~ExplorerError.localized` message is shown on the
page (``str(error)`` is the English one). Sizes: ``B`` prompts, ``T`` positions, ``C`` width,
``d`` the head width of a single head; with ``n_head >= 2`` the projections are ``[C, C]``.

The checks an input file passes too are :mod:`attnlab.inputs.model`'s (a cell by
:func:`~attnlab.inputs.model.finite_number`, a count by :func:`~attnlab.inputs.model.is_whole`,
the labels by :func:`~attnlab.inputs.model.token_labels`); only the words are the explorer's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from attnlab.inputs.model import MATRICES, finite_number, is_whole, token_labels
from attnlab.text.errors import InputError
from attnlab.text.i18n import pick

#: Largest sizes the explorer accepts (B is the two prompts of the lesson).
LIMITS: dict[str, int] = {"B": 2, "T": 8, "C": 8, "d": 8, "n_head": 8}
#: Longest token label kept (longer ones are cut).
LABEL_MAX = 12
#: The fields of the page's ``state`` the explorer reads (see :func:`check_state_text`).
STATE_FIELDS: tuple[str, ...] = ("preset", *MATRICES, "w_o", "tokens")
#: JSON's escape ``"\ud800"`` parses to half of a UTF-16 pair, which is not a character: no
#: page, URL or JSON answer can carry it (a paired escape becomes one character, never this).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

MESSAGES: dict[str, dict[str, str]] = {
    "zh": {
        "object": "input：应为含 x、w_q、w_k、w_v 的对象，收到的是 {found}",
        "missing": "{field}：缺少这一项",
        "size": "{field}：探索器中应满足 1 ≤ {field} ≤ {limit}，收到的是 {found}",
        "whole": "{field}：应为整数，收到的是 {found}",
        "entries": "{field}：应为含 {n} 项的列表，收到的是 {found}",
        "list": "{field}：应为列表，收到的是 {found}",
        "label": "{field}：应为文字标签，收到的是 {found}",
        "text": "{field}：应为文字，收到的是 {found}，其中有单独的代理码位（\\ud800–\\udfff，"
        "只是 UTF-16 字符对的一半，不是字符）",
        "n_head": "n_head：C={C} 必须能被 n_head 整除（每个 Head 宽 C/n_head），收到的是 {found}",
        "preset": "preset：应为 {names} 之一，收到的是 {found}",
    },
    "en": {
        "object": "input: expected an object with keys x, w_q, w_k, w_v but found {found}",
        "missing": "{field}: missing",
        "size": "{field}: expected 1 <= {field} <= {limit} in the explorer but found {found}",
        "whole": "{field}: expected a whole number but found {found}",
        "entries": "{field}: expected a list of {n} entries but found {found}",
        "list": "{field}: expected a list but found {found}",
        "label": "{field}: expected a text label but found {found}",
        "text": "{field}: expected text but found {found}, which holds a lone surrogate "
        "(\\ud800-\\udfff: half of a UTF-16 pair, not a character)",
        "n_head": "n_head: C={C} must be divisible by n_head (each head is C/n_head wide) "
        "but found {found}",
        "preset": "preset: expected one of {names} but found {found}",
    },
}


#: A refused cell in the learner's words: where it is on the page (:func:`cell_place`) and what
#: it holds; only the JSON API can send a cell none of these fit (a list, ``true``).
CELL_WORDS: dict[str, dict[str, str]] = {
    "zh": {
        "empty": "{place}：需要一个数，这里是空的",
        "text": "{place}：需要一个数，这里是“{found}”",
        "finite": "{place}：需要一个有限的数（|x| ≤ 1.8e308），这里是 {found}",
    },
    "en": {
        "empty": "{place}: a number is needed, this cell is empty",
        "text": "{place}: a number is needed, this cell holds “{found}”",
        "finite": "{place}: a finite number is needed (|x| <= 1.8e308), this cell holds {found}",
    },
}
_CELL = re.compile(r"(x|w_q|w_k|w_v|w_o)((?:\[\d+\])+)")
_MATRIX_NAMES = {"x": "X", "w_q": "W_Q", "w_k": "W_K", "w_v": "W_V", "w_o": "W_O"}


def cell_place(where: str, lang: str) -> str:
    """Where a cell is, as the page shows it, rows and columns counted from 1:
    ``x[1][0][2]`` → ``X (prompt B) row 1, column 3``; ``w_q[0][1]`` → ``W_Q row 1, column 2``.
    Anything else comes back as it is."""
    found = _CELL.fullmatch(where)
    if found is None:
        return where
    name, index = _MATRIX_NAMES[found[1]], [int(i) for i in re.findall(r"\d+", found[2])]
    if name == "X" and len(index) == 3:
        b, r, c = index
        prompt = "AB"[b] if b < 2 else str(b + 1)
        return pick(lang, f"X（提示 {prompt}）第 {r + 1} 行第 {c + 1} 列",
                    f"X (prompt {prompt}) row {r + 1}, column {c + 1}")  # fmt: skip
    if len(index) == 2:
        r, c = index
        return pick(
            lang, f"{name} 第 {r + 1} 行第 {c + 1} 列", f"{name} row {r + 1}, column {c + 1}"
        )
    return where


def matrix_name(key: str) -> str:
    """``w_q`` → ``W_Q``: a matrix as the page names it."""
    return _MATRIX_NAMES.get(key, key)


def _cell_words(value: Any) -> str | None:
    """The key of :data:`CELL_WORDS` for a refused cell's ``value``, or None when none fits."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "empty"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "finite"  # nan, ±inf, or an integer past float64
    return None


def found_text(value: Any, lang: str) -> str:
    """What the learner sent, in a few words: ``'abc'``, ``a list of 3``, ``nan``."""
    if isinstance(value, str):
        return repr(value[:20])
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, list):
        return pick(lang, f"含 {len(value)} 项的列表", f"a list of {len(value)}")
    if isinstance(value, dict):
        return pick(lang, "对象", "an object")
    if isinstance(value, int) and abs(value) > 10**300:
        digits = len(str(abs(value)))
        return pick(lang, f"{digits} 位的整数", f"an integer of {digits} digits")
    return str(value)[:24]


class ExplorerError(InputError):
    """A learner's explorer input that cannot be computed, with its message in both languages.

    Attributes:
        key: the message's key in :data:`MESSAGES` (``"cell"`` when ``wraps`` holds the
            message: a cell refused by :func:`attnlab.inputs.model.finite_number`).
        field: the matrix or size named (``"x"``, ``"n_head"``); ``cell`` the cell
            (``"x[0][1][2]"``) when one cell is wrong, else ``""``.
    """

    def __init__(
        self,
        key: str,
        field: str,
        found: Any = None,
        wraps: InputError | None = None,
        **params: Any,
    ) -> None:
        self.key, self.found, self.params, self.wraps = key, found, params, wraps
        self.cell = field if "[" in field else ""
        self.field = field.split("[")[0]
        self.where = field
        super().__init__(self.localized("en"))

    def localized(self, lang: str) -> str:
        """The one-line message in ``lang``."""
        words = _cell_words(self.found) if self.key == "cell" and self.cell else None
        if words is not None:
            shown = self.found if isinstance(self.found, str) else found_text(self.found, lang)
            return CELL_WORDS[lang][words].format(place=cell_place(self.where, lang), found=shown)
        if self.wraps is not None:
            return self.wraps.localized(lang)
        found = found_text(self.found, lang)
        return MESSAGES[lang][self.key].format(field=self.where, found=found, **self.params)


def whole(raw: Any, name: str) -> int:
    """A size typed as text (``"3"``) as an int within :data:`LIMITS`."""
    text = str(raw).strip()
    # isascii: "²" is a digit to isdigit but not to int; a few digits: int() refuses 4300.
    if not (text.isascii() and text.isdigit() and len(text) <= 6):
        raise ExplorerError("whole", name, text)
    return check_size(name, int(text))


def check_size(name: str, size: int) -> int:
    """``size`` unless it is outside ``1..LIMITS[name]``."""
    if not 1 <= size <= LIMITS[name]:
        raise ExplorerError("size", name, size, limit=LIMITS[name])
    return size


def check_heads(C: int, n_head: int) -> None:
    """Refuse an ``n_head`` that does not divide ``C``."""
    if C % n_head:
        raise ExplorerError("n_head", "n_head", n_head, C=C)


def number(value: Any, field: str) -> float:
    """One cell as a finite float, by the rule every input file follows
    (:func:`attnlab.inputs.model.finite_number`); the error names the cell."""
    try:
        return finite_number(value, field)
    except InputError as exc:
        raise ExplorerError("cell", field, value, wraps=exc) from None


def grid(value: Any, field: str, shape: tuple[int, ...]) -> Any:
    """``value`` checked to be nested lists of ``shape`` holding finite numbers."""
    if not shape:
        return number(value, field)
    if not isinstance(value, list) or len(value) != shape[0]:
        raise ExplorerError("entries", field, value, n=shape[0])
    return [grid(v, f"{field}[{i}]", shape[1:]) for i, v in enumerate(value)]


def check_text(value: Any, field: str) -> None:
    """Refuse the first string in ``value`` (a string or nested lists) that holds a lone
    surrogate, naming where it is (``tokens[0][1]``)."""
    pending = [(field, value)]  # a stack, not recursion: the lists may nest a thousand deep
    while pending:
        where, item = pending.pop()
        if isinstance(item, str) and _LONE_SURROGATE.search(item):
            raise ExplorerError("text", where, item)
        if isinstance(item, list):
            pending += reversed([(f"{where}[{i}]", v) for i, v in enumerate(item)])


def check_state_text(state: Any) -> None:
    """Check every text of the fields of ``state`` the explorer reads (:data:`STATE_FIELDS`)
    by :func:`check_text`; the message names them ``state.tokens[0][1]``."""
    if isinstance(state, dict):
        for key in STATE_FIELDS:
            check_text(state.get(key), f"state.{key}")


def labels(value: Any, B: int, T: int) -> list[list[str]] | None:
    """Token labels ``[B][T]`` (cut to :data:`LABEL_MAX`), or ``None`` when not sent."""
    if value is None:
        return None

    def refuse(what: str, where: tuple[int, ...], found: Any) -> ExplorerError:
        field = "tokens" + "".join(f"[{i}]" for i in where)
        if what == "label":
            return ExplorerError("label", field, found)
        return ExplorerError("entries", field, found, n=B if what == "rows" else T)

    rows = token_labels(value, B, T, refuse, each=check_text)
    return [[label.strip()[:LABEL_MAX] for label in row] for row in rows]


@dataclass(frozen=True)
class Checked:
    """The explorer's numbers after :func:`check_payload` (nested lists of floats)."""

    x: list[Any]  # [B][T][C]
    w_q: list[Any]  # [C][d] (or [C][C] with n_head >= 2)
    w_k: list[Any]
    w_v: list[Any]
    w_o: list[Any] | None  # [C][C] with n_head >= 2
    n_head: int
    tokens: list[list[str]] | None  # [B][T]


def _length(value: Any, field: str, axis: str) -> int:
    """The length of the list ``value``, a size within :data:`LIMITS`."""
    if not isinstance(value, list):
        raise ExplorerError("list", field, value)
    return check_size(axis, len(value))


def _sizes(x: Any) -> tuple[int, int, int]:
    B = _length(x, "x", "B")
    T = _length(x[0], "x[0]", "T")
    return B, T, _length(x[0][0], "x[0][0]", "C")


def check_payload(payload: Any) -> Checked:
    """Check the explorer's numbers (JSON keys x, w_q, w_k, w_v, optional n_head, w_o, tokens).

    Raises:
        ExplorerError: one line naming the size, the matrix or the cell.
    """
    if not isinstance(payload, dict):
        raise ExplorerError("object", "input", payload)
    for key in MATRICES:
        if key not in payload:
            raise ExplorerError("missing", key)
    B, T, C = _sizes(payload["x"])
    raw_heads = payload.get("n_head", 1)
    if not is_whole(raw_heads):
        raise ExplorerError("whole", "n_head", raw_heads)
    n_head = check_size("n_head", raw_heads)
    check_heads(C, n_head)
    x = grid(payload["x"], "x", (B, T, C))
    w_q = payload["w_q"]
    d = (
        C
        if n_head > 1
        else _length(w_q[0] if isinstance(w_q, list) and w_q else w_q, "w_q[0]", "d")
    )
    w_q, w_k, w_v = (grid(payload[k], k, (C, d)) for k in MATRICES[1:])
    w_o = grid(payload.get("w_o"), "w_o", (C, C)) if n_head > 1 else None
    return Checked(x, w_q, w_k, w_v, w_o, n_head, labels(payload.get("tokens"), B, T))
