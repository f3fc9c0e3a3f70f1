"""Every word the figures show, in Chinese and English, plus the token labels of the axes."""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.inputs.model import TOKEN_MAX
from attnlab.text.fmt import escape_label

_TEXT: dict[str, dict[str, str]] = {
    "zh": {
        "masked": "已屏蔽",
        "query": "Query 位置（行）",
        "key": "Key 位置（列）",
        "prompt": "提示",
        "batch": "批",
        "head": "Head",
        "weight": "注意力权重",
        "value": "数值",
        "weights_title": "注意力权重：每行是一个 Query 读取各位置的比例（行和为 1）",
        "no_values": "T > {limit}：格子里不再写数值，完整数字请用 attnlab trace",
        "chain_title": "提示 {name} 的完整计算链",
        "chain_head_title": "提示 {name}、Head {head} 的完整计算链",
        "input": "输入向量",
        "future": "未来位置 → −∞",
        "head_output": "Head {head} 的输出",
        "w_o_given": "输出投影",
        "w_o_identity": "未给出 w_o：单位矩阵",
        "merge_title": "提示 {name}：{heads} 个 Head 的输出拼接后乘 W_O",
        "raw_std": "不缩放：QKᵀ",
        "scaled_std": "缩放：QKᵀ/√d_k",
        "sqrt_theory": "理论：√d_k",
        "score_std": "Score 的标准差",
        "scale_left": "分数的尺度随 d_k 增长",
        "raw_softmax": "不缩放",
        "scaled_softmax": "缩放 ÷√d_k",
        "uniform": "平均分配 1/{T}",
        "max_weight": "最后一个 Query 的最大 Weight（{T} 个 Key）",
        "scale_right": "Softmax 是否过早接近 One-Hot",
        "scale_title": "第 8 节实测：随机单位方差 q、k（每个 d_k 取 {N} 个样本）",
        "visible_key": "可见",
        "future_key": "未来",
        "zero_fill": "错误：未来位置填 0",
        "neg_inf_fill": "正确：未来位置填 −∞",
        "mask_title": "第 11 节：t=0 的缩放分数行是 [{row}]，第二列是未来位置",
        "mask_caption": "0 是合法分数：exp(0)=1，未来仍分走权重；exp(−∞)=0，未来被真正移除",
        "cost_curve": "Score 元素 B·n_head·T²（B={B}, n_head={H}）",
        "t_squared": "参考线 T²（斜率 2）",
        "lesson_rows": "课程表格中的两行",
        "tokens_axis": "序列长度 T",
        "elements_axis": "Score 元素个数",
        "cost_title": "第 17 节：T 翻倍，Score 元素变为 4 倍",
        "bench_time": "中位耗时（毫秒）",
        "bench_memory": "峰值内存（MiB）",
        "bench_title": (
            "attnlab bench：B={B}、n_head={H}、d_head={d}，T 增长时的耗时与内存"
            "（实线 layer，虚线 kernel）"
        ),
        "bench_fit": "耗时 {time}，内存 {memory}",
    },
    "en": {
        "masked": "masked",
        "query": "query position (row)",
        "key": "key position (column)",
        "prompt": "Prompt",
        "batch": "batch",
        "head": "Head",
        "weight": "attention weight",
        "value": "value",
        "weights_title": (
            "Attention weights: each row is how much one query reads each position (rows sum to 1)"
        ),
        "no_values": "T > {limit}: cell values omitted; use attnlab trace for the numbers",
        "chain_title": "Prompt {name}: the whole chain",
        "chain_head_title": "Prompt {name}, head {head}: the whole chain",
        "input": "input vectors",
        "future": "future → −∞",
        "head_output": "head {head} output",
        "w_o_given": "output projection",
        "w_o_identity": "no w_o given: identity",
        "merge_title": "Prompt {name}: the {heads} heads' outputs, concatenated, times W_O",
        "raw_std": "unscaled: QKᵀ",
        "scaled_std": "scaled: QKᵀ/√d_k",
        "sqrt_theory": "theory: √d_k",
        "score_std": "standard deviation of the scores",
        "scale_left": "How spread out the scores are",
        "raw_softmax": "unscaled",
        "scaled_softmax": "scaled ÷√d_k",
        "uniform": "uniform 1/{T}",
        "max_weight": "largest weight of the last query ({T} keys)",
        "scale_right": "Does softmax collapse to one-hot?",
        "scale_title": "Section 8 measured: random unit-variance q and k ({N} samples per d_k)",
        "visible_key": "visible",
        "future_key": "future",
        "zero_fill": "Wrong: future filled with 0",
        "neg_inf_fill": "Right: future filled with −∞",
        "mask_title": (
            "Section 11: the scaled row at t=0 is [{row}]; its second column is the future"
        ),
        "mask_caption": (
            "0 is a valid score: exp(0)=1 still hands the future weight; exp(−∞)=0 removes it"
        ),
        "cost_curve": "score elements B·n_head·T² (B={B}, n_head={H})",
        "t_squared": "reference T² (slope 2)",
        "lesson_rows": "the lesson's two table rows",
        "tokens_axis": "sequence length T",
        "elements_axis": "score elements",
        "cost_title": "Section 17: doubling T multiplies the score elements by 4",
        "bench_time": "median time (ms)",
        "bench_memory": "peak memory (MiB)",
        "bench_title": (
            "attnlab bench: time and memory as T grows, B={B}, n_head={H}, d_head={d} "
            "(solid: layer, dashed: kernel)"
        ),
        "bench_fit": "time {time}, memory {memory}",
    },
}


def text(key: str, lang: str, **fields: object) -> str:
    """The figure text ``key`` in ``lang``, with ``{fields}`` filled in."""
    return _TEXT[lang][key].format(**fields)


def figure_label(token: str) -> str:
    """A token as figure text: control characters escaped (:func:`attnlab.text.fmt.escape_label`)
    and ``$`` escaped, since matplotlib reads text between two ``$`` as mathtext (a label like
    ``$\\frac$`` would stop the figure from drawing).

    Escapes make a label longer (``\\x1b`` for one character): one longer than
    :data:`~attnlab.inputs.model.TOKEN_MAX` characters is cut with an ellipsis, so no label is wider
    than the figures are sized for."""
    shown = escape_label(token)
    if len(shown) > TOKEN_MAX:
        shown = shown[: TOKEN_MAX - 1] + "…"
    return shown.replace("$", r"\$")


def token_labels(tokens: Sequence[str] | None, T: int) -> list[str]:
    """Axis labels ``"t=0 我"`` for each position (just ``"t=0"`` without tokens).

    ``tokens`` are figure labels already (see :func:`figure_label`)."""
    if tokens is None:
        return [f"t={t}" for t in range(T)]
    return [f"t={t} {tok}" for t, tok in enumerate(tokens)]
