"""The one number formatter: each named variant writes -0.00001, 0.8 and −∞ its own way, on
purpose (see the table in attnlab.text.fmt)."""

from __future__ import annotations

import pytest
import torch

from attnlab.text import fmt
from attnlab.text.errors import shape_text

NEG_INF = float("-inf")


@pytest.mark.parametrize(
    ("variant", "p", "written"),
    [
        (fmt.num, 3, ["0.000", "0.800", "-∞"]),
        (fmt.trimmed, 3, ["0", "0.8", "-∞"]),
        (fmt.tex, 3, ["0", "0.8", r"-\infty"]),
        (fmt.cell, 3, ["-0.000", "0.8", "−∞"]),
        (fmt.answer, 3, ["0.000", "0.800", "−∞"]),
        (fmt.fixed, 3, ["-0.000", "0.800", "-inf"]),
        (fmt.typed, 4, ["-0", "0.8", "-inf"]),
    ],
)
def test_each_variant_writes_the_same_three_numbers_its_own_way(variant, p, written) -> None:
    assert [variant(v, p) for v in (-0.00001, 0.8, NEG_INF)] == written


def test_vectors_shapes_and_matrices() -> None:
    w = torch.tensor([[1.0, 0.0], [0.59868, 0.40132]])
    assert fmt.vec(w[1]) == "[0.599, 0.401]" and fmt.vec([1.0, 0.25], 2, fmt.tex) == "[1, 0.25]"
    assert fmt.vec(w, 4, fmt.typed) == "[1, 0, 0.5987, 0.4013]"  # flattened
    assert fmt.tex_matrix(w, 2) == r"\begin{bmatrix}1&0\\0.6&0.4\end{bmatrix}"
    assert shape_text(torch.Size([2, 2, 4])) == "[2, 2, 4]" == fmt.shape_text((2, 2, 4))
    assert fmt.compact_shape(torch.Size([2, 2, 4])) == "[2,2,4]"


def test_answers_group_thousands_and_nest_lists() -> None:
    assert fmt.answer(4_000_000.0, 0) == "4,000,000"
    assert fmt.answer([0.59868, NEG_INF], 3) == "[0.599, −∞]"


def test_cell_keeps_the_zeros_of_a_rounded_value() -> None:
    assert fmt.cell(0.57) == "0.57" and fmt.cell(0.5701) == "0.570" and fmt.cell(1.0) == "1"


def test_change_adds_decimals_until_the_difference_shows() -> None:
    from attnlab.text.fmt import change

    assert change(0.416424, 0.416476, 3) == ("0.4164", "0.4165")
    assert change(0.172455, 0.172453, 3) == ("0.172455", "0.172453")
    assert change(1.5, 2.5, 3) == ("1.500", "2.500")  # already different at p
    assert change(0.25, 0.25, 2) == ("0.25", "0.25")  # equal stays at p


@pytest.mark.parametrize("precision", ["1", "2", "3", "4"])
def test_grad_script_shows_every_change_at_any_precision(precision: str) -> None:
    """Section 16's point (p(AI|A) rises, p(我|B) falls) must be visible at every precision."""
    import contextlib
    import io
    import re

    from attnlab.cli._scripts import run

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run("grad", ["--lang", "en", "--precision", precision]) == 0
    pairs = re.findall(r"(-?\d+\.\d+) → (-?\d+\.\d+)", out.getvalue())
    assert len(pairs) == 5, out.getvalue()[-600:]
    assert all(a != b for a, b in pairs), pairs
