"""Sections 8-9 of the web lesson: why the scores are divided by √d_k, and reading every axis.

Every number is taken from :mod:`attnlab.lesson.numbers` (most through
:class:`attnlab.content.numbers.LessonNumbers`); the prose is ours.
"""

from __future__ import annotations

from attnlab.content.blocks import Block, figure, math, note, p, pre, table
from attnlab.content.intro import CHAIN_SECTION, EXPERIMENT_SECTION
from attnlab.content.numbers import LessonNumbers
from attnlab.core import example
from attnlab.lesson import numbers
from attnlab.text.fmt import compact_shape, named_shape, num, tiny, vec
from attnlab.text.i18n import pick


def scaling(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 8: why divide by √d_k."""
    st, d = n.stages, n.sizes["d"]
    sqrt_d = num(numbers.tensor("sqrt_d_k"))
    text = [f"sqrt(d_k) = sqrt({d}) ≈ {sqrt_d}"]
    for b, name in enumerate(example.prompt_names(2)):
        text.append(
            f"{name}: raw {vec(st.raw_scores[b, -1])}  →  scaled {vec(st.scaled_scores[b, -1])}"
        )
    return [
        p(pick(lang,
            "点积是 d_k 个乘积之和。如果各分量大致零均值、单位方差、彼此不太相关，和的方差大约随 d_k 增长，"
            "标准差随 √d_k 增长。除以 √d_k，把典型分数拉回稳定的尺度。",
            "A dot product adds d_k products. If the components are roughly zero-mean, unit-variance "
            "and not strongly correlated, the variance of the sum grows like d_k and its spread like "
            "√d_k. Dividing by √d_k brings typical scores back to a steady scale.")),
        math(r"q\cdot k=\sum_{i=1}^{d_k}q_ik_i,\qquad \operatorname{Var}(q\cdot k)\approx d_k,\qquad \operatorname{Std}(q\cdot k)\approx\sqrt{d_k}"),
        pre("\n".join(text)),
        figure("scale", lang, pick(lang, "随 d_k 变宽的分数，以及缩放前后 Softmax 的尖锐程度（测量值）",
                    "Score spread against d_k, and how peaked the softmax gets with and without scaling (measured)")),
        note(pick(lang,
            "缩放不改变同一行的大小顺序，只改变 Softmax 收到的尺度。分数差距过大时 Softmax 几乎变成独热，"
            "对分数的微小变化不再敏感。给整行加同一个常数则完全不改变 Softmax。",
            "Scaling keeps the order within a row and changes only the scale the softmax receives. "
            "When scores spread too far the softmax turns almost one-hot and stops responding to small "
            "changes. Adding one constant to a whole row changes nothing at all.")),
        math(rf"\widetilde{{S}}=S/\sqrt{{d_k}},\qquad S,\widetilde{{S}}:[B,T,T]={compact_shape(st.raw_scores.shape)}"),
        *_shift(lang),
    ]  # fmt: skip


def _shift(lang: str) -> list[Block]:
    """Section 8: a constant added to a whole row leaves the softmax where it was (computed)."""
    base = vec(numbers.tensor("shift.base"), 6)
    rows = [
        (f"c = {num(c, 0)}", vec(r), vec(w, 6), tiny(d))
        for c, r, w, d in zip(
            *(numbers.tensor(f"shift.{k}") for k in ("constants", "rows", "weights", "max_diff")),
            strict=True,
        )
    ]
    row = vec(numbers.tensor("shift.rows[0]") - numbers.tensor("shift.constants[0]"))
    return [
        p(pick(lang,
            f"亲手验证“整行加常数不变”：取 A 最后一行的缩放分数 {row}，softmax 为 {base}；再给整行加上不同的 c：",
            f"Check “a constant added to the row changes nothing” yourself: A's final scaled row {row} "
            f"has softmax {base}; now add different constants c to the whole row:")),
        table(["c", pick(lang, "行 + c", "row + c"), "softmax", pick(lang, "与 c=0 的最大差", "max |diff| from c=0")], rows,
              pick(lang, "exp(s+c) = exp(s)·exp(c)：分子分母同乘 exp(c)，约掉了。剩下的差只是双精度浮点的舍入。",
                   "exp(s+c) = exp(s)·exp(c): numerator and denominator gain the same factor, which cancels. "
                   "What difference is left is double-precision rounding."),
              key="shift"),
        note(pick(lang,
            "别把这里 Softmax 的局部斜率直接当成每个最终参数的梯度。Softmax 对分数的导数只是链条中的一环；某个 W_Q 或 W_V "
            f"元素的梯度还要乘上分数对它的导数、以及损失对输出的导数（第 {CHAIN_SECTION}、{EXPERIMENT_SECTION} 节）。",
            "Do not read the softmax's local slope here as the gradient of every final parameter. The "
            "softmax's derivative with respect to the scores is one link of the chain; the gradient of "
            "an entry of W_Q or W_V also multiplies in how the scores depend on it and how the loss "
            f"depends on the output (sections {CHAIN_SECTION} and {EXPERIMENT_SECTION}).")),
    ]  # fmt: skip


def axes(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 9: every axis of every shape, and the extra shape check."""
    st = n.stages
    heads = n.sizes["C"] // n.sizes["d"]
    axes_rows = [
        (
            "X",
            named_shape("B,T,C", st.x.shape),
            pick(lang, "批、Token 位置、模型特征", "batch, token position, model feature"),
        ),
        (
            "Q / K / V",
            named_shape("B,T,d_head", st.q.shape),
            pick(lang, "批、Token 位置、Head 特征", "batch, token position, head feature"),
        ),
        (
            "K.transpose(-2,-1)",
            named_shape("B,d_head,T", st.k.transpose(-2, -1).shape),
            pick(lang, "批、Head 特征、Key 位置", "batch, head feature, key position"),
        ),
        (
            pick(lang, "分数 / 权重", "Scores / Weights"),
            named_shape("B,T,T", st.weights.shape),
            pick(
                lang, "批、Query 位置、Key/Value 位置", "batch, query position, key/value position"
            ),
        ),
        (
            pick(lang, "Head 输出", "Head output"),
            named_shape("B,T,d_head", st.output.shape),
            pick(lang, "批、Query 位置、Head 特征", "batch, query position, head feature"),
        ),
        (
            pick(lang, "多头的权重", "Weights of all heads"),
            named_shape("B,n_head,T,T", (st.x.size(0), heads, st.x.size(1), st.x.size(1))),
            pick(
                lang, "批、Head、Query 位置、Key 位置", "batch, head, query position, key position"
            ),
        ),
    ]
    index_rows = [
        (
            "weights[0,1,0]",
            num(st.weights[0, 1, 0]),
            pick(
                lang,
                f"A 最后的“{tok[0][1]}”分给“{tok[0][0]}”的权重",
                f"weight the final “{tok[0][1]}” of A gives “{tok[0][0]}”",
            ),
        ),
        (
            "weights[1,1,0]",
            num(st.weights[1, 1, 0]),
            pick(
                lang,
                f"B 最后的“{tok[1][1]}”分给“{tok[1][0]}”的权重",
                f"weight the final “{tok[1][1]}” of B gives “{tok[1][0]}”",
            ),
        ),
        (
            "output[1,1,:]",
            vec(st.output[1, 1]),
            pick(
                lang,
                f"B 最后的“{tok[1][1]}”的 Head 输出向量",
                f"head output vector of B's final “{tok[1][1]}”",
            ),
        ),
    ]
    cfg = example.SHAPE_CHECK
    extra = [(r.stage, compact_shape(r.shape), ", ".join(r.axes)) for r in n.shapes]
    return [
        table([pick(lang, "张量", "Tensor"), pick(lang, "形状", "Shape"), pick(lang, "各轴含义", "Meaning of each axis")], axes_rows,
              pick(lang, "形状的数字相同，不代表轴的含义相同。", "Equal sizes do not mean equal meanings."), key="axes"),
        math(r"Q:[B,T,d_k]\ @\ K.\operatorname{transpose}(-2,-1):[B,d_k,T]\rightarrow S:[B,T,T]"),
        math(r"P:[B,T,T]\ @\ V:[B,T,d_v]\rightarrow O:[B,T,d_v]"),
        p(pick(lang,
            "K.transpose(-2,-1) 只交换最后两个轴（位置和特征），批轴不动；写成 K.T 或 transpose(0,1) 会把批轴也搬走。",
            "K.transpose(-2,-1) swaps only the last two axes (position and feature) and leaves the batch "
            "axis alone; K.T or transpose(0,1) would move the batch axis too.")),
        p(pick(lang,
            "每张 [T,T] 表里，行 t 是发起读取的 Query 位置，列 j 是被比较的 Key 位置（也是随后取 Value 的位置）。"
            "两个轴都是位置轴，不是特征轴。",
            "In every [T,T] table, row t is the query position doing the reading and column j the key "
            "position being compared (and later the value position read). Both are position axes, "
            "not feature axes.")),
        table([pick(lang, "下标", "Index"), pick(lang, "值", "Value"), pick(lang, "含义", "Meaning")], index_rows, key="index"),
        table([pick(lang, "阶段", "Stage"), pick(lang, "形状", "Shape"), pick(lang, "轴", "Axes")], extra,
              pick(lang, f"另取 B={cfg['batch']}, T={cfg['tokens']}, C={cfg['embed']}, n_head={cfg['heads']} 的形状检查（实测）",
                   f"Extra shape check with B={cfg['batch']}, T={cfg['tokens']}, C={cfg['embed']}, n_head={cfg['heads']} (measured)"),
              key="shape-check"),
        note(pick(lang,
            "这组尺寸各不相同，把 Head 轴误当成时间轴会立刻暴露。",
            "With every size different, mistaking the head axis for the time axis shows up at once.")),
    ]  # fmt: skip
