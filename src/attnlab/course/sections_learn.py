"""Sections 14-19 of the web lesson: self-attention, many heads, the loss, the cost, the checklist
and the road to Week 8.

Every number is taken from :mod:`attnlab.lesson.numbers` (most through
:class:`attnlab.course.numbers.LessonNumbers`); the prose is ours.
"""

from __future__ import annotations

from attnlab import example
from attnlab.course.blocks import (
    Block,
    code,
    figure,
    flow,
    listing,
    listing_output,
    math,
    note,
    p,
    pre,
    table,
)
from attnlab.course.numbers import LessonNumbers
from attnlab.i18n import pick
from attnlab.lesson import numbers
from attnlab.lesson.experiment import ExperimentResult
from attnlab.show.fmt import compact_shape, num, tex, tex_matrix, vec

P6 = 6  # section 16 shows six decimals, as the experiment's script does


def self_attention(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 14: Q, K and V all come from the same X; batch rows never meet."""
    st = n.stages
    return [
        p(pick(lang,
            "“Self”指 Q、K、V 都来自同一条输入 X，而不是“只能看自己”。GPT 的因果自注意力让每个位置看自己和全部可见的左侧。",
            "“Self” means Q, K and V all come from the same input X, not that a token may only look "
            "at itself. GPT's causal self-attention lets each position see itself and everything "
            "visible on its left.")),
        table([pick(lang, "类型", "Kind"), pick(lang, "Query 来自", "Queries from"), pick(lang, "Key / Value 来自", "Keys / values from")],
              [("Self-Attention", pick(lang, "序列 X", "sequence X"), pick(lang, "同一序列 X", "the same X")),
               ("Cross-Attention", pick(lang, "目标序列或当前状态", "target sequence or current state"),
                pick(lang, "另一条源序列", "another source sequence"))], key="self-cross"),
        math(rf"S:{compact_shape(st.raw_scores.shape)}=[B,T,T]\neq[B,T,B,T]"),
        p(pick(lang,
            f"分数张量里没有“跨批”的轴：A 的那张表只含“{tok[0][0]}、{tok[0][1]}”，B 的只含“{tok[1][0]}、{tok[1][1]}”。"
            "把两条提示放进同一批只是为了并行计算，不是把它们接成一段文本。",
            f"The score tensor has no axis that crosses the batch: A's table holds only "
            f"“{tok[0][0]}, {tok[0][1]}”, B's only “{tok[1][0]}, {tok[1][1]}”. Putting two prompts in one "
            "batch is for parallel computation, not for joining them into one text.")),
    ]  # fmt: skip


def multi_head(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 15: several heads on the same X, concatenated, then W_O."""
    st, C = n.stages, n.sizes["C"]
    heads = C // n.sizes["d"]
    head_shape = compact_shape(st.output.shape)
    return [
        p(pick(lang,
            "每个 Head 有自己的 W_Q、W_K、W_V，可以学出不同的匹配空间和不同的内容；但没有人保证它们会变成可以命名的“语法专家”。",
            "Each head has its own W_Q, W_K and W_V and can learn its own matching space and payload; "
            "nothing guarantees they turn into nameable “grammar experts”.")),
        math(rf"C={C},\qquad n_{{\mathrm{{head}}}}={heads},\qquad d_{{\mathrm{{head}}}}=C/n_{{\mathrm{{head}}}}={C // heads}"),
        flow([
            f"X {compact_shape(st.x.shape)}",
            pick(lang, f"并行：Head 1(X) 与 Head 2(X)，各 {head_shape}", f"In parallel: head 1(X) and head 2(X), each {head_shape}"),
            pick(lang, f"沿特征轴拼接 → {compact_shape(st.x.shape)}", f"Concatenate on the feature axis → {compact_shape(st.x.shape)}"),
            pick(lang, f"乘 W_O:[{C},{C}] → {compact_shape(st.x.shape)}", f"Times W_O:[{C},{C}] → {compact_shape(st.x.shape)}"),
        ]),
        math(r"\operatorname{MultiHead}(X)=\operatorname{Concat}(O^{(1)},O^{(2)})\,W_O"),
        listing("multihead", lang, pick(lang, "参考实现：Head 列表、拼接、输出投影（连同它用到的 AttentionHead）", "Reference form: a list of heads, concatenation, output projection (with the AttentionHead it uses)")),
        p(pick(lang,
            f"文件末尾的演示让两个 Head 读同一个 X：Head 1 用本课的权重，Head 2 的 W_Q 为 0，所有分数相等，于是它对可见的 Value 取均匀平均（第 1 节的基线）；"
            f"W_O 取单位矩阵，拼接结果原样输出，前 {n.sizes['d']} 列正是单个 Head 的输出。",
            f"The demo at the end of the file lets two heads read the same X: head 1 has the lesson's "
            f"weights, head 2 a zero W_Q, so all its scores are equal and it takes the plain mean of "
            f"the visible values (section 1's baseline); W_O is the identity, so the concatenation "
            f"comes out unchanged and its first {n.sizes['d']} columns are the single head's output.")),
        listing_output("multihead", lang),
        code("attnlab.modules:CausalSelfAttention.stages", pick(lang, "生产形式：一次 QKV 投影，Head 作为张量轴", "Production form: one QKV projection, heads as a tensor axis")),
        note(pick(lang,
            "W_O 不只是为了形状：拼接后各 Head 的特征只是并排放着，W_O 学会跨 Head 重新组合，并给后面的残差相加提供 [B,T,C] 接口。"
            "Head 2 读的是同一个 X，不是 Head 1 的输出；前一块输出进入后一块，是堆叠多个 Block 才有的事。",
            "W_O is not just for the shape: after concatenation the heads' features merely sit side by "
            "side; W_O learns to recombine them across heads and gives the residual add a [B,T,C] "
            "interface. Head 2 reads the same X, not head 1's output; one block feeding the next "
            "happens only when blocks are stacked.")),
    ]  # fmt: skip


def logits(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 16: from the head output to next-token logits, and one gradient step."""
    r, z, words = n.experiment, n.sizes, example.vocab(lang)
    bt = compact_shape((z["B"], z["T"]))[:-1]
    targets = [words[int(i)] for i in example.lesson_targets()]
    rows = [
        (
            f"{''.join(tok[b])}",
            vec(r.before.logits[b], P6, tex),
            f"p({targets[b]}) ≈ {num(r.before.target_probs[b], P6)}; L ≈ {num(r.before.losses[b], P6)}",
        )
        for b in range(z["B"])
    ]
    return [
        flow([f"X {bt},C]", f"Multi-Head Attention {bt},C]", pick(lang, f"残差 / FFN / 更多层 {bt},C]", f"Residual / FFN / more layers {bt},C]"),
              "LM head W_vocab:[C,V_vocab]", f"Logits {bt},V_vocab]", pick(lang, "需要概率时，沿词表轴做 Softmax", "Softmax along the vocabulary axis when probabilities are needed")]),
        math(r"H:[B,T,C]\ @\ W_{\mathrm{vocab}}:[C,V_{\mathrm{vocab}}]\rightarrow\mathrm{Logits}:[B,T,V_{\mathrm{vocab}}]"),
        p(pick(lang,
            "Attention 不直接输出哪个词。它产生上下文特征；两条提示的特征不同，LM Head 才能给出不同的 Logits。",
            "Attention does not output a token. It produces context features; because the two prompts' "
            "features differ, the LM head can give them different logits.")),
        p(pick(lang,
            f"一个最小实验：在单头输出 h 后面接一个固定的评分矩阵 W_vocab（{compact_shape(example.lesson_w_vocab().shape)}），"
            f"目标仍是 A→{targets[0]}、B→{targets[1]}。A 的 h={vec(r.before.h[0], P6)}，B 的 h={vec(r.before.h[1], P6)}。",
            f"A minimal experiment: after the single head's output h, a fixed scoring matrix W_vocab "
            f"({compact_shape(example.lesson_w_vocab().shape)}) with targets A→{targets[0]} and B→{targets[1]}. "
            f"A has h={vec(r.before.h[0], P6)}, B has h={vec(r.before.h[1], P6)}.")),
        math(rf"W_{{\mathrm{{vocab}}}}={tex_matrix(example.lesson_w_vocab(), 0)}"),
        table([pick(lang, "上下文", "Context"), "Logits", pick(lang, "目标概率 / 单题损失", "Target probability / loss")], rows,
              pick(lang, f"平均损失 ≈ {num(r.before.loss_mean, P6)}", f"Mean loss ≈ {num(r.before.loss_mean, P6)}"), key="logits"),
        *_gradient_step(r, lang, targets),
        code("attnlab.lesson.experiment:forward", pick(lang, "实验的前向计算（注意力仍走同一条路径）", "The experiment's forward pass (attention still takes the one path)")),
    ]  # fmt: skip


def _gradient_step(r: ExperimentResult, lang: str, targets: list[str]) -> list[Block]:
    i, j = r.param
    lines = []
    for name in example.prompt_names(2):
        slopes = numbers.tensor(f"experiment.score_slopes.{name}").tolist()
        consts = numbers.tensor(f"experiment.score_intercepts.{name}").tolist()
        terms = [_linear(a, c) for a, c in zip(slopes, consts, strict=True)]
        lines.append(
            pick(
                lang,
                f"{name} 的最后一行缩放分数：[{', '.join(terms)}]",
                f"{name}, final scaled scores: [{', '.join(terms)}]",
            )
        )
    lines += [
        f"q = W_Q[{i},{j}] = {tex(r.q_old)}",
        f"d(mean loss)/dq ≈ {num(r.grad_autograd, P6)}  (autograd; finite difference {num(r.grad_finite_difference, P6)})",
        f"lr = {tex(r.lr, 4)}:  q_new = q − lr·grad ≈ {num(r.q_new, P6)}",
    ]
    after = [
        (
            f"p({targets[b]} | {name})",
            num(r.before.target_probs[b], P6),
            num(r.after.target_probs[b], P6),
        )
        for b, name in enumerate(example.prompt_names(2))
    ] + [
        (
            pick(lang, "平均损失", "mean loss"),
            num(r.before.loss_mean, P6),
            num(r.after.loss_mean, P6),
        )
    ]
    return [
        p(pick(lang,
            f"为了只看一个因素，只调整 W_Q[{i},{j}]：它影响最后一个位置 Query 的第一个分量。先从损失求出它的梯度，再走一步。",
            f"To isolate one factor, only W_Q[{i},{j}] changes: it feeds the first component of the "
            "final query. Take the loss's gradient with respect to it, then one step.")),
        pre("\n".join(lines)),
        table(["", pick(lang, "更新前", "before"), pick(lang, "更新后", "after")], after, key="update"),
        note(pick(lang,
            f"诚实地看结果：平均损失下降了，p({targets[0]}|A) 略升，但 p({targets[1]}|B) 略降。一个参数同时服务两条提示，"
            "一步梯度只保证总体变好，不保证每一题都变好。",
            f"Look honestly: the mean loss falls and p({targets[0]}|A) rises a little, but "
            f"p({targets[1]}|B) falls a little. One parameter serves both prompts; a gradient step "
            "promises a better total, not a better score on every example.")),
        p(pick(lang,
            "这就是 Q/K/V 不需要人工标注“谁该注意谁”的原因：下一词目标通过词表损失、输出表示和加权计算，把反馈一路传回投影矩阵。",
            "This is why nobody labels “who should attend to whom”: the next-token objective sends "
            "feedback through the vocabulary loss, the output vectors and the weighted sums all the "
            "way back to the projection matrices.")),
    ]  # fmt: skip


def _linear(a: float, c: float) -> str:
    parts = [f"{tex(a)}q"] if abs(a) > 1e-12 else []
    if abs(c) > 1e-12 or not parts:
        parts.append(("+" if parts and c >= 0 else "") + tex(c))
    return "".join(parts)


def cost(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 17: B·n_head·T² score elements."""
    cfg = example.COST_CHECK
    first = n.cost[0].tokens
    rows = [
        (
            f"T={r.tokens}",
            f"{cfg.batch} × {cfg.heads} × {r.tokens}² = {r.elements:,}",
            f"{r.ratio:,.0f}×",
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
        note(pick(lang,
            "如果分数正确、未来位置却还有正权重：先查掩码是不是在 Softmax 之前，再查 Softmax 是不是沿 dim=-1。",
            "If the scores are right but a future position still has positive weight, check first that "
            "the mask comes before the softmax, then that the softmax runs over dim=-1.")),
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
