"""The grader against a reference written from the definitions (issue 32): hypothesis deals an
exercise, picks a stage's right numbers or what a mistake, a slip or a guess gives there, writes
them at 0-4 decimals, and checks the verdict is true. The reference computes every number here
with plain torch from the dealt X and weights, never with attnlab's pipeline or grader.

What must hold, for every input:

* the right numbers at the decimals asked (2) or more are right, or too coarse only when a wrong
  number the reference knows also rounds to them; right means no wrong number fits;
* with fewer decimals they are never right unless they are the value exactly, and "right as far
  as it goes" only when no wrong number the reference knows fits;
* numbers far from the right ones (beyond anything carried rounding could explain) are wrong,
  and the mistake, slip or guess that gives them is named."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.grading import practice

pytestmark = pytest.mark.usefixtures("one_torch_thread")

#: Numeric practice sections (section 9 asks for a shape).
SECTIONS = sorted(s for s in practice.SECTIONS if s != 9)
ASKED = 2  # the decimals practice asks for
#: Beyond this from the right value, no carried rounding (3 decimals) explains a number.
FAR = 0.01
#: The reference's mistakes: what each changes, by its definition in the lesson.
MISTAKES = {
    "no_scale": {"scale": False},
    "no_mask": {"mask": "none"},
    "mask_zero_fill": {"mask": "zero"},
    "softmax_query_axis": {"axis": 0},
    "swapped_qk": {"swap": True},
}


def reference(p: practice.Practice, *, swap: bool = False, scale: bool = True,
              mask: str = "inf", axis: int = -1) -> dict[str, torch.Tensor]:  # fmt: skip
    """Every stage of the dealt prompt from its numbers alone, ``[T, ...]``, with at most the
    one mistake the keywords describe."""
    f64 = torch.float64
    x = torch.tensor(p.x, dtype=f64)  # [T, C]
    w_q, w_k, w_v = (torch.tensor(w, dtype=f64) for w in (p.w_q, p.w_k, p.w_v))
    q, k = (x @ w_k, x @ w_q) if swap else (x @ w_q, x @ w_k)  # [T, d_head]
    v = x @ w_v
    raw = q @ k.T  # [T, T]
    scaled = raw / math.sqrt(k.size(-1)) if scale else raw
    T = raw.size(0)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    masked = {"inf": scaled.masked_fill(future, -math.inf), "zero": scaled.masked_fill(future, 0.0),
              "none": scaled}[mask]  # fmt: skip
    weights = torch.softmax(masked, dim=axis)
    output = weights @ v  # [T, d_head]
    found = {"raw_scores": raw, "scaled_scores": scaled, "masked_scores": masked,
             "weights": weights, "output": output}  # fmt: skip
    if p.w_vocab is not None:
        found["logits"] = output @ torch.tensor(p.w_vocab, dtype=f64)
    return found


def _row(p: practice.Practice, stages: dict[str, torch.Tensor]) -> list[float]:
    return stages[p.stage][p.row].tolist()


def _text(values: list[float], d: int) -> str:
    return " ".join("-inf" if math.isinf(v) else f"{v:.{d}f}" for v in values)


def _typed(values: list[float], d: int) -> list[float]:
    return [v if math.isinf(v) else float(f"{v:.{d}f}") for v in values]


def _fits(typed: list[float], values: list[float], d: int) -> bool:
    """Whether ``values`` round to ``typed`` at ``d`` decimals (a little float slack)."""
    half = 0.5 * 10.0**-d + 1e-9
    return all(t == v if math.isinf(t) or math.isinf(v) else abs(t - v) <= half * (1 + 1e-9)
               for t, v in zip(typed, values, strict=True))  # fmt: skip


def _fits_as_typed(typed: list[float], values: list[float], right: list[float], d: int) -> bool:
    """:func:`_fits`, with each typed number that is its right value exactly read as exactly
    that value (``0.4`` for 0.566/√2 holds 0.4 alone)."""
    for t, v, r in zip(typed, values, right, strict=True):
        if math.isinf(t) or math.isinf(v) or not _exact([r], d):
            if not _fits([t], [v], d):
                return False
        elif abs(v - r) > 1e-6 * max(1.0, abs(r)):
            return False
    return True


def _far(typed: list[float], right: list[float], d: int) -> bool:
    half = 0.5 * 10.0**-d
    return any(
        (math.isinf(t) != math.isinf(r)) or (not math.isinf(t) and abs(t - r) > half + FAR)
        for t, r in zip(typed, right, strict=True)
    )


def _wrongs(p: practice.Practice, right: list[float]) -> dict[str, list[float]]:
    """Every wrong set of numbers the reference knows at the asked row: each mistake that
    changes it, the sign flipped, the minus dropped, all 0, all 1."""
    found = {name: _row(p, reference(p, **how)) for name, how in MISTAKES.items()}
    finite = [v for v in right if math.isfinite(v)]
    if any(abs(v) > 1e-9 for v in finite):
        found["sign_flipped"] = [-v if math.isfinite(v) else v for v in right]
    if any(v < 0 for v in finite):
        found["minus_dropped"] = [abs(v) if math.isfinite(v) else v for v in right]
    found["same:zero"] = [0.0] * len(right)
    found["same:one"] = [1.0] * len(right)
    return {k: v for k, v in found.items() if _far(_typed(v, 4), right, 4) or v != right}


def _exact(values: list[float], d: int) -> bool:
    return all(math.isinf(v) or abs(v - round(v, d)) <= 1e-6 * max(1.0, abs(v)) for v in values)


def _explained(data: dict[str, Any], name: str) -> bool:
    if name in MISTAKES:
        return name in data["mistakes"]
    if name in ("sign_flipped", "minus_dropped"):
        return bool({"sign_flipped", "minus_dropped"} & set(data["slips"]))
    return bool(data["slips"] or data["mistakes"] or data["misread"])  # a guess: 0 or 1


@settings(deadline=None)  # the first grading of a deal computes its catalogue
@given(
    section=st.sampled_from(SECTIONS),
    seed=st.integers(0, 10**6),
    d=st.integers(0, 4),
    pick=st.integers(0, 9),
)
def test_every_verdict_agrees_with_the_reference(
    section: int, seed: int, d: int, pick: int
) -> None:
    from attnlab.grading.answers import verdict_data

    p = practice.deal(section, seed)
    assert isinstance(p, practice.Practice)
    right = _row(p, reference(p))
    assert _fits(_typed(right, 6), p.expected(), 6), "the reference and the deal disagree"
    wrongs = _wrongs(p, right)
    names = ["right", *wrongs]
    name = names[pick % len(names)]
    values = right if name == "right" else wrongs[name]
    text = _text(values, d)
    typed = _typed(values, d)
    data = verdict_data(p.grade(text))
    kind, fitting = data["kind"], [n for n, w in wrongs.items() if _fits(typed, w, d)]
    if name == "right" and d >= ASKED:
        assert kind in ("right", "coarse"), (text, data)
        # A number that is the value exactly is read as the value, not as a rounding.
        exact = [n for n, w in wrongs.items() if _fits_as_typed(typed, w, right, d)]
        assert kind == "coarse" or not exact, (text, exact, data)
    elif name == "right":
        # Right only when the numbers are the value exactly, or the digits left out are zeros
        # (0.8 for 0.80).
        padded = [v if math.isinf(v) else round(v, ASKED) for v in right]
        assert kind != "right" or _exact(right, d) or _fits(typed, padded, ASKED), (text, data)
        assert kind != "imprecise" or not fitting, (text, fitting, data)
    elif _far(typed, right, d):
        assert kind == "wrong", (name, text, data)
        if d >= 1:
            assert _explained(data, name), (name, text, data)
