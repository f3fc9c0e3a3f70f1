"""The explorer: the learner edits X, W_Q, W_K, W_V (and W_O with several heads), the token
labels and n_head, and every stage is recomputed.

Input is checked by :func:`attnlab.inputs.explorer.check_payload` (one line in the page's
language); the stages come from the one pipeline through
:meth:`attnlab.inputs.model.LabInput.stages`:
:func:`~attnlab.core.pipeline.attention_stages` for one head (``W_Q [C, d]``), and
:func:`~attnlab.core.pipeline.multi_head_stages` for ``n_head >= 2`` (``W_Q [C, C]`` split into
heads
in column order, ``W_O [C, C]``), which refuses stages that overflow float64.

The page's state (preset, sizes, n_head, every cell and label) travels in the URL as ``state``
(JSON), so the language switch and the size form keep the learner's edits.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import torch
from markupsafe import Markup, escape

from attnlab.content.stageview import POSITION_STAGES, StageTable, StageView, stage_view
from attnlab.core import example
from attnlab.core.pipeline import STAGE_NAMES, AttentionStages, MultiHeadStages
from attnlab.inputs.explorer import LABEL_MAX, LIMITS, ExplorerError, check_payload
from attnlab.inputs.model import MATRICES, LabInput
from attnlab.text.errors import InputError
from attnlab.text.fmt import compact_shape
from attnlab.text.jsonable import to_json

PRESETS: tuple[str, ...] = ("lesson", "uniform")
# The weights heatmap first: it is what the learner watches while typing.
SHOWN_STAGES = ("weights", *(s for s in STAGE_NAMES if s not in ("causal_mask", "weights")))
HEAD_STAGES = tuple(s for s in SHOWN_STAGES if s != "x")
PRECISION = 3
#: The lesson's sizes, the explorer's defaults.
DEFAULT_SIZES: dict[str, int] = {
    "T": example.lesson_x().size(1), "C": example.lesson_x().size(2),
    "d": example.lesson_w_q().size(1), "n_head": 1,
}  # fmt: skip
Stages = AttentionStages | MultiHeadStages


def check_preset(name: str) -> str:
    """``name`` if it is one of :data:`PRESETS`."""
    if name not in PRESETS:
        raise ExplorerError("preset", "preset", name, names=", ".join(PRESETS))
    return name


def _fit(rows: list[Any], shape: tuple[int, ...]) -> Any:
    """``rows`` cut or zero-padded to ``shape`` (at least one axis)."""
    return [_fit(rows[i] if i < len(rows) else [], shape[1:]) if len(shape) > 1
            else (rows[i] if i < len(rows) else 0.0) for i in range(shape[0])]  # fmt: skip


def _head_blocks(w: list[Any], C: int, n_head: int, zero_odd: bool) -> list[list[float]]:
    """``[C, C]``: every head's columns hold the lesson's ``[C, d]`` head (cut or padded to the
    head width); with ``zero_odd`` heads 2, 4, ... (counted from 1) are zero (W_Q = 0: the
    uniform mean)."""
    d_head = max(C // n_head, 1)
    single = _fit(w, (C, d_head))
    return [[0.0 if zero_odd and min(c // d_head, n_head - 1) % 2 else single[r][c % d_head]
             for c in range(C)] for r in range(C)]  # fmt: skip


def preset_data(name: str, T: int, C: int, d: int, n_head: int, lang: str) -> dict[str, Any]:
    """The numbers of preset ``name`` at these sizes: ``lesson``, or ``uniform`` (W_Q = 0: every
    visible position gets the same weight, section 1's mean).

    With ``n_head >= 2`` the projections are ``[C, C]``: every head starts from the lesson's
    head, the even-numbered heads (2, 4, ...) with W_Q = 0, and W_O is the identity.
    """
    w_q, w_k, w_v = (example.lesson_w_q(), example.lesson_w_k(), example.lesson_w_v())
    if check_preset(name) == "uniform":
        w_q = torch.zeros_like(w_q)
    x = _fit(example.lesson_x().tolist(), (LIMITS["B"], T, C))
    data: dict[str, Any] = {"preset": name, "n_head": n_head, "d": d, "x": x}
    if n_head == 1:
        ws = [_fit(w.tolist(), (C, d)) for w in (w_q, w_k, w_v)]
        data["w_o"] = None
    else:
        ws = [_head_blocks(w.tolist(), C, n_head, i == 0) for i, w in enumerate((w_q, w_k, w_v))]
        data["w_o"] = torch.eye(C, dtype=torch.float64).tolist()
    data |= dict(zip(MATRICES[1:], ws, strict=True))
    data["tokens"] = tokens_for(T, LIMITS["B"], lang)
    return data


def tokens_for(T: int, B: int, lang: str) -> list[list[str]]:
    """Default position labels: the lesson's tokens when T matches, else ``p0, p1, ...``."""
    lesson = example.prompt_tokens(lang)
    if T == len(lesson[0]):
        return lesson[:B]
    return [[f"p{t}" for t in range(T)] for _ in range(B)]


def _overlay(base: Any, edit: Any) -> Any:
    """``base`` with the cells of ``edit`` laid over it where they exist (numbers, or text the
    learner typed, kept so its message shows again); ``base`` keeps its shape."""
    if isinstance(base, list):
        edits = edit if isinstance(edit, list) else []
        return [_overlay(b, edits[i] if i < len(edits) else None) for i, b in enumerate(base)]
    if isinstance(edit, str):
        return edit[:24]
    if isinstance(edit, (int, float)) and not isinstance(edit, bool):
        return float(edit) if abs(edit) < 1e308 else str(edit)[:24]
    return base


def _labels(base: list[list[str]], edit: Any) -> list[list[str]]:
    """Edited labels over the defaults; a label left at its position's default in either
    language follows the page's language."""
    B, T = len(base), len(base[0])
    defaults = [tokens_for(T, B, lang) for lang in example.LANGS]
    merged = _overlay(base, edit)
    return [[base[b][t] if any(new == d[b][t] for d in defaults) else str(new)[:LABEL_MAX]
             for t, new in enumerate(row)] for b, row in enumerate(merged)]  # fmt: skip


def with_state(data: dict[str, Any], state: Any) -> dict[str, Any]:
    """``data`` (a preset at the asked sizes) with the learner's edits from ``state``.

    Edits are kept when ``state`` started from the same preset; X and the labels are cut or
    padded to the new sizes. The projections are kept while the head split is unchanged (one
    head, or the same n_head and C); between one head and several, head 1 is kept when its
    width is unchanged (``d`` = C/n_head, the same C). ``data["reset"]`` names the edited
    matrices of the new page that could not be kept (they are the preset's again).
    """
    if not isinstance(state, dict) or state.get("preset") != data["preset"]:
        return data
    out = dict(data, x=_overlay(data["x"], state.get("x")))
    out["tokens"] = _labels(data["tokens"], state.get("tokens"))
    C, n_new = len(data["x"][0][0]), data["n_head"]
    n_old = state.get("n_head")
    same_split = n_old == n_new and (n_new == 1 or state.get("C") == C)
    before = _old_preset(data["preset"], state)
    width_now = _head_width(n_new, C, data["w_q"])
    width_before = _head_width(n_old, state.get("C"), state.get("w_q"))
    reset = []
    for key in (*MATRICES[1:], "w_o"):
        if data[key] is None:
            continue
        if same_split:
            out[key] = _overlay(data[key], state.get(key))
        elif (
            key != "w_o"
            and state.get("C") == C
            and width_now is not None
            and width_before == width_now
        ):
            out[key] = _keep_head_one(data[key], state.get(key), width_now)
        elif before is not None and state.get(key) not in (None, before[key]):
            reset.append(key)
    return out | {"reset": reset}


def _head_width(n_head: Any, C: Any, w_q: Any) -> int | None:
    """One head's width: ``d`` (the width of W_Q) with one head, else C / n_head; None for
    sizes the explorer never makes (a state from the URL may hold anything)."""
    if n_head == 1:
        return len(w_q[0]) if isinstance(w_q, list) and w_q and isinstance(w_q[0], list) else None
    ok = isinstance(C, int) and isinstance(n_head, int) and n_head > 0
    return C // n_head if ok else None


def _keep_head_one(base: list[list[Any]], old: Any, width: int) -> list[list[Any]]:
    """``base`` with its first ``width`` columns (head 1) taken from ``old``'s."""
    head = _overlay(
        [row[:width] for row in base],
        [row[:width] for row in old]
        if isinstance(old, list) and all(isinstance(r, list) for r in old)
        else None,
    )
    return [head[r] + row[width:] for r, row in enumerate(base)]  # fmt: skip


def _old_preset(name: str, state: dict[str, Any]) -> dict[str, Any] | None:
    """The preset's numbers at the sizes ``state`` had (to tell an edit from the preset), or
    None when the state's sizes are not ones the explorer makes."""
    C, n_head = state.get("C"), state.get("n_head")
    d = _head_width(n_head, C, state.get("w_q"))
    if not (isinstance(C, int) and isinstance(n_head, int) and isinstance(d, int)):
        return None
    if not all(1 <= s <= LIMITS["C"] for s in (C, n_head, d)) or C % n_head:
        return None
    return preset_data(name, 1, C, d if n_head == 1 else 1, n_head, "en")


def state_json(data: dict[str, Any]) -> str:
    """The page's state as compact JSON (what the ``state`` query parameter carries)."""
    state = {k: data[k] for k in ("preset", "n_head", *MATRICES, "w_o", "tokens")}
    return json.dumps(state | {"C": len(data["x"][0][0])}, ensure_ascii=False,
                      separators=(",", ":"))  # fmt: skip


def page_query(data: dict[str, Any], lang: str) -> str:
    """``lang=en&preset=lesson&T=3&C=4&d=2&n_head=1&state=...``: this page in ``lang``."""
    return urlencode({"lang": lang, "preset": data["preset"], **sizes_of(data),
                      "state": state_json(data)})  # fmt: skip


def sizes_of(data: dict[str, Any]) -> dict[str, int]:
    """T, C, d (the single head's width, kept while n_head >= 2) and n_head of ``data``."""
    x = data["x"]
    return {"T": len(x[0]), "C": len(x[0][0]), "d": data["d"], "n_head": data["n_head"]}


def compute(payload: object, lang: str) -> tuple[Stages, list[list[str]]]:
    """Check the explorer's numbers and run the pipeline on them; the stages and the position
    labels (the learner's, else the defaults in ``lang``).

    Raises:
        ExplorerError: the size, matrix or cell that is wrong (one line, both languages).
        attnlab.core.finite.NonFiniteStageError: a stage overflowed float64.
    """
    c = check_payload(payload)
    x, w_q, w_k, w_v = (torch.tensor(m, dtype=torch.float64) for m in (c.x, c.w_q, c.w_k, c.w_v))
    multi = c.n_head > 1
    w_o = torch.tensor(c.w_o, dtype=torch.float64) if multi and c.w_o is not None else None
    tokens = c.tokens or tokens_for(x.size(1), x.size(0), lang)
    lab = LabInput(x, w_q, w_k, w_v, tokens, c.n_head if multi else None, w_o, "explorer")
    return lab.stages(), tokens


def error_stage(exc: InputError) -> str:
    """The stage that overflowed (``"raw_scores"``), or ``""`` when the input itself is wrong."""
    return str(getattr(exc, "stage", ""))


#: The two inks a heatmap cell may use, as RGB. With white and black, every background has one
#: of them at a contrast of at least 4.5:1 (WCAG AA for text).
INKS = {"#fff": (255, 255, 255), "#000": (0, 0, 0)}


def luminance(rgb: tuple[int, ...]) -> float:
    """The WCAG 2.1 relative luminance of an sRGB colour given as 0-255 channels."""
    lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4
           for c in rgb]  # fmt: skip
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    """The WCAG 2.1 contrast ratio of two colours (1 to 21)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def heat(value: float) -> str:
    """A background colour for a weight in [0, 1], pale paper to deep teal, with the ink (white
    or dark) that contrasts more with it."""
    v = min(max(value, 0.0), 1.0)
    low, high = (246, 248, 250), (14, 99, 120)
    bg = tuple(round(lo + (hi - lo) * v) for lo, hi in zip(low, high, strict=True))
    ink = max(INKS, key=lambda name: contrast(INKS[name], bg))
    return f"background:rgb{bg};color:{ink}".replace(" ", "")


def stage_groups(stages: Stages, tokens: list[list[str]], lang: str) -> list[dict[str, Any]]:
    """The stages as titled groups of views: one group for a single head; with several heads
    X and the mask, then each head (weights first), then the W_O mix (concat → W_O → output)."""
    B = stages.x.size(0)

    def view(key: str, tensor: torch.Tensor, head: int | None = None) -> StageView:
        return stage_view(key, tensor, tokens, range(B), lang, PRECISION, head)

    if isinstance(stages, AttentionStages):
        return [{"id": "head", "views": [view(n, getattr(stages, n)) for n in SHOWN_STAGES]}]
    n_head = stages.q.size(1)
    shared = [view("x", stages.x), view("causal_mask", stages.causal_mask)]
    groups: list[dict[str, Any]] = [{"id": "input", "views": shared}]
    for h in range(n_head):
        one = stages.head(h)
        groups.append({"id": f"head-{h + 1}", "head": h + 1,
                       "views": [view(n, getattr(one, n), h) for n in HEAD_STAGES]})  # fmt: skip
    mix = [view("concat", stages.concat), view("projected", stages.output)]
    return [*groups, {"id": "mix", "views": mix}]


def heat_cells(view: StageView, table: StageTable) -> list[list[tuple[str, str]]]:
    """The cells of ``table`` as (text, css background): each weight gets its heat colour; other
    stages, labels and the row-sum column stay plain."""
    cells = []
    for row, values in zip(table.rows, table.values, strict=True):
        styles = [heat(v) for v in values] if view.key == "weights" else []
        cells.append([(text, styles[j - 1] if 0 < j <= len(styles) else "")
                      for j, text in enumerate(row)])  # fmt: skip
    return cells


def table_rows(view: StageView, table: StageTable) -> Markup:
    """The ``<tbody>`` rows of ``table``: a row label, then its cells (:func:`heat_cells`).
    Written here, not by a template loop: an explorer answer holds hundreds of cells."""
    out = []
    for (label, _), *cells in heat_cells(view, table):
        out.append(f'<tr><th scope="row">{escape(label)}</th>')
        for text, style in cells:
            styled = f' style="{escape(style)}"' if style else ""
            out.append(f"<td{styled}>{escape(text)}</td>")
        out.append("</tr>")
    return Markup("".join(out))


def views_context(stages: Stages | None, tokens: list[list[str]], lang: str) -> dict[str, Any]:
    """What ``_stages.html`` reads: the groups of views (none without stages) and how it
    writes them."""
    groups = stage_groups(stages, tokens, lang) if stages is not None else []
    return {"groups": groups, "table_rows": table_rows, "compact_shape": compact_shape}


def result_json(stages: Stages) -> dict[str, Any]:
    """The numbers of the result for the JSON API (−∞ as the string ``"-inf"``, 6 decimals);
    with several heads the per-head stages carry the ``n_head`` axis."""
    names = SHOWN_STAGES
    if isinstance(stages, MultiHeadStages):
        names = (*SHOWN_STAGES[:-1], "head_outputs", "concat", "output")
    return {name: to_json(getattr(stages, name), decimals=6) for name in names} | {
        "position_stages": sorted(POSITION_STAGES & set(names))
    }
