"""Every word the figures show, in Chinese and English, plus the token labels of the axes."""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.i18n import pick
from attnlab.show.fmt import escape_label

_TEXT: dict[str, tuple[str, str]] = {
    "masked": ("已屏蔽", "masked"),
    "query": ("Query 位置（行）", "query position (row)"),
    "key": ("Key 位置（列）", "key position (column)"),
    "prompt": ("Prompt", "Prompt"),
    "batch": ("Batch", "batch"),
    "head": ("Head", "Head"),
    "weight": ("Attention Weight", "attention weight"),
    "value": ("数值", "value"),
    "weights_title": (
        "Attention Weights：每行是一个 Query 读取各位置的比例（行和为 1）",
        "Attention weights: each row is how much one query reads each position (rows sum to 1)",
    ),
    "no_values": (
        "T > {limit}：格子里不再写数值，完整数字请用 attnlab trace",
        "T > {limit}: cell values omitted; use attnlab trace for the numbers",
    ),
    "chain_title": ("Prompt {name} 的完整计算链", "Prompt {name}: the whole chain"),
    "chain_head_title": (
        "Prompt {name}、Head {head} 的完整计算链",
        "Prompt {name}, head {head}: the whole chain",
    ),
    "input": ("输入向量", "input vectors"),
    "future": ("未来位置 → −∞", "future → −∞"),
    "raw_std": ("不缩放：QKᵀ", "unscaled: QKᵀ"),
    "scaled_std": ("缩放：QKᵀ/√d_k", "scaled: QKᵀ/√d_k"),
    "sqrt_theory": ("理论：√d_k", "theory: √d_k"),
    "score_std": ("Score 的标准差", "standard deviation of the scores"),
    "scale_left": ("分数的尺度随 d_k 增长", "How spread out the scores are"),
    "raw_softmax": ("不缩放", "unscaled"),
    "scaled_softmax": ("缩放 ÷√d_k", "scaled ÷√d_k"),
    "uniform": ("平均分配 1/{T}", "uniform 1/{T}"),
    "max_weight": (
        "最后一个 Query 的最大 Weight（{T} 个 Key）",
        "largest weight of the last query ({T} keys)",
    ),
    "scale_right": ("Softmax 是否过早接近 One-Hot", "Does softmax collapse to one-hot?"),
    "scale_title": (
        "第 8 节实测：随机单位方差 q、k（每个 d_k 取 {N} 个样本）",
        "Section 8 measured: random unit-variance q and k ({N} samples per d_k)",
    ),
    "visible_key": ("可见", "visible"),
    "future_key": ("未来", "future"),
    "zero_fill": ("错误：未来位置填 0", "Wrong: future filled with 0"),
    "inf_fill": ("正确：未来位置填 −∞", "Right: future filled with −∞"),
    "mask_title": (
        "第 11 节：t=0 的 Scaled Row 是 [{row}]，第二列是未来位置",
        "Section 11: the scaled row at t=0 is [{row}]; its second column is the future",
    ),
    "mask_caption": (
        "0 是合法分数：exp(0)=1，未来仍分走权重；exp(−∞)=0，未来被真正移除",
        "0 is a valid score: exp(0)=1 still hands the future weight; exp(−∞)=0 removes it",
    ),
    "cost_curve": (
        "Score 元素 B·n_head·T²（B={B}, n_head={H}）",
        "score elements B·n_head·T² (B={B}, n_head={H})",
    ),
    "t_squared": ("参考线 T²（斜率 2）", "reference T² (slope 2)"),
    "lesson_rows": ("课程表格中的两行", "the lesson's two table rows"),
    "tokens_axis": ("序列长度 T", "sequence length T"),
    "elements_axis": ("Score 元素个数", "score elements"),
    "cost_title": (
        "第 17 节：T 翻倍，Score 元素变为 4 倍",
        "Section 17: doubling T multiplies the score elements by 4",
    ),
    "bench_time": ("中位耗时（毫秒）", "median time (ms)"),
    "bench_memory": ("峰值内存（MiB）", "peak memory (MiB)"),
    "bench_title": (
        "attnlab bench：B={B}、n_head={H}、d_head={d}，T 增长时的耗时与内存"
        "（实线 layer，虚线 kernel）",
        "attnlab bench: time and memory as T grows, B={B}, n_head={H}, d_head={d} "
        "(solid: layer, dashed: kernel)",
    ),
    "bench_fit": ("耗时 {time}，内存 {memory}", "time {time}, memory {memory}"),
}


def text(key: str, lang: str, **fields: object) -> str:
    """The figure text ``key`` in ``lang``, with ``{fields}`` filled in."""
    zh, en = _TEXT[key]
    return pick(lang, zh, en).format(**fields)


def figure_label(token: str) -> str:
    """A token as figure text: control characters escaped (:func:`attnlab.show.fmt.escape_label`)
    and ``$`` escaped, since matplotlib reads text between two ``$`` as mathtext (a label like
    ``$\\frac$`` would stop the figure from drawing)."""
    return escape_label(token).replace("$", r"\$")


def token_labels(tokens: Sequence[str] | None, T: int) -> list[str]:
    """Axis labels ``"t=0 我"`` for each position (just ``"t=0"`` without tokens).

    ``tokens`` are figure labels already (see :func:`figure_label`)."""
    if tokens is None:
        return [f"t={t}" for t in range(T)]
    return [f"t={t} {tok}" for t, tok in enumerate(tokens)]
