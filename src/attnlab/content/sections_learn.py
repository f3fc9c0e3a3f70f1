"""Sections 14-16 of the web lesson: self-attention, many heads, and how the output reaches the
loss.

Every number is taken from :mod:`attnlab.lesson.numbers` (most through
:class:`attnlab.content.numbers.LessonNumbers`); the prose is ours.
"""

from __future__ import annotations

from attnlab.content.blocks import (
    Block,
    code,
    flow,
    listing,
    listing_output,
    math,
    note,
    p,
    pre,
    table,
)
from attnlab.content.intro import CHAIN_SECTION, GRAD_COMMAND
from attnlab.content.numbers import LessonNumbers
from attnlab.core import example
from attnlab.lesson import numbers
from attnlab.lesson.experiment import ExperimentResult
from attnlab.text.fmt import compact_shape, named_shape, num, tex, tex_matrix, vec
from attnlab.text.i18n import pick

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
        math(r"Q=XW_Q,\qquad K=XW_K,\qquad V=XW_V"),
        math(rf"X:{compact_shape(st.x.shape)}\ @\ W_Q:{compact_shape(example.lesson_w_q().shape)}\rightarrow Q:{compact_shape(st.q.shape)}"),
        p(pick(lang,
            "一次矩阵乘法处理整批：同一个 W_Q 乘到每条提示的每个位置上，批轴原样保留。管线算出的两条提示的 Q：",
            "One matrix product serves the whole batch: the same W_Q multiplies every position of every "
            "prompt, and the batch axis passes through untouched. The two prompts' Q from the pipeline:")),
        math(rf"Q_A=X_AW_Q={tex_matrix(st.q[0])},\qquad Q_B=X_BW_Q={tex_matrix(st.q[1])}"),
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
        code("attnlab.core.modules:CausalSelfAttention.stages", pick(lang, "生产形式：一次 QKV 投影，Head 作为张量轴", "Production form: one QKV projection, heads as a tensor axis")),
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
    targets = [words[int(i)] for i in example.lesson_targets()]
    wv = "W_V[{},{}]".format(*example.VALUE_GRAD_PARAM)
    rows = [
        (
            f"{' '.join(tok[b])}",
            vec(r.before.logits[b], P6, tex),
            f"p({targets[b]}) ≈ {num(r.before.target_probs[b], P6)}; L ≈ {num(r.before.losses[b], P6)}",
        )
        for b in range(z["B"])
    ]
    return [
        flow(["X [B,T,C]", "Multi-Head Attention [B,T,C]", pick(lang, "残差 / FFN / 更多层 [B,T,C]", "Residual / FFN / more layers [B,T,C]"),
              "LM head W_vocab:[C,V_vocab]", "Logits [B,T,V_vocab]", pick(lang, "需要概率时，沿词表轴做 Softmax", "Softmax along the vocabulary axis when probabilities are needed")]),
        p(pick(lang, f"本课的例子里 B={z['B']}，T={z['T']}，C={z['C']}，V_vocab={z['V']}：X 是 {named_shape('B,T,C', (z['B'], z['T'], z['C']))}，Logits 是 {named_shape('B,T,V_vocab', (z['B'], z['T'], z['V']))}。",
                   f"In the lesson's example B={z['B']}, T={z['T']}, C={z['C']} and V_vocab={z['V']}: X is {named_shape('B,T,C', (z['B'], z['T'], z['C']))} and the logits are {named_shape('B,T,V_vocab', (z['B'], z['T'], z['V']))}.")),
        math(r"H:[B,T,C]\ @\ W_{\mathrm{vocab}}:[C,V_{\mathrm{vocab}}]\rightarrow\mathrm{Logits}:[B,T,V_{\mathrm{vocab}}]"),
        p(pick(lang,
            "Attention 不直接输出哪个词。它产生上下文特征；两条提示的特征不同，LM Head 才能给出不同的 Logits。",
            "Attention does not output a token. It produces context features; because the two prompts' "
            "features differ, the LM head can give them different logits.")),
        _typical_shapes(n, lang),
        p(pick(lang,
            f"一个最小实验：在单头输出 h 后面接一个固定的评分矩阵 W_vocab（{compact_shape(example.lesson_w_vocab().shape)}），"
            f"目标仍是 A→{targets[0]}、B→{targets[1]}。A 的 h={vec(r.before.h[0], P6)}，B 的 h={vec(r.before.h[1], P6)}。",
            f"A minimal experiment: after the single head's output h, a fixed scoring matrix W_vocab "
            f"({compact_shape(example.lesson_w_vocab().shape)}) with targets A→{targets[0]} and B→{targets[1]}. "
            f"A has h={vec(r.before.h[0], P6)}, B has h={vec(r.before.h[1], P6)}.")),
        p(pick(lang,
            f"h 只有 {r.before.h.shape[-1]} 维：这是接在单头后面的小型评分实验，W_vocab 不是上一周那个 4 维输出层的同一组权重。"
            "logits = h @ W_vocab，偏置为 0。",
            f"h has only {r.before.h.shape[-1]} dimensions: this is a small scoring experiment after the "
            "single head, and W_vocab is not the same weights as last week's 4-dimensional output "
            "layer. logits = h @ W_vocab, with a bias of 0.")),
        math(rf"W_{{\mathrm{{vocab}}}}={tex_matrix(example.lesson_w_vocab(), 0)}"),
        table([pick(lang, "上下文", "Context"), "Logits", pick(lang, "目标概率 / 单题损失", "Target probability / loss")], rows,
              pick(lang, f"平均损失 ≈ {num(r.before.loss_mean, P6)}", f"Mean loss ≈ {num(r.before.loss_mean, P6)}"), key="logits"),
        *_gradient_step(r, lang, targets),
        code("attnlab.lesson.experiment:forward", pick(lang, "实验的前向计算（注意力仍走同一条路径）", "The experiment's forward pass (attention still takes the one path)")),
        pre(GRAD_COMMAND),
        p(pick(lang,
            f"运行上面这条命令（或 attnlab grad），看自动求导给出的梯度、与中心差分和闭式的对照，以及更新前后的概率；"
            f"第 {CHAIN_SECTION} 节内容路径上的 {wv} 梯度也在其中。",
            f"Run the command above (or attnlab grad) to see autograd's gradient beside the central "
            f"difference and the closed form, and the probabilities before and after the update; the "
            f"gradient of {wv} on section {CHAIN_SECTION}'s content path is there too.")),
    ]  # fmt: skip


def _typical_shapes(n: LessonNumbers, lang: str) -> Block:
    """The shapes a full model passes on, in symbols and at the lesson's sizes."""
    z = n.sizes
    heads = z["C"] // z["d"]
    rows = [
        (
            pick(lang, "注意力权重", "Attention weights"),
            "[B,n_head,T,T]",
            compact_shape((z["B"], heads, z["T"], z["T"])),
            pick(
                lang,
                "每个 Query 读哪些 Key/Value 位置",
                "which key/value positions each query reads",
            ),
        ),
        (
            pick(lang, "上下文特征 H", "Context features H"),
            "[B,T,C]",
            compact_shape((z["B"], z["T"], z["C"])),
            pick(
                lang,
                "每个位置经过上下文处理后的表示",
                "each position's vector after reading its context",
            ),
        ),
        (
            pick(lang, "词表 Logits", "Vocabulary logits"),
            "[B,T,V_vocab]",
            compact_shape((z["B"], z["T"], z["V"])),
            pick(lang, "每个候选词的原始分数", "the raw score of every candidate token"),
        ),
        (
            pick(lang, "词表概率", "Vocabulary probabilities"),
            "[B,T,V_vocab]",
            compact_shape((z["B"], z["T"], z["V"])),
            pick(
                lang,
                "Logits 沿词表轴 Softmax 后的分布",
                "logits after a softmax along the vocabulary axis",
            ),
        ),
    ]
    return table([pick(lang, "对象", "Tensor"), pick(lang, "典型形状", "Typical shape"),
                  pick(lang, f"本课（n_head={heads}）", f"This lesson (n_head={heads})"), pick(lang, "意义", "Meaning")],
                 rows, key="typical-shapes")  # fmt: skip


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
            "一步梯度下降只在学习率足够小时才保证平均损失局部下降，而且只看平均，不保证每一题都变好。",
            f"Look honestly: the mean loss falls and p({targets[0]}|A) rises a little, but "
            f"p({targets[1]}|B) falls a little. One parameter serves both prompts; a gradient step "
            "lowers the mean loss only locally, for a small enough learning rate, and only on "
            "average, not on every example.")),
        p(pick(lang,
            "这些数是一个固定公式的计算参考，不是训练日志。这里只更新 q 一个元素，是为了把它的影响单独看清；"
            "真正的训练会在每一步同时更新所有参与计算的参数。",
            "These numbers are a worked reference for one fixed formula, not a training log. Only "
            "the one entry q is updated here, to see its effect alone; real training updates all "
            "the parameters taking part, at once, at every step.")),
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
