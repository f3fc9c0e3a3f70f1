"""Sections 17-19 of the web lesson: the T² cost, the debugging checklist with the ten things to
master, and the road to Week 8.

Every number is taken from :class:`attnlab.content.numbers.LessonNumbers`; the prose is ours.
"""

from __future__ import annotations

from attnlab.content.blocks import Block, figure, flow, heading, math, note, p, table
from attnlab.content.numbers import LessonNumbers
from attnlab.core import example
from attnlab.text.fmt import compact_shape, ratio
from attnlab.text.i18n import pick


def cost(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 17: B·n_head·T² score elements."""
    cfg = example.COST_CHECK
    first = n.cost[0].tokens
    rows = [
        (
            f"T={r.tokens}",
            f"{cfg.batch} × {cfg.heads} × {r.tokens}² = {r.elements:,}",
            ratio(r.ratio),
        )
        for r in n.cost
    ]
    return [
        p(pick(lang,
            "每个 Head 的分数表有 T² 个元素；全部批和 Head 合起来是 B·n_head·T² 个。权重还要同样多的空间，训练时还要存激活和梯度。",
            "Each head's score table has T² elements; over the batch and all heads that is "
            "B·n_head·T². The weights need as many again, and training also keeps activations and "
            "gradients.")),
        table([f"B={cfg.batch}, n_head={cfg.heads}", pick(lang, "全部 Head 的分数元素", "Score elements, all heads"),
               pick(lang, f"相对 T={first}", f"Relative to T={first}")], rows,
              pick(lang, "元素个数取自管线在 meta 设备上真正产生的张量形状。", "Counts are read from the tensors the pipeline really makes (on the meta device)."),
              key="cost"),
        math(r"\mathrm{Score\ elements}=B\,n_{\mathrm{head}}\,T^2,\qquad \mathrm{cost}=O(B\,n_{\mathrm{head}}\,T^2d_{\mathrm{head}})=O(BT^2C)"),
        figure("cost", lang, pick(lang, "分数元素随 T 的平方增长（对数坐标）", "Score elements grow with T squared (log-log axes)")),
        note(pick(lang,
            "因果掩码禁止读未来，但普通的稠密实现仍会先造出完整的 T×T 矩阵。优化实现可以省内存或运算，不改变这里的基本形状。",
            "The causal mask forbids reading the future, but a plain dense implementation still builds "
            "the full T×T matrix first. Optimised kernels save memory or work; they do not change "
            "these basic shapes.")),
    ]  # fmt: skip


def checklist(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 18: the debugging order, and ten things to keep."""
    steps = [
        ("X", pick(lang, "是 [B,T,C] 的向量，不是 Token ID", "[B,T,C] vectors, not token IDs")),
        (
            "Q/K/V",
            pick(lang, "[B,T,d_head]，来自各自的投影", "[B,T,d_head], from their own projections"),
        ),
        (
            "Scores",
            pick(
                lang,
                "用了 K.transpose(-2,-1)，得到 [B,T,T]",
                "K.transpose(-2,-1) was used, giving [B,T,T]",
            ),
        ),
        ("Scale", pick(lang, "除以 √d_k", "divided by √d_k")),
        (
            "Mask",
            pick(lang, "未来列在 Softmax 之前为 −∞", "future columns are −∞ before the softmax"),
        ),
        ("Softmax", pick(lang, "dim=-1，每行加总为 1", "dim=-1, every query row sums to 1")),
        ("Retrieval", pick(lang, "权重 @ V，而不是 @ K", "weights @ V, not @ K")),
        (
            "Multi-Head",
            pick(lang, "沿特征轴拼接，经 W_O 回到 C", "concatenated on features, W_O back to C"),
        ),
        ("Batch", pick(lang, "不同批之间没有互相读取", "batch rows never read each other")),
        (
            "Logits",
            pick(
                lang,
                "LM Head 接收上下文特征，不是注意力权重",
                "the LM head takes context features, not attention weights",
            ),
        ),
    ]
    rows = [(f"{i}. {name}", what) for i, (name, what) in enumerate(steps, start=1)]
    return [
        table([pick(lang, "检查顺序", "Check, in order"), pick(lang, "看什么", "What to look for")], rows, key="debug"),
        heading(pick(lang, f"必须掌握的 {len(_MUST_KNOW[lang])} 件事", f"{len(_MUST_KNOW[lang])} things to master")),
        flow(_MUST_KNOW[lang]),
        math(r"X\rightarrow Q,K,V\rightarrow QK^\top\rightarrow /\sqrt{d_k}\rightarrow\mathrm{Mask}\rightarrow\mathrm{Softmax}\rightarrow PV\rightarrow\mathrm{MultiHead}\rightarrow H\rightarrow\mathrm{Logits}"),
        p(pick(lang,
            "想亲手看看每种错误会算出什么数？命令 attnlab mistakes 会列出错误目录，attnlab mistakes 名称 会逐个重现它们。",
            "Want to see the number each mistake produces? The mistakes catalogue of the command "
            "line (attnlab mistakes, then attnlab mistakes NAME) reproduces them one by one.")),
    ]  # fmt: skip


def week8(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 19: what a Transformer block adds around attention."""
    x = compact_shape(n.stages.x.shape)
    bt = compact_shape((n.sizes["B"], n.sizes["T"]))[:-1]
    return [
        p(pick(lang,
            f"Week 8 从同一个 [B,T,C]={x} 接口继续。多头注意力必须返回 {x}，才能和残差路径相加。",
            f"Week 8 continues from the same [B,T,C]={x} interface. Multi-head attention must return "
            f"{x} so that it can be added to the residual path.")),
        flow([
            f"Token + Position Embedding {x}",
            f"Pre-Norm Multi-Head Attention {x}",
            f"x + Attention(LN₁(x)) {x}",
            pick(lang, f"逐位置 FFN {x}", f"Per-position FFN {x}"),
            f"x₁ + FFN(LN₂(x₁)) {x}",
            f"LM head → Logits {bt},V_vocab]",
        ]),
        math(r"x_1=x+\operatorname{Attention}(\operatorname{LN}_1(x)),\qquad x_2=x_1+\operatorname{FFN}(\operatorname{LN}_2(x_1))"),
        table([pick(lang, "组件", "Component"), pick(lang, "主要职责", "Main job")],
              [("Position Embedding", pick(lang, "提供顺序与位置信息", "supplies order and position")),
               ("Causal Multi-Head Attention", pick(lang, "在允许的位置之间混合信息", "mixes information across allowed positions")),
               ("FFN", pick(lang, "对每个位置独立做同样的非线性变换", "applies the same non-linear map to each position alone")),
               ("Residual", pick(lang, "保留原路径，让深层更好训练", "keeps the original path, eases deep training")),
               ("LayerNorm", pick(lang, "稳定各层输入的尺度", "steadies the scale of each layer's input"))], key="block"),
        note(pick(lang,
            "多头是并行地读信息；多个 Block 是串行地改造表示。两者不要混为一谈。",
            "Heads read in parallel; blocks transform in sequence. Keep the two apart.")),
    ]  # fmt: skip


#: Section 18's ten things to master, in our own words.
_MUST_KNOW: dict[str, tuple[str, ...]] = {
    "zh": (
        "Attention 解决的是：当前词相同，却要读出不同前缀的信息。",
        "X 是 Token 的向量表示，不是 Token 编号。",
        "Query 表达当前位置要找什么。",
        "Key 是供匹配用的、学出来的线索。",
        "Value 是匹配之后真正被带回的内容。",
        "QKᵀ 的每个元素都是一次 Query 与 Key 的点积，即一个原始分数。",
        "缩放、掩码、逐行 Softmax 这三步顺序不能换，也不能省。",
        "因果掩码禁止读未来，但允许读全部历史和当前位置。",
        "多头拼接再乘 W_O，把多个 Head 恢复到模型宽度 C。",
        "Attention 的输出是上下文特征；产生词表 Logits 的是 LM Head。",
    ),
    "en": (
        "Attention solves one problem: the same current token must read different prefixes.",
        "X holds the tokens' vectors, not their IDs.",
        "A query states what the current position is looking for.",
        "A key is a learned clue to be matched against.",
        "A value is the content actually carried back after the match.",
        "Each entry of QKᵀ is one query·key dot product: a raw score.",
        "Scale, mask, row softmax: that order, with no step skipped or swapped.",
        "The causal mask forbids the future but allows the whole past and the position itself.",
        "Concatenating the heads and multiplying by W_O returns them to the model width C.",
        "Attention outputs context features; the LM head is what produces vocabulary logits.",
    ),
}
