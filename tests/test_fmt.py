"""The one number formatter: each named variant writes -0.00001, 0.8 and −∞ its own way, on
purpose (see the table in attnlab.show.fmt)."""

from __future__ import annotations

import pytest
import torch

from attnlab.errors import shape_text
from attnlab.show import fmt

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
