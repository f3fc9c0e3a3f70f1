"""Sections 0-3 of the web lesson: what attention must read, and the three roles Q, K, V.

Every number is taken from :class:`attnlab.content.numbers.LessonNumbers`; the prose is ours.
"""

from __future__ import annotations

from attnlab.content.blocks import Block, flow, math, note, p, table
from attnlab.content.intro import MINIGPT_WEEKS, WEEK_AFTER, WEEK_BEFORE
from attnlab.content.numbers import LessonNumbers
from attnlab.core import example
from attnlab.text.fmt import compact_shape, named_shape, tex_matrix, vec
from attnlab.text.i18n import pick


def core_goal(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 0: the same last token, two prefixes."""
    st, z = n.stages, n.sizes
    last, a0, b0 = tok[0][-1], tok[0][0], tok[1][0]
    rows = [
        (f"b={b}, t={t}", f"x[{b},{t},:]", tok[b][t], _slot_meaning(lang, name, t))
        for b, name in enumerate(example.prompt_names(z["B"]))
        for t in range(z["T"])
    ]
    vocab_shape = named_shape("B,T,V_vocab", (z["B"], z["T"], z["V"]))
    heads_shape = named_shape("B,n_head,T,T", (z["B"], z["C"] // z["d"], z["T"], z["T"]))
    return [
        p(pick(lang,
            f"两个提示 A=[{a0},{last}] 和 B=[{b0},{last}] 的最后一个词一模一样。上周的 Bigram 只拿当前词"
            f"去查表，所以两个“{last}”得到同一行分数。本周要给最后的“{last}”一条新路：按需回头读左边，"
            "让不同的前缀产生不同的表示。",
            f"Prompts A=[{a0}, {last}] and B=[{b0}, {last}] end in the very same token. Last week's "
            f"bigram looked up a row by the current token alone, so both “{last}” positions got the "
            f"same scores. This week the final “{last}” gets a new path: it may look back at the "
            "tokens on its left, so different prefixes can give different representations.")),
        p(pick(lang,
            f"为了每一步都能手算，本周用一个小而固定的输入 X，形状 {compact_shape(st.x.shape)} = [B,T,C]："
            "批里两条提示，每条两个位置，每个位置一个四维向量。",
            f"So that every step can be done by hand, the week uses a small fixed input X of shape "
            f"{compact_shape(st.x.shape)} = [B,T,C]: two prompts in the batch, two positions each, one "
            "four-number vector per position.")),
        note(_course_context(lang, a0, b0, last)),
        table(
            [pick(lang, "批 / 位置", "Batch / position"), pick(lang, "张量位置", "Tensor slot"),
             "Token", pick(lang, "含义", "Meaning")],
            rows, pick(lang, "X 的四个格子", "The four slots of X"), key="slots"),
        flow([
            pick(lang, f"输入 X {named_shape('B,T,C', st.x.shape)}", f"Input X {named_shape('B,T,C', st.x.shape)}"),
            pick(lang, f"每个 Head 投影出 Q / K / V {named_shape('B,T,d_head', st.q.shape)}",
                 f"Each head projects Q / K / V {named_shape('B,T,d_head', st.q.shape)}"),
            pick(lang, f"QKᵀ 得到原始分数 {named_shape('B,T,T', st.raw_scores.shape)}",
                 f"QKᵀ gives raw scores {named_shape('B,T,T', st.raw_scores.shape)}"),
            pick(lang, "除以 √d_k，再加因果掩码", "Divide by √d_k, apply the causal mask"),
            pick(lang, f"沿 Key 位置轴 Softmax 得权重 {named_shape('B,T,T', st.weights.shape)}；多个 Head 一起时是 {heads_shape}",
                 f"Softmax along the key-position axis: weights {named_shape('B,T,T', st.weights.shape)}; with several heads together, {heads_shape}"),
            pick(lang, f"权重 @ V 得 Head 输出 {named_shape('B,T,d_head', st.output.shape)}",
                 f"Weights @ V: head output {named_shape('B,T,d_head', st.output.shape)}"),
            pick(lang, f"多个 Head 拼接再乘 W_O，回到 {named_shape('B,T,C', st.x.shape)}",
                 f"Heads concatenated, times W_O: back to {named_shape('B,T,C', st.x.shape)}"),
            pick(lang, f"之后的网络和 LM Head 给出 Logits {vocab_shape}",
                 f"Later layers and the LM head give logits {vocab_shape}"),
        ]),
        p(pick(lang,
            "同一个 [2,2,2] 可以是 Q（[B,T,d_head]），也可以是权重（[B,T,T]）：数字一样，轴的含义不同。"
            "所以本课总把形状写成轴名，再写本例的大小。",
            "The same [2,2,2] may be Q ([B,T,d_head]) or the weights ([B,T,T]): equal numbers, "
            "different axes. So the lesson writes each shape by its axis names first, then its sizes "
            "in this example.")),
        math(r"\operatorname{context}_t=\sum_{j\le t}\alpha_{t,j}\,v_j"),
        p(pick(lang,
            "读公式：位置 t 的上下文，是它能看到的每个位置 j（j ≤ t）的 Value 按权重 α 加起来。本课剩下的部分，"
            "就是弄清 α 从哪里来。",
            "Read it as: the context at position t adds up the value of every position j it may see "
            "(j ≤ t), each scaled by a weight α. The rest of the lesson is about where α comes from.")),
    ]  # fmt: skip


def _course_context(lang: str, a0: str, b0: str, last: str) -> str:
    """Where this week's X comes from, and what the weeks before and after use instead."""
    first, end = MINIGPT_WEEKS
    return pick(lang,
        f"词语“{a0}、{b0}、{last}”和 [B,T,C] 的含义照旧，但这里的 X 和投影矩阵是本周特意选的简单浮点数，"
        f"为了让每一项都能手算；它不是把 Week {WEEK_BEFORE} 训练到某一步的 Embedding 原样搬过来。"
        f"Week {WEEK_AFTER} 会另给一组 Token+位置 的演示值；Week {first}–{end} 才用同一套可学习的 MiniGPT。",
        f"The words “{a0}, {b0}, {last}” and the meaning of [B,T,C] carry over, but this X and these "
        "projections are simple floats picked for the week so every entry can be computed by hand; "
        f"they are not Week {WEEK_BEFORE}'s embeddings taken from some training step. Week "
        f"{WEEK_AFTER} brings its own token+position demo values; Weeks {first}–{end} use one "
        "trainable MiniGPT throughout.")  # fmt: skip


def _slot_meaning(lang: str, name: str, t: int) -> str:
    return pick(lang, f"提示 {name} 的第 {t + 1} 个 Token", f"token {t + 1} of prompt {name}")


def uniform_mean(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 1: vectors in, and the plainest summary of a prefix."""
    st = n.stages
    x_a, x_b = tex_matrix(st.x[0], 0), tex_matrix(st.x[1], 0)
    mean_a, mean_b = n.uniform[0, -1], n.uniform[1, -1]
    ratio = vec(n.uniform_weights[0, -1], 1)
    wa, wb = vec(st.weights[0, -1]), vec(st.weights[1, -1])
    return [
        p(pick(lang,
            "Token 编号只是查表用的整数，Attention 从不直接读它。进入 Attention 的是向量：Embedding，"
            "或上一层的输出。本课的向量故意选成独热形式，让每次矩阵乘法都一眼能算。",
            "A token ID is only an integer for a table lookup; attention never reads it directly. "
            "What enters attention is a vector: an embedding, or the previous layer's output. The "
            "lesson's vectors are deliberately one-hot so every product can be done at a glance.")),
        math(rf"X_A={x_a},\qquad X_B={x_b}"),
        math(rf"X\in\mathbb{{R}}^{{[B,T,C]}}=\mathbb{{R}}^{{{compact_shape(st.x.shape)}}}"),
        p(pick(lang,
            f"最简单的基线：每个位置把自己能看到的前缀等分平均。最后位置 t=1 的读取比例固定为 {ratio}。",
            f"The simplest baseline: each position averages the prefix it may see, in equal shares. "
            f"At the final position t=1 the reading ratio is fixed at {ratio}.")),
        math(rf"\bar{{x}}_{{A,1}}={tex_matrix(mean_a, 1)},\qquad \bar{{x}}_{{B,1}}={tex_matrix(mean_b, 1)}"),
        table(
            [pick(lang, "机制", "Mechanism"), pick(lang, "最后位置读 j=0 / j=1", "Final position reads j=0 / j=1"),
             pick(lang, "能否随 Query 改变", "Changes with the query?")],
            [(pick(lang, "因果均匀平均", "Causal uniform mean"), ratio, pick(lang, "不能，比例固定", "No, fixed ratio")),
             (pick(lang, "提示 A 的教学 Head", "Lesson head, prompt A"), wa, pick(lang, "可以", "Yes")),
             (pick(lang, "提示 B 的教学 Head", "Lesson head, prompt B"), wb, pick(lang, "可以", "Yes"))],
            pick(lang, "平均也能汇总；Attention 多出来的是“按 Query 决定读多少”。",
                 "An average summarises too; attention adds “the query decides how much”."),
            key="uniform"),
    ]  # fmt: skip


def query_key_value(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 2: the three questions attention answers."""
    st, last, a0, b0 = n.stages, tok[0][-1], tok[0][0], tok[1][0]
    w = compact_shape((st.x.size(-1), st.q.size(-1)))
    return [
        table(
            [pick(lang, "Attention 要回答的问题", "Question attention answers"), pick(lang, "名字", "Name"),
             pick(lang, "在最后的“" + last + "”上", "At the final “" + last + "”")],
            [(pick(lang, "当前位置在找什么？", "What is this position looking for?"), "Query (Q)",
              pick(lang, f"“{last}”发出读取请求", f"“{last}” issues the reading request")),
             (pick(lang, "每个位置凭什么被找到？", "How can each position be found?"), "Key (K)",
              pick(lang, f"“{a0}”或“{b0}”提供可匹配的线索", f"“{a0}” or “{b0}” offers a clue to match")),
             (pick(lang, "找到以后带回什么？", "What is carried back once found?"), "Value (V)",
              pick(lang, "被读位置的内容进入新表示", "The content of the position read enters the new vector"))],
            key="roles"),
        p(pick(lang,
            "类比检索系统：Query 是搜索词，Key 是索引卡片上的标签，Value 是卡片背后的正文。类比只说明分工——"
            "模型里没有字符串匹配，也没有人规定“第几维代表主语”。",
            "Think of a search system: the query is the search request, a key is the label on an index "
            "card, a value is the text behind the card. The analogy explains the division of labour "
            "only; there is no string matching, and nobody decides that some dimension means “subject”.")),
        math(r"Q=XW_Q,\qquad K=XW_K,\qquad V=XW_V"),
        math(rf"X:{compact_shape(st.x.shape)},\quad W_Q,W_K,W_V:{w}\;\Longrightarrow\;Q,K,V:{compact_shape(st.q.shape)}"),
    ]  # fmt: skip


def three_roles(n: LessonNumbers, lang: str, tok: list[list[str]]) -> list[Block]:
    """Section 3: why one vector becomes three."""
    C, d = n.sizes["C"], n.sizes["d"]
    return [
        p(pick(lang,
            "同一个位置要扮演三个角色：用 Key 告诉别人“怎样找到我”，用 Value 准备“找到我后给你什么”，"
            "轮到自己读取时再用 Query 说“我现在需要什么”。三者都从同一个 x_t 出发，只是乘了不同的矩阵。",
            "One position plays three parts: with its key it advertises “how to find me”, with its "
            "value it prepares “what you get once you find me”, and when its own turn to read comes, "
            "its query says “what I need now”. All three start from the same x_t, multiplied by "
            "different matrices.")),
        math(rf"W_Q,W_K,W_V\in\mathbb{{R}}^{{{C}\times{d}}},\qquad q_t,k_t,v_t\in\mathbb{{R}}^{{{d}}}"),
        math(rf"x_t\in\mathbb{{R}}^{{1\times{C}}},\qquad x_tW\in\mathbb{{R}}^{{1\times{d}}}"),
    ]  # fmt: skip
