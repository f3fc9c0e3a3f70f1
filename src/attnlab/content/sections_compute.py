"""Sections 4-7 of the web lesson: from Q/K/V to weights and outputs, and the whole chain.

Every number is taken from :mod:`attnlab.lesson.numbers` (most through
:class:`attnlab.content.numbers.LessonNumbers`); the prose is ours.
"""

from __future__ import annotations

import torch

from attnlab.content.blocks import Block, figure, flow, math, note, p, pre, table
from attnlab.content.intro import EXPERIMENT_SECTION
from attnlab.content.numbers import LessonNumbers
from attnlab.core import example
from attnlab.lesson import numbers
from attnlab.text.fmt import compact_shape, num, tex, tex_matrix, vec
from attnlab.text.i18n import pick


def projections(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 4: X W gives Q, K, V; Q Kᵀ gives the raw scores."""
    st, last, a0, b0 = n.stages, tok[0][-1], tok[0][0], tok[1][0]
    w_q, w_k, w_v = example.lesson_w_q(), example.lesson_w_k(), example.lesson_w_v()
    q, k, v = st.q[0, -1], st.k[0, -1], st.v[0, -1]
    x = st.x[0, -1]  # [C], one-hot
    row = int(x.argmax())
    design = example.W_K_DESIGN[row]
    k_root = "[" + ", ".join(f"{num(d, 1)}√2" for d in design) + "]"
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
        math(
            rf"W_Q={tex_matrix(w_q)},\quad W_K=\sqrt{{2}}\,{tex_matrix(torch.tensor(example.W_K_DESIGN), 1)}={tex_matrix(w_k)},\quad W_V={tex_matrix(w_v)}"
        ),
        p(
            pick(
                lang,
                f"“{last}”的输入是独热向量 x={vec(x, 0, item=tex)}，只有下标为 {row} 的分量是 1，所以乘任何 W 都只取出 W 下标为 {row} 的那一行"
                f"（下标从 0 数起）：q={vec(q, item=tex)}，k={k_root}={vec(k, item=tex)}，v={vec(v, item=tex)}。",
                f"The input of “{last}” is the one-hot x={vec(x, 0, item=tex)}: only index {row} holds a 1, so "
                f"multiplying it by any W picks row {row} of W (indices count from 0): q={vec(q, item=tex)}, "
                f"k={k_root}={vec(k, item=tex)}, v={vec(v, item=tex)}.",
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
        note(_rounding_note(f, lang)),
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
        math(rf"P=\operatorname{{softmax}}(\widehat{{S}},\ \mathrm{{dim}}=-1),\qquad \widehat{{S}},P:[B,T,T]={compact_shape(st.weights.shape)}"),
    ]  # fmt: skip


def _rounding_note(f: dict[str, torch.Tensor], lang: str) -> str:
    """Why the exps above have four decimals where the course prints three (prompt A's row)."""
    exps, total = f["exps"][0], float(f["sums"][0])
    rounded = [round(float(e), 3) for e in exps]
    added = sum(rounded)
    listed = ", ".join(num(e) for e in rounded)
    return pick(
        lang,
        f"上面的 exp 保留 4 位小数。课程页把每个 exp 先舍入到 3 位（{listed}），再把舍入后的数相加，"
        f"所以写 {num(added)}；精确的和是 {num(total, 4)}，保留 3 位是 {num(total)}。"
        f"两种写法的权重都是 {vec(f['weights'][0])}：舍入只影响最后一位，不影响结果。",
        f"The exps above have four decimals. The course page rounds each exp to three ({listed}) and "
        f"adds the rounded numbers, so it writes {num(added)}; the exact sum is {num(total, 4)}, "
        f"{num(total)} at three decimals. Either way the weights are {vec(f['weights'][0])}: the "
        "rounding moves the last digit, not the result.",
    )


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
        math(rf"P:[B,T,T]\ @\ V:[B,T,d_{{head}}]\longrightarrow O:[B,T,d_{{head}}],\qquad {compact_shape(st.weights.shape)}\ @\ {compact_shape(st.v.shape)}\longrightarrow {compact_shape(st.output.shape)}"),
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
        math(r"Q:[B,T,d_k]\ @\ K^\top:[B,d_k,T]\rightarrow S:[B,T,T],\qquad P:[B,T,T]\ @\ V:[B,T,d_v]\rightarrow O:[B,T,d_v]"),
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
            pick(lang, "两条路在 X 处汇合，梯度相加，就像第 4 周里被用了两次的共享变量。",
                 "The two paths meet at X, where their gradients add, as with Week 4's shared "
                 "variables used twice."),
            key="grad-paths"),
        *_two_gradients(n, lang, tok),
    ]  # fmt: skip


def _two_gradients(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """One entry down each path, with section 16's loss: W_V[i,c] and W_Q[1,0], three ways each."""
    (i, c), (qi, qj), P6 = example.VALUE_GRAD_PARAM, n.experiment.param, 6
    reads, dh = numbers.tensor("experiment.wv_reads"), numbers.tensor("experiment.dloss_dh")
    wv, wq = f"W_V[{i},{c}]", f"W_Q[{qi},{qj}]"
    g = {
        k: num(numbers.tensor(f"experiment.{k}"), P6)
        for k in ("grad_wv", "grad_wv_fd", "grad_wv_closed", "grad", "grad_fd", "grad_closed")
    }
    names = example.prompt_names(2)
    terms = " + ".join(f"{num(reads[b], P6)}×({num(dh[b, c], P6)})" for b in range(len(names)))
    work = [
        f"{name}: Σ_j P[{name}][T−1,j]·x[j,{i}] = {num(reads[b], P6)},   ∂L_{name}/∂h_{name}[{c}] = {num(dh[b, c], P6)}"
        for b, name in enumerate(names)
    ]
    work.append(f"∂L/∂{wv} = (1/{len(names)})·[{terms}] = {g['grad_wv_closed']}")
    return [
        p(pick(lang,
            f"用第 {EXPERIMENT_SECTION} 节的损失，沿每条路各追一个参数：内容这条路取 {wv}，读取比例这条路取 {wq}。选 {wv} 的理由："
            f"X 的第 {i} 个特征只属于“{tok[0][0]}”，A 最后的“{tok[0][1]}”以 {num(n.stages.weights[0, -1, 0])} 的权重读它，"
            f"而 W_vocab 的第 {c} 行给 h 的第 {c} 个分量打分，所以损失确实依赖它；B 里没有词带这个特征，只有 A 贡献梯度。",
            f"With section {EXPERIMENT_SECTION}'s loss, follow one entry down each path: {wv} on the content path, {wq} "
            f"on the reading-ratio path. Why {wv}: feature {i} of X belongs to “{tok[0][0]}” alone, A's "
            f"final “{tok[0][1]}” reads it with weight {num(n.stages.weights[0, -1, 0])}, and row {c} of "
            f"W_vocab scores h's component {c}, so the loss does depend on it; no token of B carries "
            "that feature, so only A contributes.")),
        math(r"\frac{\partial L}{\partial W_V[i,c]}=\frac{1}{B}\sum_b\sum_j P_b[T{-}1,j]\,x_b[j,i]\,"
             r"\frac{\partial L_b}{\partial h_b[c]},\qquad \frac{\partial L_b}{\partial h_b}=(p_b-y_b)\,W_{\mathrm{vocab}}^\top"),
        pre("\n".join(work)),
        table([pick(lang, "参数", "Parameter"), pick(lang, "路径", "Path"), pick(lang, "自动求导", "Autograd"),
               pick(lang, "中心差分", "Central difference"), pick(lang, "链式法则闭式", "Closed form (chain rule)")],
              [(wv, "O → V → W_V", g["grad_wv"], g["grad_wv_fd"], g["grad_wv_closed"]),
               (wq, "O → P → S → Q → W_Q", g["grad"], g["grad_fd"], g["grad_closed"])],
              pick(lang, "d(平均损失)/d参数，三种算法一致（6 位小数）", "d(mean loss)/d parameter, three ways that agree (6 decimals)"),
              key="grad-three-ways"),
        note(pick(lang,
            "V 不参与 QKᵀ，所以内容这条路不经过分数和 Softmax 的导数；W_Q 的梯度则必须穿过 Softmax 的雅可比矩阵。",
            "V takes no part in QKᵀ, so the content path skips the derivative of the scores and the "
            "softmax; W_Q's gradient has to pass through the softmax's Jacobian.")),
        p(pick(lang,
            "读这类求导的顺序：先能指出梯度在哪里分叉、每条分支经过什么，再去看完整的矩阵求导公式。",
            "The order to read such derivatives in: first be able to point at where the gradient "
            "branches and what each branch passes through, then look at the full matrix derivative.")),
    ]  # fmt: skip
