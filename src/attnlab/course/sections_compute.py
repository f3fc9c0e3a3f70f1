"""Sections 4-9 of the web lesson: from Q/K/V to weights and outputs, and reading the axes.

Every number is taken from :mod:`attnlab.lesson.numbers` (most through
:class:`attnlab.course.numbers.LessonNumbers`); the prose is ours.
"""

from __future__ import annotations

from attnlab import example
from attnlab.course.blocks import Block, figure, flow, math, note, p, pre, table
from attnlab.course.numbers import LessonNumbers
from attnlab.i18n import pick
from attnlab.lesson import numbers
from attnlab.show.fmt import compact_shape, num, tex, tex_matrix, vec


def projections(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 4: X W gives Q, K, V; Q Kᵀ gives the raw scores."""
    st, last, a0, b0 = n.stages, tok[0][-1], tok[0][0], tok[1][0]
    w_q, w_k, w_v = example.lesson_w_q(), example.lesson_w_k(), example.lesson_w_v()
    q, k, v = st.q[0, -1], st.k[0, -1], st.v[0, -1]
    s = st.raw_scores
    blocks = [
        p(
            pick(
                lang,
                "下面的矩阵是为手算专门设计的；真实模型从随机数出发，训练后得到稠密的小数。注意 W 是所有位置共用的"
                "一套参数，不是给每个 Token 单独写的规则。",
                "The matrices below were designed for hand arithmetic; a real model starts from random "
                "numbers and ends with dense decimals after training. W is one set of parameters shared by "
                "every position, not a rule written per token.",
            )
        ),
        math(rf"W_Q={tex_matrix(w_q)},\quad W_K={tex_matrix(w_k)},\quad W_V={tex_matrix(w_v)}"),
        p(
            pick(
                lang,
                f"“{last}”的输入是独热向量，乘任何 W 都只会取出对应的那一行：q={vec(q, item=tex)}，k={vec(k, item=tex)}，v={vec(v, item=tex)}。",
                f"The input of “{last}” is one-hot, so multiplying it by any W just picks one row: "
                f"q={vec(q, item=tex)}, k={vec(k, item=tex)}, v={vec(v, item=tex)}.",
            )
        ),
    ]
    for b, name in enumerate(example.prompt_names(2)):
        blocks.append(
            math(
                rf"Q_{name}={tex_matrix(st.q[b])},\quad K_{name}={tex_matrix(st.k[b])},\quad "
                rf"V_{name}={tex_matrix(st.v[b])}"
            )
        )
    lines = []
    for b, name in enumerate(example.prompt_names(2)):
        qf = st.q[b, -1].tolist()
        for j in range(st.k.size(1)):
            kj = st.k[b, j].tolist()
            terms = " + ".join(
                f"{num(a, 0 if a == int(a) else 3)}×{num(c)}" for a, c in zip(qf, kj, strict=True)
            )
            lines.append(f"{name}: q({tok[b][-1]}) · k({tok[b][j]}) = {terms} = {num(s[b, -1, j])}")
    blocks += [
        p(
            pick(
                lang,
                f"最后的“{last}”的 Query 和每个可见位置的 Key 做点积。A 里它和“{a0}”得 {num(s[0, -1, 0])}，"
                f"B 里它和“{b0}”只得 {num(s[1, -1, 0])}；和自己的 Key 在两边都是 {num(s[0, -1, 1])}。",
                f"The final “{last}” takes the dot product of its query with every visible key. In A it "
                f"scores {num(s[0, -1, 0])} against “{a0}”; in B only {num(s[1, -1, 0])} against “{b0}”; "
                f"against its own key it scores {num(s[0, -1, 1])} in both.",
            )
        ),
        pre("\n".join(lines)),
        math(rf"S_A=Q_AK_A^\top={tex_matrix(s[0])},\qquad S_B=Q_BK_B^\top={tex_matrix(s[1])}"),
        note(
            pick(
                lang,
                "上三角（t=0 行第 j=1 列）也算出来了，但它是未来位置，稍后会被掩码删掉。",
                "The upper triangle (row t=0, column j=1) is computed too, but it is a future position "
                "and the mask will remove it shortly.",
            )
        ),
    ]
    return blocks  # fmt: skip


def softmax_rows(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 5: scale the final rows, exponentiate, normalise."""
    st, f, d = n.stages, n.final, n.sizes["d"]
    text = []
    for b, name in enumerate(example.prompt_names(2)):
        text += [
            pick(lang, f"提示 {name}，最后一行", f"Prompt {name}, final query row"),
            f"  scaled scores = {vec(f['scaled'][b])}",
            # Four decimals: adding three-decimal exps would not give the three-decimal sum.
            f"  exp           = {vec(f['exps'][b], 4)}",
            f"  sum           = {num(f['sums'][b], 4)}",
            f"  weights       = {vec(f['weights'][b])}",
            "",
        ]
    raw = [vec(st.raw_scores[b, -1]) for b in range(2)]
    return [
        p(pick(lang,
            f"先把最后一行除以 √d_k（d_k={d}）：A 的 {raw[0]} 变成 {vec(f['scaled'][0])}，B 的 {raw[1]} 变成 "
            f"{vec(f['scaled'][1])}。最后位置两列都看得见，这一行没有要屏蔽的未来。",
            f"First divide the final row by √d_k (d_k={d}): A's {raw[0]} becomes {vec(f['scaled'][0])}, "
            f"B's {raw[1]} becomes {vec(f['scaled'][1])}. The final position may see both columns, so "
            "nothing in this row is masked.")),
        math(r"\alpha_{t,j}=\frac{\exp(\hat{s}_{t,j})}{\sum_{r}\exp(\hat{s}_{t,r})}"),
        pre("\n".join(text).rstrip()),
        figure("weights", lang, pick(lang, "两条提示的注意力权重（行：Query 位置，列：Key 位置）",
                    "Attention weights of both prompts (rows: query position, columns: key position)")),
        table(
            ["Softmax", pick(lang, "谁在竞争", "What competes"), pick(lang, "回答的问题", "Question it answers")],
            [(pick(lang, "注意力 Softmax", "Attention softmax"), pick(lang, f"T={st.x.size(1)} 个 Key 位置", f"T={st.x.size(1)} key positions"),
              pick(lang, "当前 Query 读哪些位置？", "Which positions should this query read?")),
             (pick(lang, "词表 Softmax", "Vocabulary softmax"), pick(lang, f"V={n.sizes['V']} 个词", f"V={n.sizes['V']} vocabulary tokens"),
              pick(lang, "下一个词是哪一个？", "Which token comes next?"))],
            pick(lang, "同一个函数，不同的轴、不同的意义：注意力权重不是下一词概率。",
                 "Same function, different axis, different meaning: an attention weight is not a "
                 "next-token probability."), key="two-softmax"),
        math(rf"P=\operatorname{{softmax}}(\widehat{{S}},\ \mathrm{{dim}}=-1),\qquad \widehat{{S}},P:{compact_shape(st.weights.shape)}"),
    ]  # fmt: skip


def weighted_values(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 6: the weights mix the values."""
    st = n.stages
    text = []
    for b, name in enumerate(example.prompt_names(2)):
        w, v, o = st.weights[b, -1], st.v[b], st.output[b, -1]
        mix = " + ".join(f"{num(w[j])}·{vec(v[j], 0)}" for j in range(v.size(0)))
        text += [f"{name} ({tok[b][-1]}):  o = {mix}", f"{' ' * len(name)}     = {vec(o)}", ""]
    return [
        math(r"o_t=\sum_{j}\alpha_{t,j}\,v_j"),
        pre("\n".join(text).rstrip()),
        p(pick(lang,
            "两条提示最后一个词相同，Head 输出却已经不同。差别有两个来源：Key 不同让权重不同；"
            f"“{tok[0][0]}”和“{tok[1][0]}”的 Value 本身也不同。",
            "Both prompts end in the same token, yet their head outputs already differ, for two "
            f"reasons: different keys give different weights, and the values of “{tok[0][0]}” and "
            f"“{tok[1][0]}” differ themselves.")),
        math(rf"P:{compact_shape(st.weights.shape)}\ @\ V:{compact_shape(st.v.shape)}\longrightarrow O:{compact_shape(st.output.shape)}"),
    ]  # fmt: skip


def full_chain(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 7: the whole chain, and how training shapes it."""
    return [
        math(r"\operatorname{Attention}(Q,K,V)=\operatorname{softmax}\!\left(\operatorname{mask}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)\right)V"),
        flow([
            pick(lang, "X @ W_Q / W_K / W_V → Q、K、V", "X @ W_Q / W_K / W_V → Q, K, V"),
            pick(lang, "Q @ Kᵀ → 原始分数 S", "Q @ Kᵀ → raw scores S"),
            pick(lang, "S / √d_k → 缩放分数", "S / √d_k → scaled scores"),
            pick(lang, "未来列 → −∞ → 掩码后的分数", "future columns → −∞ → masked scores"),
            pick(lang, "逐行 Softmax → 权重 P", "row softmax → weights P"),
            pick(lang, "P @ V → Head 输出 O", "P @ V → head output O"),
        ]),
        figure("chain_a", lang, pick(lang, "提示 A 的整条计算链，每一格都来自同一条代码路径",
                    "The whole chain for prompt A; every cell comes from the one code path")),
        p(pick(lang,
            "训练时，O 继续往后影响表示、Logits 和交叉熵损失；梯度再沿原路返回，更新 W_Q、W_K、W_V。"
            "模型并不是先知道正确的注意力表，而是在降低预测损失的过程中学会怎样打分、带回什么。",
            "In training, O goes on to shape the later representation, the logits and the "
            "cross-entropy loss; gradients flow back the same way and update W_Q, W_K and W_V. The "
            "model is never handed the right attention table: it learns how to score and what to "
            "carry while lowering the prediction loss.")),
        table(
            [pick(lang, "从 O = PV 回传", "Back from O = PV"), pick(lang, "经过", "Through"), pick(lang, "最终影响", "Reaches")],
            [(pick(lang, "内容这条路", "The content path"), "O → V", pick(lang, "W_V 和输入 X", "W_V and the input X")),
             (pick(lang, "读取比例这条路", "The reading-ratio path"), "O → P → softmax → S → Q, K",
              pick(lang, "W_Q、W_K 和输入 X", "W_Q, W_K and the input X"))],
            pick(lang, "两条路在 X 处汇合，梯度相加。", "The two paths meet at X, where their gradients add."),
            key="grad-paths"),
    ]  # fmt: skip


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
        math(rf"\widetilde{{S}}=S/\sqrt{{d_k}},\qquad S,\widetilde{{S}}:{compact_shape(st.raw_scores.shape)}"),
    ]  # fmt: skip


def axes(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 9: every axis of every shape, and the extra shape check."""
    st = n.stages
    axes_rows = [
        (
            "X",
            compact_shape(st.x.shape),
            pick(lang, "批、Token 位置、模型特征", "batch, token position, model feature"),
        ),
        (
            "Q / K / V",
            compact_shape(st.q.shape),
            pick(lang, "批、Token 位置、Head 特征", "batch, token position, head feature"),
        ),
        (
            "Scores / Weights",
            compact_shape(st.weights.shape),
            pick(
                lang, "批、Query 位置、Key/Value 位置", "batch, query position, key/value position"
            ),
        ),
        (
            "Head output",
            compact_shape(st.output.shape),
            pick(lang, "批、Query 位置、Head 特征", "batch, query position, head feature"),
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
        table(["Tensor", "Shape", pick(lang, "各轴含义", "Meaning of each axis")], axes_rows,
              pick(lang, "形状的数字相同，不代表轴的含义相同。", "Equal sizes do not mean equal meanings."), key="axes"),
        math(r"Q:[B,T,d_k]\ @\ K^\top:[B,d_k,T]\rightarrow S:[B,T,T],\qquad P:[B,T,T]\ @\ V:[B,T,d_v]\rightarrow O:[B,T,d_v]"),
        p(pick(lang,
            "每张 [T,T] 表里，行 t 是发起读取的 Query 位置，列 j 是被比较的 Key 位置（也是随后取 Value 的位置）。"
            "两个轴都是位置轴，不是特征轴。",
            "In every [T,T] table, row t is the query position doing the reading and column j the key "
            "position being compared (and later the value position read). Both are position axes, "
            "not feature axes.")),
        table([pick(lang, "下标", "Index"), pick(lang, "值", "Value"), pick(lang, "含义", "Meaning")], index_rows, key="index"),
        table([pick(lang, "阶段", "Stage"), "Shape", pick(lang, "轴", "Axes")], extra,
              pick(lang, f"另取 B={cfg['batch']}, T={cfg['tokens']}, C={cfg['embed']}, n_head={cfg['heads']} 的形状检查（实测）",
                   f"Extra shape check with B={cfg['batch']}, T={cfg['tokens']}, C={cfg['embed']}, n_head={cfg['heads']} (measured)"),
              key="shape-check"),
        note(pick(lang,
            "这组尺寸各不相同，把 Head 轴误当成时间轴会立刻暴露。",
            "With every size different, mistaking the head axis for the time axis shows up at once.")),
    ]  # fmt: skip
