"""Sections 10-13 of the web lesson: the causal mask, −∞, and the code that reproduces it all.

Every number is taken from :class:`attnlab.content.numbers.LessonNumbers`; the code shown is the
self-contained listings of :mod:`attnlab.content.listings`, the text the tests run.
"""

from __future__ import annotations

import torch

from attnlab.content import listings
from attnlab.content.blocks import Block, figure, listing, listing_output, math, note, p, table
from attnlab.content.numbers import LessonNumbers
from attnlab.core import example
from attnlab.text.fmt import compact_shape, num, tex_matrix, vec
from attnlab.text.i18n import pick


def why_mask(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 10: training must not read the future."""
    st, a0, a1 = n.stages, tok[0][0], tok[0][1]
    nxt = tok[1][0]  # the page's example continues 我 喜欢 with 猫 (you like → we)
    big, last = n.mask_t4.size(0), n.mask_t4.size(0) - 1
    seen = [str(j) for j in n.mask_t4[last].nonzero()[:, 0].tolist()]  # what the last row may read
    return [
        p(pick(lang,
            f"训练时整条序列一次摆在面前：输入 [{a0}, {a1}]，目标是往后错一位的 [{a1}, {nxt}]。位置 t=0 只看到“{a0}”，它的任务是预测下一个词“{a1}”；"
            f"如果不加掩码，它可以直接读右边已经出现的“{a1}”——等于偷看答案。生成时未来的词还不存在，"
            "这种“能力”根本用不上，训练和生成就对不上了。",
            f"In training the whole sequence is laid out at once: the input [{a0}, {a1}] and the "
            f"target, the same text moved one place on, [{a1}, {nxt}]. Position t=0 sees only “{a0}” and "
            f"must predict the next token, “{a1}”. Without a mask it could simply read the “{a1}” on "
            "its right, which is peeking at the answer. At generation time the future does not exist "
            "yet, so that skill is useless and training no longer matches generation.")),
        math(r"M_{t,j}=\begin{cases}1,&j\le t\\0,&j>t\end{cases}"),
        math(rf"M_{{T={st.causal_mask.size(0)}}}={tex_matrix(st.causal_mask.to(torch.int64), 0)},\qquad "
             rf"M_{{T={n.mask_t4.size(0)}}}={tex_matrix(n.mask_t4, 0)}"),
        p(pick(lang,
            f"看 T={big} 的最后一行：位置 t={last} 可以读 {'、'.join(seen)} 全部，不只是紧挨着的前一个。"
            "掩码只划出能看的范围，不决定在范围内各读多少——那是 Softmax 的事。",
            f"Look at the last row for T={big}: position t={last} may read {', '.join(seen)}, not "
            "just its neighbour. The mask only draws the boundary; how much to read inside it is "
            "the softmax's job.")),
        math(r"M:[T,T]\ \xrightarrow{\text{broadcast}}\ \mathrm{Scores}:[B,n_{\mathrm{head}},T,T]"),
    ]  # fmt: skip


def neg_inf(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 11: the mask goes in before the softmax, as −∞."""
    st, demo = n.stages, n.mask_demo
    row, future = example.MASK_DEMO_ROW
    rows = [
        (
            pick(
                lang,
                f"原始 [{num(row, 1)}, {num(future, 1)}]",
                f"original [{num(row, 1)}, {num(future, 1)}]",
            ),
            pick(lang, "第二列是未来", "the second column is the future"),
        ),
        (
            pick(lang, "错误：未来改成 0", "wrong: future set to 0"),
            f"softmax([{num(row, 1)}, 0]) = {vec(demo['zero_fill'])}",
        ),
        (
            pick(lang, "正确：未来改成 −∞", "right: future set to −∞"),
            f"softmax([{num(row, 1)}, −∞]) = {vec(demo['neg_inf_fill'], 0)}",
        ),
    ]
    return [
        p(pick(lang,
            "0 是一个完全合法的分数，exp(0)=1，它照样分走权重。只有 −∞ 的指数才是 0，才能真正把未来位置移出候选。",
            "0 is a perfectly valid score: exp(0)=1, so it still takes weight. Only −∞ has an "
            "exponential of 0, which truly removes the future position from the running.")),
        table([pick(lang, "t=0 的缩放行", "Scaled row at t=0"), pick(lang, "结果", "Result")], rows, key="mask-demo"),
        figure("mask", lang, pick(lang, "同一行，未来位置填 0 与填 −∞ 的 Softmax 对比", "The same row with its future filled by 0 versus −∞")),
        math(r"\widehat{S}_{t,j}=\begin{cases}\widetilde{S}_{t,j},&M_{t,j}=1\\-\infty,&M_{t,j}=0\end{cases},\qquad e^{-\infty}=0"),
        math(rf"\widehat{{S}}_A={tex_matrix(st.masked_scores[0])},\qquad \widehat{{S}}_B={tex_matrix(st.masked_scores[1])}"),
        math(rf"P_A={tex_matrix(st.weights[0])},\qquad P_B={tex_matrix(st.weights[1])}"),
        note(pick(lang,
            "顺序是：缩放 → 掩码 → Softmax。先 Softmax 再掩码，每行就不再加总为 1。",
            "The order is scale → mask → softmax. Mask after the softmax and the rows no longer sum to 1.")),
    ]  # fmt: skip


def reproduce(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 12: a self-contained script that reproduces every hand-computed number."""
    return [
        p(pick(lang,
            "下面是一个完整的脚本：复制进一个 .py 文件，装了 PyTorch 就能运行。它按本课的顺序打印 Q、K、V、"
            "原始分数、缩放分数、掩码后的分数、权重和输出，最后打印两条提示的末行。"
            f"W_K 照它的设计写成 {'、'.join(listings.w_k_design())}；投影是固定值，不是随机初始化的 nn.Linear，"
            "所以脚本逐位复现手算的结果。",
            "Below is a complete script: paste it into a .py file and run it with PyTorch installed. "
            "It prints Q, K, V, the raw, scaled and masked scores, the weights and the output in the "
            f"lesson's order, then the final rows of both prompts. W_K is written as designed, "
            f"{', '.join(listings.w_k_design())}; the projections are fixed values, not a randomly initialised "
            "nn.Linear, so the script reproduces the hand-computed numbers digit for digit.")),
        listing("script", lang, pick(lang, "独立脚本：从 X 到 Head 输出", "A standalone script: from X to the head output")),
        listing_output("script", lang),
        note(pick(lang,
            f"这里按公式写 x @ w_q，所以 W 的形状是 [C,d_head]={compact_shape(example.lesson_w_q().shape)}。"
            "nn.Linear(C, d_head) 内部存的 weight 是它的转置 [d_head,C]，数学含义相同。",
            f"The code follows the formula, x @ w_q, so W has shape [C,d_head]={compact_shape(example.lesson_w_q().shape)}. "
            "nn.Linear(C, d_head) stores its weight transposed, [d_head,C]; the maths is the same.")),
        p(pick(lang,
            "attnlab 自己的命令行、图和网页走的是 attnlab.core.pipeline 里同一串阶段；测试把这个脚本原样运行，核对它和那条路径给出的数一致。",
            "attnlab's own command line, figures and pages run the same stages in attnlab.core.pipeline; "
            "the tests run this script exactly as shown and check it agrees with that path.")),
    ]  # fmt: skip


def head_module(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 13: a reusable causal head as an nn.Module."""
    rows = [
        ("query/key/value(x)", "Q=XW_Q, K=XW_K, V=XW_V", "[B,T,C] → [B,T,d_head]"),
        ("query @ key.transpose(-2, -1)", "S=QKᵀ", "[B,T,d_head] @ [B,d_head,T] → [B,T,T]"),
        ("/ math.sqrt(key.size(-1))", "S/√d_k", "[B,T,T] → [B,T,T]"),
        (
            "masked_fill(~visible, -inf)",
            pick(lang, "未来 → −∞", "future → −∞"),
            "[B,T,T] → [B,T,T]",
        ),
        ("softmax(dim=-1)", pick(lang, "逐行 Softmax", "row softmax"), "[B,T,T] → [B,T,T]"),
        ("weights @ value", "O=PV", "[B,T,T] @ [B,T,d_head] → [B,T,d_head]"),
    ]
    return [
        listing("head", lang, pick(lang, "可复用的因果 Head，附本课例子的运行", "A reusable causal head, with the lesson's example run through it")),
        listing_output("head", lang),
        table([pick(lang, "代码阶段", "Code stage"), pick(lang, "公式", "Formula"), pick(lang, "形状", "Shape")], rows, key="head-stages"),
        p(pick(lang,
            "register_buffer 让掩码跟着模型搬到 CPU 或 GPU，却不成为可训练参数。forward 先检查 T 不超过 context_length，"
            "再只取掩码左上角的 [T,T] 块，所以一张按最大上下文长度建好的掩码适配任何更短的序列。",
            "register_buffer makes the mask move with the model to CPU or GPU without becoming a "
            "trainable parameter. forward first checks that T does not exceed context_length, then "
            "takes only the mask's top-left [T,T] block, so one mask built for the longest context "
            "fits any shorter sequence.")),
    ]  # fmt: skip
