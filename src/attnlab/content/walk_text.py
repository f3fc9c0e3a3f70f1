"""The lines only the two lesson scripts print, in Chinese and English (our own words):
``week07_attention.py``'s header, the two softmaxes side by side and its conclusion; the
gradient script's before → after lines. Everything else they print is the page's own sections
(:mod:`attnlab.content.plain`) and the stage tables.

Placeholders in braces are filled with numbers computed by the pipeline; no number is written here.
"""

from __future__ import annotations

TEXT: dict[str, dict[str, str]] = {
    "zh": {
        "title": "Week 7 · Attention：让当前位置按需读取左侧上下文",
        "question": "两条提示最后都是“{last}”，Attention 怎样让它们读到不同的左侧信息？",
        "prompts": "提示 A = {a}，提示 B = {b}；X 的形状 {shape} = [B, T, C]。",
        "order": "按课程页面的小节顺序：{order}（其余小节是文字或代码；§16 的梯度见 course_examples/week07_attention.py）",
        "stages": "逐阶段的表（两条提示，{p} 位小数）",
        "two_softmax": "两种 Softmax 并排（词表一侧用 §16 的评分层）：",
        "attn_softmax": "Attention Softmax：沿 {n} 个 Key 位置，每个 Query 行加总为 1",
        "vocab_softmax": "Vocabulary Softmax：沿 {n} 个词表 Token，回答“下一个词是谁”",
        "conclusion": "结论：两条提示的最后一个 Token 都是“{last}”，但末位置权重不同：",
        "conclusion_end": "Attention Softmax 沿位置轴归一化（读哪里）；Vocabulary Softmax 沿词表轴归一化（下一个词）。",
        "exp_after": "更新后（每个数取足够的位数，让变化看得见）：",
        "exp_row": "提示 {p}：p({target}) {before} → {after}，损失 {lb} → {la}",
        "exp_mean_after": "平均损失 {before} → {after}",
    },
    "en": {
        "title": "Week 7 · Attention: let the current position read left context on demand",
        "question": "Both prompts end in “{last}”. How does attention give that last token different context?",
        "prompts": "Prompt A = {a}, prompt B = {b}; X has shape {shape} = [B, T, C].",
        "order": "In the lesson page's section order: {order} (the other sections are prose or code; §16's gradient is course_examples/week07_attention.py)",
        "stages": "Stage by stage (both prompts, {p} decimals)",
        "two_softmax": "The two softmaxes side by side (the vocabulary side uses §16's scoring layer):",
        "attn_softmax": "Attention softmax: over {n} key positions, each query row sums to 1",
        "vocab_softmax": "Vocabulary softmax: over {n} vocabulary tokens, answering “which token next”",
        "conclusion": "Conclusion: both prompts end in “{last}”, yet their final-position weights differ:",
        "conclusion_end": "The attention softmax normalises over positions (where to read); the vocabulary softmax over tokens (what comes next).",
        "exp_after": "After the update (each number with as many digits as it takes to see the change):",
        "exp_row": "Prompt {p}: p({target}) {before} → {after}, loss {lb} → {la}",
        "exp_mean_after": "Mean loss {before} → {after}",
    },
}
