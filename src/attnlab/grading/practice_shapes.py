"""Practice for section 9: given B, T, C and n_head, name the shape of one stage.

A :class:`ShapePractice` is dealt from a seed like the numeric exercises of
:mod:`attnlab.grading.practice`. Its sizes are all different (B, T, n_head, d_head and C), so a
size in the learner's answer says which axis they meant. The right shape is measured: the fused
``CausalSelfAttention`` runs on a random ``[B, T, C]`` input of these sizes
(:func:`attnlab.lesson.shapes.run_shape_check`), nothing is typed in. A wrong answer gets what is
true of it: the right sizes in another order, or the shape of another tensor of the pipeline.

Example::

    >>> p = deal_shape(seed=3)
    >>> p.grade(" ".join(str(n) for n in p.shape)).correct
    True
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from attnlab.grading.answers import parse_numbers
from attnlab.grading.grade import Verdict
from attnlab.text.errors import InputError

SECTION = 9
#: The stages asked for (keys of :func:`attnlab.lesson.shapes.shape_rows`), and how each is named.
ASKED: dict[str, tuple[str, str]] = {
    "qkv": ("拆成多个头之后的 Q（view 再 transpose(1, 2)）",
            "Q split into heads (view, then transpose(1, 2))"),
    "scores": ("所有头的原始分数 Q·Kᵀ", "the raw scores Q·Kᵀ of all heads"),
    "weights": ("所有头的注意力权重", "the attention weights of all heads"),
    "head_outputs": ("各头的输出 weights·V（合并之前）",
                     "the heads' outputs weights·V (before they are merged)"),
    "merged": ("各头合并回来之后（transpose 再 view）",
               "the heads merged back (transpose, then view)"),
}  # fmt: skip
#: Other tensors a learner may give the shape of (not asked, but named when given).
OTHERS: dict[str, tuple[str, str]] = {
    "input": ("输入 x", "the input x"),
    "split_view": ("view 之后、transpose 之前的 Q", "Q after the view, before the transpose"),
}
#: A times sign between two sizes (``4x3x9``, ``4 × 3``, ``4*3``): a shape as it is often written.
_TIMES_SIGN = re.compile(r"(?<=\d)\s*[xX×*]\s*(?=\d)")
#: The parts of an answer between spaces, commas and brackets, and a part that looks like a size.
_PART = re.compile(r"[^\s,;，、；\[\]()（）［］]+")
_SIZE_LIKE = re.compile(r"[-+]?[\d.]+")


@dataclass(frozen=True)
class ShapePractice:
    """One dealt shape exercise: the sizes, the stage asked and the seed."""

    seed: int
    batch: int
    tokens: int
    heads: int
    d_head: int
    stage: str
    section: int = SECTION
    decimals: int = 0

    @property
    def id(self) -> str:
        return f"{self.section}-{self.seed}"

    @property
    def embed(self) -> int:
        """``C = n_head · d_head``."""
        return self.heads * self.d_head

    @cached_property
    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Every stage's shape, measured on a random input of these sizes."""
        from attnlab.lesson.shapes import run_shape_check, shape_rows

        stages = run_shape_check(self.batch, self.tokens, self.embed, self.heads, self.seed)
        found = {row.stage: row.shape for row in shape_rows(stages)}
        found["split_view"] = tuple(stages.q.transpose(1, 2).shape)  # [B, T, n_head, d_head]
        return found

    @property
    def shape(self) -> tuple[int, ...]:
        """The right answer."""
        return self.shapes[self.stage]

    def expected(self) -> list[float]:
        return [float(n) for n in self.shape]

    def ask(self) -> dict[str, Any]:
        return {"stage": self.stage}

    def input_document(self, lang: str = "zh") -> dict[str, Any]:
        """The sizes, as ``attnlab shapes`` takes them."""
        return {"batch": self.batch, "tokens": self.tokens, "embed": self.embed,
                "heads": self.heads}  # fmt: skip

    def _spaced(self, text: str) -> str:
        """``text`` with times signs between sizes made spaces; a part that is no size is
        refused in the words of a shape (not "a number like 0.599")."""
        spaced = _TIMES_SIGN.sub(" ", text)
        bad = next((p for p in _PART.findall(spaced) if not _SIZE_LIKE.fullmatch(p)), None)
        if bad is not None:
            example = f"{self.batch} {self.tokens} {self.embed}"
            raise InputError(
                f"expected the size of each axis, separated by spaces (such as "
                f"{example}), got {bad[:20]!r}",
                f"需要用空格分开的各轴大小（例如 {example}），收到的是 {bad[:20]!r}",
            )
        return spaced

    def grade(self, text: str) -> Verdict:
        """Right when every size is in its place; a wrong answer names what it is.

        Raises:
            InputError: ``text`` is not a list of whole numbers (``4 3 9``, ``[4, 3, 9]``
                and ``4x3x9`` are).
        """
        typed = parse_numbers(self._spaced(text))
        for t in typed:
            if t.value != int(t.value) or t.value < 0:
                raise InputError(
                    f"a shape is whole sizes such as {self.batch}, got {t.text!r}",
                    f"形状由整数大小组成（例如 {self.batch}），收到的是 {t.text!r}",
                )
        given, expected = [t.value for t in typed], self.expected()
        if len(given) != len(expected):
            return Verdict(False, "count", expected, given, [])
        if given == expected:
            return Verdict(True, "right", expected, given, [0.0] * len(given))
        slips = []
        if sorted(given) == sorted(expected):
            slips.append("shape_order")
        slips += [f"shape_of:{name}" for name, shape in self.shapes.items()
                  if name != self.stage and [float(n) for n in shape] == given
                  and shape != self.shape]  # fmt: skip
        return Verdict(False, "wrong", expected, given, [0.0] * len(given), slips=tuple(slips))


def deal_shape(seed: int) -> ShapePractice:
    """The shape exercise dealt with ``seed``: five different sizes, one stage asked."""
    rng = random.Random(f"attnlab-practice-{SECTION}-{seed}")
    while True:
        B, T = rng.randint(2, 6), rng.randint(3, 9)
        H, d = rng.choice((2, 3, 4)), rng.randint(2, 8)
        if len({B, T, H, d, H * d}) == 5:
            return ShapePractice(seed, B, T, H, d, rng.choice(sorted(ASKED)))


def exercise_text(p: ShapePractice, lang: str) -> str:
    """The sizes and the question; never the answer."""
    zh = lang == "zh"
    what = ASKED[p.stage][0 if zh else 1]
    B, T, C, H = p.batch, p.tokens, p.embed, p.heads
    if zh:
        return (
            f"练习 {p.id}（第 9 节）：B={B} 个提示，每个 T={T} 个词元，C={C} 维，n_head={H} 个头"
            f"（d_head = C / n_head）。\n\n{what}的形状是什么？按轴的顺序写出各轴大小，用空格分开。"
        )
    return (
        f"Practice {p.id} (section 9): B={B} prompts of T={T} tokens, C={C} features, "
        f"n_head={H} heads (d_head = C / n_head).\n\nWhat is the shape of {what}? Write the size "
        "of each axis in order, separated by spaces."
    )


def axes(stage: str) -> tuple[str, ...]:
    """The axis names of a stage, as section 9 writes them."""
    from attnlab.lesson.shapes import AXES

    return ("B", "T", "n_head", "d_head") if stage == "split_view" else AXES[stage]


def solution_text(p: ShapePractice, lang: str) -> str:
    """Every stage's shape with its axis names, measured, then the answer."""
    zh = lang == "zh"
    names = {**{k: v[0 if zh else 1] for k, v in OTHERS.items()},
             **{k: v[0 if zh else 1] for k, v in ASKED.items()}}  # fmt: skip
    lines = []
    for stage in ("input", "split_view", *ASKED):
        shape = ", ".join(str(n) for n in p.shapes[stage])
        lines.append(f"  {names[stage]}: [{shape}]  [{', '.join(axes(stage))}]")
    answer = " ".join(str(n) for n in p.shape)
    lines.append(("答案：" if zh else "Answer: ") + answer)
    return "\n".join(lines)
