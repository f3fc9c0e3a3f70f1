"""Short explanations of each stage, in Chinese and English, shared by every front end.

Each names the axis being reduced or produced, so a learner can tell the position axis from the
feature axis. Written for this project; the lesson's facts, not its sentences.
"""

from __future__ import annotations

STAGE_TITLES: dict[str, dict[str, str]] = {
    "zh": {
        "x": "输入 X",
        "q": "查询 Q = X·W_Q",
        "k": "键 K = X·W_K",
        "v": "值 V = X·W_V",
        "raw_scores": "原始分数 S = Q·Kᵀ",
        "scaled_scores": "缩放分数 S/√d_k",
        "causal_mask": "因果掩码 M",
        "masked_scores": "掩码后的分数",
        "weights": "注意力权重 P = softmax(·, dim=-1)",
        "output": "Head 输出 O = P·V",
        "concat": "拼接各 Head",
        "projected": "输出投影 ·W_O",
        "logits": "评分 logits = O·W_vocab",
    },
    "en": {
        "x": "Input X",
        "q": "Query Q = X·W_Q",
        "k": "Key K = X·W_K",
        "v": "Value V = X·W_V",
        "raw_scores": "Raw scores S = Q·Kᵀ",
        "scaled_scores": "Scaled scores S/√d_k",
        "causal_mask": "Causal mask M",
        "masked_scores": "Masked scores",
        "weights": "Attention weights P = softmax(·, dim=-1)",
        "output": "Head output O = P·V",
        "concat": "Heads concatenated",
        "projected": "Output projection ·W_O",
        "logits": "Logits = O·W_vocab",
    },
}

STAGE_EXPLANATIONS: dict[str, dict[str, str]] = {
    "zh": {
        "x": "每一行是一个位置 t 的输入向量，列是模型特征轴 C。进入 Attention 的是向量，"
        "不是 Token ID。",
        "q": "X 的每一行乘 W_Q，沿特征轴 C 求和，得到宽度 d_head 的查询：这个位置想找什么。"
        "行仍是位置轴 T。",
        "k": "同一个 X 乘 W_K，沿特征轴 C 求和：每个位置用来被匹配的线索。行是位置，列是 Head 特征。",
        "v": "同一个 X 乘 W_V：每个位置被读到后真正带回的内容。它不参与打分。",
        "raw_scores": "第 t 行第 j 列 = q_t 与 k_j 的点积，沿 Head 特征轴 d_head 求和。"
        "行是 Query 位置，列是 Key 位置，两个轴都是位置轴，不是特征轴。",
        "scaled_scores": "每个分数除以 √d_k。同一行的大小顺序不变，只是把 Softmax 收到的数值尺度拉回稳定范围。",
        "causal_mask": "M[t,j]=1 表示位置 t 可以读取位置 j（j ≤ t）。右上三角是未来，必须禁止。",
        "masked_scores": "未来列（j > t）在 Softmax 之前改成 −∞，因为 exp(−∞)=0；改成 0 仍会分到权重。",
        "weights": "沿 Key 位置轴（dim=-1）做 Softmax：每个 Query 行分配一份总和为 1 的读取比例，"
        "未来位置的权重恰好为 0。",
        "output": "权重乘 V：沿 Key 位置轴 j 求和，o_t = Σ_j P[t,j]·v_j。结果回到 [B,T,d_head]，"
        "行是位置，列是 Head 特征。",
        "concat": "各 Head 的输出沿特征轴并排拼接，宽度回到 C；位置轴不变。",
        "projected": "拼接结果乘 W_O，沿特征轴 C 求和，让不同 Head 的特征相互混合，输出仍是 [B,T,C]。",
    },
    "en": {
        "x": "Each row is the input vector of one position t; columns are the model-feature axis C. "
        "Attention reads vectors, not token IDs.",
        "q": "Each row of X times W_Q, summed over the feature axis C: a query of width d_head, "
        "what this position is looking for. Rows are still positions T.",
        "k": "The same X times W_K, summed over C: the clue each position offers for matching. "
        "Rows are positions, columns head features.",
        "v": "The same X times W_V: the content a position hands back once it is read. "
        "Values take no part in scoring.",
        "raw_scores": "Row t, column j is the dot product q_t · k_j, summed over the head-feature "
        "axis d_head. Rows are query positions, columns key positions: both are position axes.",
        "scaled_scores": "Every score divided by √d_k. The order within a row is unchanged; only "
        "the scale that softmax receives is tamed.",
        "causal_mask": "M[t,j]=1 means position t may read position j (j ≤ t). The upper "
        "triangle is the future and must be blocked.",
        "masked_scores": "Future columns (j > t) become −∞ before the softmax, because "
        "exp(−∞)=0; a 0 would still receive weight.",
        "weights": "Softmax over the key-position axis (dim=-1): each query row shares out one "
        "unit of reading, and future positions get exactly 0.",
        "output": "Weights times V: a sum over the key-position axis j, o_t = Σ_j P[t,j]·v_j. "
        "Back to [B,T,d_head]: rows are positions, columns head features.",
        "concat": "Head outputs placed side by side on the feature axis, back to width C; the "
        "position axis is untouched.",
        "projected": "The concatenation times W_O, summed over the feature axis C, lets the heads' "
        "features mix; the output is still [B,T,C].",
    },
}


def title(stage: str, lang: str) -> str:
    """Display title of ``stage`` in ``lang``."""
    return STAGE_TITLES[lang][stage]


def explain(stage: str, lang: str) -> str:
    """The two- or three-sentence explanation of ``stage`` in ``lang``."""
    return STAGE_EXPLANATIONS[lang][stage]
