"""The mistakes catalogue: attention as a learner might get it wrong, one bug at a time.

Each :class:`Mistake` is the lesson's pipeline with exactly one step replaced by code a learner
really writes (``q @ k`` without the transpose, ``softmax(dim=1)``, a 0 fill for the future...),
tied to the item of the lesson's section-18 debugging checklist it breaks and to the section to
reread. They are the documented exception to "one attention code path": their whole point is to
compute something *other* than :func:`attnlab.core.pipeline.attend`.

This module is the data: the named mistakes and their texts (keyed by language, as
:mod:`attnlab.text.i18n` describes). The step-by-step code is in :mod:`attnlab.core.steps`;
:mod:`attnlab.mistakes.diagnosis` runs a mistake and names the one behind a learner's numbers.

Example::

    >>> get("no_scale").title["en"]
    'no scaling'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from attnlab.core import steps
from attnlab.core.steps import Recipe

#: The lesson's section-18 checklist: item number → short name, in debugging order.
CHECKLIST: dict[str, dict[int, str]] = {
    "zh": {
        1: "X 是向量",
        2: "Q/K/V 投影",
        3: "分数 QKᵀ",
        4: "缩放 ÷√d_k",
        5: "因果掩码",
        6: "Softmax 轴",
        7: "读取 Values",
        8: "多头拼接与 W_O",
        9: "批次独立",
        10: "Logits 的输入",
    },
    "en": {
        1: "X are vectors",
        2: "Q/K/V projections",
        3: "scores QKᵀ",
        4: "scale ÷√d_k",
        5: "causal mask",
        6: "softmax axis",
        7: "retrieval of Values",
        8: "multi-head concat and W_O",
        9: "batch independence",
        10: "what the LM head reads",
    },
}

#: Stages a learner can enter in ``attnlab check`` (single head: no ``concat``).
CHECK_STAGES: tuple[str, ...] = (
    "x", "q", "k", "v", "raw_scores", "scaled_scores", "masked_scores", "weights", "output",
    "logits",
)  # fmt: skip


@dataclass(frozen=True)
class Mistake:
    """One catalogued bug: a name, the checklist item it breaks, the section to reread.

    Attributes:
        name: identifier, e.g. ``"no_scale"``.
        item: checklist item (1-10) of the lesson's section 18.
        section: lesson section to reread.
        redo: the first stage whose numbers it changes (the stage to redo by hand).
        title, explain: what it is; what the learner's numbers mean (``title[lang]``).
        code: the wrong line as a learner writes it; fix: the right line.
        multihead_only: True when it needs ``n_head > 1`` (splitting, merging, ``W_O``).
        needs_token_ids: True when it needs the input's token IDs (an input of vectors alone,
            a practice deal or an ``--input`` file, has none to misuse).
        recipe: the steps that compute it (:class:`attnlab.core.steps.Recipe`).
    """

    name: str
    item: int
    section: int
    redo: str
    title: dict[str, str]
    explain: dict[str, str]
    code: str
    fix: str
    multihead_only: bool = False
    needs_token_ids: bool = False
    recipe: Recipe = field(default_factory=Recipe, repr=False, compare=False)

    def applies_to(self, inp: steps.MistakeInput) -> bool:
        """Whether ``inp`` has what this mistake misuses: several heads for a multi-head
        mistake, token IDs for one that feeds them as X."""
        if self.multihead_only and inp.num_heads < 2:
            return False
        return not (self.needs_token_ids and inp.token_ids is None)


def _m(name: str, item: int, section: int, redo: str, **kw: Any) -> Mistake:
    return Mistake(name, item, section, redo, **kw)


CATALOGUE: tuple[Mistake, ...] = (
    _m("token_ids_as_x", 1, 1, "x",
       title={"zh": "把 Token ID 当作 X", "en": "token IDs fed as X"},
       explain={"zh": "这是把 Token 编号本身当作向量得到的结果：X 必须是嵌入向量，不是 ID",
                "en": "these come from using the token IDs themselves as X: X must be embedding "
                      "vectors, not IDs"},
       code="x = token_ids.float().unsqueeze(-1).expand(B, T, C)",
       fix="x = embedding(token_ids)  # [B, T, C]",
       needs_token_ids=True, recipe=Recipe(embed=steps.embed_token_ids)),
    _m("swapped_qk", 2, 4, "q",
       title={"zh": "Q 与 K 的投影互换", "en": "W_Q and W_K swapped"},
       explain={"zh": "这是用 W_K 算 Query、用 W_Q 算 Key 的结果",
                "en": "these come from computing the query with W_K and the key with W_Q"},
       code="q, k = x @ w_k, x @ w_q", fix="q, k = x @ w_q, x @ w_k",
       recipe=Recipe(project=steps.project_swapped)),
    _m("key_from_query", 2, 4, "k",
       title={"zh": "Key 也用了 W_Q", "en": "key computed with W_Q"},
       explain={"zh": "这是 Key 误用 W_Q（复制粘贴）得到的结果",
                "en": "these come from computing the key with W_Q too (a copy-paste slip)"},
       code="k = x @ w_q", fix="k = x @ w_k",
       recipe=Recipe(project=steps.project_key_from_query)),
    _m("scores_not_transposed", 3, 4, "raw_scores",
       title={"zh": "分数没有转置 K", "en": "scores without transposing K"},
       explain={"zh": "这是 Q 乘以未转置（只是 reshape）的 K 得到的分数",
                "en": "these are scores of Q times K reshaped instead of transposed"},
       code="raw_scores = q @ k.reshape(B, d_head, T)", fix="raw_scores = q @ k.transpose(-2, -1)",
       recipe=Recipe(scores=steps.scores_reshaped)),
    _m("scores_transposed", 3, 4, "raw_scores",
       title={"zh": "分数表转置了（Sᵀ）", "en": "score table transposed (Sᵀ)"},
       explain={"zh": "这是 K Qᵀ：行和列互换了，行应是 Query",
                "en": "this is K Qᵀ: rows and columns are swapped; rows must be queries"},
       code="raw_scores = k @ q.transpose(-2, -1)", fix="raw_scores = q @ k.transpose(-2, -1)",
       recipe=Recipe(scores=steps.scores_transposed)),
    _m("no_scale", 4, 8, "scaled_scores",
       title={"zh": "没有缩放", "en": "no scaling"},
       explain={"zh": "这是未缩放分数的结果：你跳过了 ÷√d_k",
                "en": "these come from unscaled scores: you skipped ÷√d_k"},
       code="scaled_scores = raw_scores", fix="scaled_scores = raw_scores / math.sqrt(d_head)",
       recipe=Recipe(scale=steps.scale_none)),
    _m("scale_by_d_k", 4, 8, "scaled_scores",
       title={"zh": "除以 d_k 而不是 √d_k", "en": "÷d_k instead of ÷√d_k"},
       explain={"zh": "这是除以 d_k 的结果：应除以 √d_k",
                "en": "these come from dividing by d_k: divide by √d_k"},
       code="scaled_scores = raw_scores / d_head",
       fix="scaled_scores = raw_scores / math.sqrt(d_head)",
       recipe=Recipe(scale=steps.scale_by_d)),
    _m("scale_by_sqrt_c", 4, 8, "scaled_scores",
       title={"zh": "除以 √C 而不是 √d_head", "en": "÷√C instead of ÷√d_head"},
       explain={"zh": "这是除以模型宽度的平方根 √C 的结果：应除以每个 Head 的 √d_head",
                "en": "these come from dividing by √C, the model width: divide by √d_head of "
                      "one head"},
       code="scaled_scores = raw_scores / math.sqrt(C)",
       fix="scaled_scores = raw_scores / math.sqrt(d_head)",
       recipe=Recipe(scale=steps.scale_by_sqrt_c)),
    _m("no_mask", 5, 10, "masked_scores",
       title={"zh": "没有因果掩码", "en": "no causal mask"},
       explain={"zh": "这是没有掩码的结果：未来位置也得到了权重",
                "en": "these come from skipping the mask: future positions got weight"},
       code="masked_scores = scaled_scores",
       fix='masked_scores = scaled_scores.masked_fill(~causal_mask, float("-inf"))',
       recipe=Recipe(mask=steps.mask_none)),
    _m("mask_zero_fill", 5, 11, "masked_scores",
       title={"zh": "未来位置填 0 而不是 −∞", "en": "future filled with 0, not −∞"},
       explain={"zh": "这是把未来分数填成 0 的结果：exp(0)=1，未来仍分到权重",
                "en": "these come from filling the future with 0: exp(0) = 1, so it still takes "
                      "weight"},
       code="masked_scores = scaled_scores.masked_fill(~causal_mask, 0.0)",
       fix='masked_scores = scaled_scores.masked_fill(~causal_mask, float("-inf"))',
       recipe=steps.ZERO_FILL),
    _m("mask_inverted", 5, 10, "masked_scores",
       title={"zh": "掩码方向反了（上三角）", "en": "mask inverted (upper triangle)"},
       explain={"zh": "这是用上三角掩码的结果：挡住了过去、放开了未来",
                "en": "these come from an upper-triangle mask: it blocks the past and opens the "
                      "future"},
       code="causal_mask = torch.triu(torch.ones(T, T, dtype=torch.bool))",
       fix="causal_mask = torch.tril(torch.ones(T, T, dtype=torch.bool))",
       recipe=Recipe(mask=steps.mask_upper)),
    _m("mask_off_by_one", 5, 10, "masked_scores",
       title={"zh": "掩码错一位（挡住了对角线）", "en": "mask off by one (diagonal blocked)"},
       explain={"zh": "这是连当前位置也挡住的结果：位置 t 应能读自己",
                "en": "these come from blocking the diagonal too: position t may read itself"},
       code="causal_mask = torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)",
       fix="causal_mask = torch.tril(torch.ones(T, T, dtype=torch.bool))",
       recipe=Recipe(mask=steps.mask_off_by_one)),
    _m("mask_after_softmax", 5, 11, "weights",
       title={"zh": "Softmax 之后才掩码（未重新归一化）",
              "en": "mask after softmax, not renormalised"},
       explain={"zh": "这是先 Softmax 再把未来清零的结果：每行加起来不再是 1",
                "en": "these come from zeroing the future after the softmax: rows no longer sum "
                      "to 1"},
       code="weights = torch.softmax(scaled_scores, dim=-1).masked_fill(~causal_mask, 0.0)",
       fix="weights = torch.softmax(masked_scores, dim=-1)",
       recipe=Recipe(mask=steps.mask_none, softmax=steps.softmax_then_mask)),
    _m("softmax_query_axis", 6, 5, "weights",
       title={"zh": "Softmax 沿 Query 轴", "en": "softmax over the query axis"},
       explain={"zh": "这是沿列（Query 轴）做 Softmax 的结果：应沿每个 Query 行（dim=-1）",
                "en": "these come from a softmax down the columns (query axis): it must run "
                      "along each query row (dim=-1)"},
       code="weights = torch.softmax(masked_scores, dim=-2)",
       fix="weights = torch.softmax(masked_scores, dim=-1)",
       recipe=Recipe(softmax=steps.softmax_query_axis)),
    _m("weights_times_keys", 7, 6, "output",
       title={"zh": "Weights @ K 而不是 @ V", "en": "weights @ K instead of @ V"},
       explain={"zh": "这是用权重加权 Key 的结果：应加权 Value",
                "en": "these come from weighting the keys: weight the values"},
       code="output = weights @ k", fix="output = weights @ v",
       recipe=Recipe(retrieve=steps.retrieve_keys)),
    _m("concat_time_axis", 8, 15, "output", multihead_only=True,
       title={"zh": "Heads 沿时间轴拼接", "en": "heads concatenated on the time axis"},
       explain={"zh": "这是沿时间轴拼接各 Head 再 view 回 [B,T,C] 的结果：应沿特征轴拼接",
                "en": "these come from concatenating the heads along time, then viewing back to "
                      "[B, T, C]: concatenate on the feature axis"},
       code="concat = torch.cat(head_outputs, dim=1).view(B, T, C)",
       fix="concat = torch.cat(head_outputs, dim=-1)",
       recipe=Recipe(merge=steps.merge_time_axis)),
    _m("split_without_transpose", 8, 9, "q", multihead_only=True,
       title={"zh": "拆分 Heads 时只 view/reshape 不 transpose",
              "en": "heads split with view/reshape but no transpose"},
       explain={"zh": "这是直接 view（或 reshape）成 [B,n_head,T,d_head] 的结果：Token 被打乱了",
                "en": "these come from viewing (or reshaping) straight to [B, n_head, T, d_head]: "
                      "tokens got scrambled"},
       code="q = q.view(B, n_head, T, d_head)",
       fix="q = q.view(B, T, n_head, d_head).transpose(1, 2)",
       recipe=Recipe(split=steps.split_no_transpose)),
    _m("no_output_projection", 8, 15, "output", multihead_only=True,
       title={"zh": "缺少 W_O", "en": "W_O missing"},
       explain={"zh": "这是拼接后没有乘 W_O 的结果",
                "en": "these are the concatenated heads without W_O"},
       code="output = concat", fix="output = concat @ w_o",
       recipe=Recipe(out_proj=steps.out_proj_none)),
    _m("batch_mixed", 9, 14, "raw_scores",
       title={"zh": "批次行互相读取", "en": "batch rows mixed"},
       explain={"zh": "这是把 B 和 T 展平后再算分数的结果：一条提示读到了另一条",
                "en": "these come from flattening B and T before the scores: one prompt read "
                      "another"},
       code="raw_scores = q.reshape(B * T, d_head) @ k.reshape(B * T, d_head).T",
       fix="raw_scores = q @ k.transpose(-2, -1)  # [B, T, T]",
       recipe=Recipe(fold=steps.fold_batch)),
    _m("lm_head_on_weights", 10, 16, "logits",
       title={"zh": "LM Head 读了 Attention Weights",
              "en": "the LM head fed the attention weights"},
       explain={"zh": "这是把 Attention Weights 当特征交给 LM Head 的结果：应交 Weights @ V",
                "en": "these come from handing the attention weights on as features: hand on "
                      "weights @ V"},
       code="logits = weights @ w_vocab", fix="logits = output @ w_vocab",
       recipe=Recipe(hand_on=steps.hand_on_weights)),
)  # fmt: skip

_BY_NAME = {m.name: m for m in CATALOGUE}


def get(name: str) -> Mistake:
    """The catalogue entry called ``name``; ``KeyError`` names the known ones otherwise."""
    if name not in _BY_NAME:
        raise KeyError(f"no mistake called {name!r}; known: {', '.join(_BY_NAME)}")
    return _BY_NAME[name]
