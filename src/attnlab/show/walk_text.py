"""Headings and sentences of the two lesson walks, in Chinese and English (our own words).

Placeholders in braces are filled with numbers computed by the pipeline; no number is written here.
"""

from __future__ import annotations

TEXT: dict[str, dict[str, str]] = {
    "zh": {
        "title": "Week 7 · Attention：让当前位置按需读取左侧上下文",
        "question": "两条 Prompt 最后都是“{last}”，Attention 怎样让它们读到不同的左侧信息？",
        "prompts": "Prompt A = {a}，Prompt B = {b}；X 的形状 {shape} = [B, T, C]。",
        "sec1": "§1 基线：因果均匀平均",
        "sec1_body": "最终位置只能把可见前缀平均起来，比例固定为 {ratio}：",
        "sec1_after": "Attention 则按 Query 计算比例：A 的末行权重 {wa}，B 的末行权重 {wb}。",
        "sec4": "§4 投影得到 Q、K、V，再算原始分数",
        "sec4_dot": "末位置“{last}”的 Query {q} 与 Key {k} 的点积 = {s}",
        "sec5": "§5 §8 缩放、指数与每行权重（末位置）",
        "sec5_row": "Prompt {p}：缩放分数 {scaled}，exp {exps}，和 {total}，权重 {w}",
        "sec11": "§11 因果掩码：未来列在 Softmax 前变成 −∞",
        "mask": "掩码 M（1 = 可读，0 = 未来）：",
        "sec6": "§6 用权重加权 Values：Head 输出",
        "sec11_demo": "§11 为什么用 −∞ 而不是 0",
        "demo_body": "t=0 的缩放行 {row}，第二列是未来：",
        "demo_zero": "  错误：未来改成 0   → softmax = {v}",
        "demo_inf": "  正确：未来改成 −∞  → softmax = {v}",
        "sec9": "§9 Shape 与每个轴",
        "sec9_extra": "额外检查 B={batch}, T={tokens}, C={embed}, H={heads}（在 CausalSelfAttention 中实测）：",
        "two_softmax": "§5 §16 两种 Softmax 并排",
        "attn_softmax": "Attention Softmax：沿 {n} 个 Key 位置，每个 Query 行加总为 1",
        "vocab_softmax": "Vocabulary Softmax：沿 {n} 个词表 Token，回答“下一个词是谁”",
        "sec17": "§17 成本：Score 元素 = B·n_head·T²（B={batch}, n_head={heads}）",
        "conclusion": "结论：两条 Prompt 的最后一个 Token 都是“{last}”，但末位置权重不同：",
        "conclusion_end": "Attention Softmax 沿位置轴归一化（读哪里）；Vocabulary Softmax 沿词表轴归一化（下一个词）。",
        "exp_title": "§16 损失怎样改变一次读取：只调 W_Q[{i},{j}]",
        "exp_h": "末位置 Head 输出 h：",
        "exp_logits": "Logits = h · W_vocab：",
        "exp_prob": "Prompt {p}：p({target}) = {prob}，损失 L = {loss}",
        "exp_mean": "两题平均损失 = {loss}",
        "exp_expr": "末行缩放分数对 q = W_Q[{i},{j}] 的表达式：",
        "exp_grad": "d(平均损失)/dW_Q[{i},{j}]：自动求导 {auto}，中心差分 {fd}，闭式 {closed}",
        "exp_update": "学习率 {lr}：q_new = {old} − {lr}×({g}) = {new}",
        "exp_after": "更新后：",
        "exp_row": "Prompt {p}：p({target}) {before} → {after}，损失 {lb} → {la}",
        "exp_mean_after": "平均损失 {before} → {after}",
        "exp_honest": "注意：平均损失下降了，p({target_a}|A) 略升，但 p({target_b}|B) 反而略降。"
        "一次梯度步只保证平均损失在局部下降，不保证每道题都变好。",
    },
    "en": {
        "title": "Week 7 · Attention: let the current position read left context on demand",
        "question": "Both prompts end in “{last}”. How does attention give that last token different context?",
        "prompts": "Prompt A = {a}, prompt B = {b}; X has shape {shape} = [B, T, C].",
        "sec1": "§1 Baseline: causal uniform mean",
        "sec1_body": "The final position can only average its visible prefix, with fixed ratios {ratio}:",
        "sec1_after": "Attention computes the ratios from the query: A's final row {wa}, B's final row {wb}.",
        "sec4": "§4 Project to Q, K, V, then raw scores",
        "sec4_dot": "Final “{last}” query {q} dotted with key {k} = {s}",
        "sec5": "§5 §8 Scale, exponentiate, normalise each row (final position)",
        "sec5_row": "Prompt {p}: scaled {scaled}, exp {exps}, sum {total}, weights {w}",
        "sec11": "§11 Causal mask: future columns become −∞ before the softmax",
        "mask": "Mask M (1 = may read, 0 = future):",
        "sec6": "§6 Weight the values: head output",
        "sec11_demo": "§11 Why −∞ and not 0",
        "demo_body": "Scaled row at t=0 {row}, the second column is the future:",
        "demo_zero": "  wrong: future set to 0    → softmax = {v}",
        "demo_inf": "  right: future set to −∞   → softmax = {v}",
        "sec9": "§9 Shapes and what each axis means",
        "sec9_extra": "Extra check B={batch}, T={tokens}, C={embed}, H={heads} (measured in CausalSelfAttention):",
        "two_softmax": "§5 §16 The two softmaxes side by side",
        "attn_softmax": "Attention softmax: over {n} key positions, each query row sums to 1",
        "vocab_softmax": "Vocabulary softmax: over {n} vocabulary tokens, answering “which token next”",
        "sec17": "§17 Cost: score elements = B·n_head·T² (B={batch}, n_head={heads})",
        "conclusion": "Conclusion: both prompts end in “{last}”, yet their final-position weights differ:",
        "conclusion_end": "The attention softmax normalises over positions (where to read); the vocabulary softmax over tokens (what comes next).",
        "exp_title": "§16 How the loss changes one reading: only W_Q[{i},{j}] moves",
        "exp_h": "Final-position head output h:",
        "exp_logits": "Logits = h · W_vocab:",
        "exp_prob": "Prompt {p}: p({target}) = {prob}, loss L = {loss}",
        "exp_mean": "Mean loss over the two prompts = {loss}",
        "exp_expr": "Final-row scaled scores as functions of q = W_Q[{i},{j}]:",
        "exp_grad": "d(mean loss)/dW_Q[{i},{j}]: autograd {auto}, central difference {fd}, closed form {closed}",
        "exp_update": "Learning rate {lr}: q_new = {old} − {lr}×({g}) = {new}",
        "exp_after": "After the update:",
        "exp_row": "Prompt {p}: p({target}) {before} → {after}, loss {lb} → {la}",
        "exp_mean_after": "Mean loss {before} → {after}",
        "exp_honest": "Note: the mean loss fell and p({target_a}|A) rose, but p({target_b}|B) fell a little. "
        "One gradient step lowers the mean loss locally; it does not promise that every prompt improves.",
    },
}

#: Section 9's axis-meaning table: (tensor, stage used for its shape, meaning per language).
AXIS_MEANINGS: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("X", "x", {"zh": "Batch, Token 位置, 模型特征", "en": "batch, token position, model feature"}),
    (
        "Q / K / V",
        "q",
        {"zh": "Batch, Token 位置, Head 特征", "en": "batch, token position, head feature"},
    ),
    (
        "Scores / Weights",
        "weights",
        {
            "zh": "Batch, Query 位置, Key/Value 位置",
            "en": "batch, query position, key/value position",
        },
    ),
    (
        "Head Output",
        "output",
        {"zh": "Batch, Query 位置, Head 特征", "en": "batch, query position, head feature"},
    ),
)

SHAPE_STAGE_NAMES: dict[str, dict[str, str]] = {
    "zh": {
        "input": "输入",
        "qkv": "分 head 后 Q/K/V",
        "scores": "scores：每个 query 对每个 key",
        "weights": "weights",
        "head_outputs": "各 head 输出",
        "merged": "拼回通道",
        "output": "W_O 之后",
    },
    "en": {
        "input": "input",
        "qkv": "per-head Q/K/V",
        "scores": "scores: every query against every key",
        "weights": "weights",
        "head_outputs": "head outputs",
        "merged": "heads merged into channels",
        "output": "after W_O",
    },
}
