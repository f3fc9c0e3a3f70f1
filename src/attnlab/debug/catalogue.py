"""The mistakes catalogue: attention as a learner might get it wrong, one bug at a time.

Each :class:`Mistake` is the lesson's pipeline with exactly one step replaced by code a learner
really writes (``q @ k`` without the transpose, ``softmax(dim=1)``, a 0 fill for the future...),
tied to the item of the lesson's section-18 debugging checklist it breaks and to the section to
reread. They are the documented exception to "one attention code path": their whole point is to
compute something *other* than :func:`attnlab.pipeline.attend`, so :func:`mistake_stages` can
show every wrong stage and :func:`diagnose` can name the bug behind a wrong set of numbers.

The step-by-step code is in :mod:`attnlab.debug.steps`; the texts are written here. Axis letters
as in :mod:`attnlab.pipeline`.

Example::

    >>> [m.name for m in diagnose("weights", [0.638, 0.362], prompt="A", row=1)]
    ['no_scale']
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import torch

from attnlab import example
from attnlab.debug import steps
from attnlab.debug.steps import MistakeInput, Recipe
from attnlab.pipeline import attention_stages, multi_head_stages

__all__ = [
    "CATALOGUE",
    "CHECKLIST",
    "CHECK_STAGES",
    "Mistake",
    "MistakeInput",
    "correct_stages",
    "diagnose",
    "get",
    "lesson_input",
    "mistake_stages",
    "mistake_steps_softmax",
    "multihead_example",
    "values_match",
]

#: The lesson's section-18 checklist: item number → (zh, en) short name, in debugging order.
CHECKLIST: dict[int, tuple[str, str]] = {
    1: ("X 是向量", "X are vectors"),
    2: ("Q/K/V 投影", "Q/K/V projections"),
    3: ("分数 QKᵀ", "scores QKᵀ"),
    4: ("缩放 ÷√d_k", "scale ÷√d_k"),
    5: ("因果掩码", "causal mask"),
    6: ("Softmax 轴", "softmax axis"),
    7: ("读取 Values", "retrieval of Values"),
    8: ("多头拼接与 W_O", "multi-head concat and W_O"),
    9: ("批次独立", "batch independence"),
    10: ("Logits 的输入", "what the LM head reads"),
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
        title, explain: ``(zh, en)`` texts: what it is; what the learner's numbers mean.
        code: the wrong line as a learner writes it; fix: the right line.
        multihead_only: True when it needs ``n_head > 1`` (splitting, merging, ``W_O``).
        recipe: the steps that compute it (:class:`attnlab.debug.steps.Recipe`).
    """

    name: str
    item: int
    section: int
    redo: str
    title: tuple[str, str]
    explain: tuple[str, str]
    code: str
    fix: str
    multihead_only: bool = False
    recipe: Recipe = field(default_factory=Recipe, repr=False, compare=False)

    def text(self, which: str, lang: str) -> str:
        """``title`` or ``explain`` in ``lang`` ("zh" or "en")."""
        zh, en = getattr(self, which)
        return zh if lang == "zh" else en


def _m(name: str, item: int, section: int, redo: str, **kw: Any) -> Mistake:
    return Mistake(name, item, section, redo, **kw)


CATALOGUE: tuple[Mistake, ...] = (
    _m("token_ids_as_x", 1, 1, "x",
       title=("把 Token ID 当作 X", "token IDs fed as X"),
       explain=("这是把 Token 编号本身当作向量得到的结果：X 必须是嵌入向量，不是 ID",
                "these come from using the token IDs themselves as X: X must be embedding "
                "vectors, not IDs"),
       code="x = token_ids.float().unsqueeze(-1).expand(B, T, C)",
       fix="x = embedding(token_ids)  # [B, T, C]",
       recipe=Recipe(embed=steps.embed_token_ids)),
    _m("swapped_qk", 2, 4, "q",
       title=("Q 与 K 的投影互换", "W_Q and W_K swapped"),
       explain=("这是用 W_K 算 Query、用 W_Q 算 Key 的结果", "these come from computing the "
                "query with W_K and the key with W_Q"),
       code="q, k = x @ w_k, x @ w_q", fix="q, k = x @ w_q, x @ w_k",
       recipe=Recipe(project=steps.project_swapped)),
    _m("key_from_query", 2, 4, "k",
       title=("Key 也用了 W_Q", "key computed with W_Q"),
       explain=("这是 Key 误用 W_Q（复制粘贴）得到的结果", "these come from computing the key "
                "with W_Q too (a copy-paste slip)"),
       code="k = x @ w_q", fix="k = x @ w_k",
       recipe=Recipe(project=steps.project_key_from_query)),
    _m("scores_not_transposed", 3, 4, "raw_scores",
       title=("分数没有转置 K", "scores without transposing K"),
       explain=("这是 Q 乘以未转置（只是 reshape）的 K 得到的分数", "these are scores of Q times "
                "K reshaped instead of transposed"),
       code="raw_scores = q @ k.reshape(B, d_head, T)",
       fix="raw_scores = q @ k.transpose(-2, -1)",
       recipe=Recipe(scores=steps.scores_reshaped)),
    _m("scores_transposed", 3, 4, "raw_scores",
       title=("分数表转置了（Sᵀ）", "score table transposed (Sᵀ)"),
       explain=("这是 K Qᵀ：行和列互换了，行应是 Query", "this is K Qᵀ: rows and columns are "
                "swapped; rows must be queries"),
       code="raw_scores = k @ q.transpose(-2, -1)",
       fix="raw_scores = q @ k.transpose(-2, -1)",
       recipe=Recipe(scores=steps.scores_transposed)),
    _m("no_scale", 4, 8, "scaled_scores",
       title=("没有缩放", "no scaling"),
       explain=("这是未缩放分数的结果：你跳过了 ÷√d_k", "these come from unscaled scores: you "
                "skipped ÷√d_k"),
       code="scaled_scores = raw_scores", fix="scaled_scores = raw_scores / math.sqrt(d_head)",
       recipe=Recipe(scale=steps.scale_none)),
    _m("scale_by_d_k", 4, 8, "scaled_scores",
       title=("除以 d_k 而不是 √d_k", "÷d_k instead of ÷√d_k"),
       explain=("这是除以 d_k 的结果：应除以 √d_k", "these come from dividing by d_k: divide by "
                "√d_k"),
       code="scaled_scores = raw_scores / d_head",
       fix="scaled_scores = raw_scores / math.sqrt(d_head)",
       recipe=Recipe(scale=steps.scale_by_d)),
    _m("scale_by_sqrt_c", 4, 8, "scaled_scores",
       title=("除以 √C 而不是 √d_head", "÷√C instead of ÷√d_head"),
       explain=("这是除以模型宽度的平方根 √C 的结果：应除以每个 Head 的 √d_head",
                "these come from dividing by √C, the model width: divide by √d_head of one head"),
       code="scaled_scores = raw_scores / math.sqrt(C)",
       fix="scaled_scores = raw_scores / math.sqrt(d_head)",
       recipe=Recipe(scale=steps.scale_by_sqrt_c)),
    _m("no_mask", 5, 10, "masked_scores",
       title=("没有因果掩码", "no causal mask"),
       explain=("这是没有掩码的结果：未来位置也得到了权重", "these come from skipping the mask: "
                "future positions got weight"),
       code="masked_scores = scaled_scores",
       fix='masked_scores = scaled_scores.masked_fill(~causal_mask, float("-inf"))',
       recipe=Recipe(mask=steps.mask_none)),
    _m("mask_zero_fill", 5, 11, "masked_scores",
       title=("未来位置填 0 而不是 −∞", "future filled with 0, not −∞"),
       explain=("这是把未来分数填成 0 的结果：exp(0)=1，未来仍分到权重",
                "these come from filling the future with 0: exp(0) = 1, so it still takes "
                "weight"),
       code="masked_scores = scaled_scores.masked_fill(~causal_mask, 0.0)",
       fix='masked_scores = scaled_scores.masked_fill(~causal_mask, float("-inf"))',
       recipe=Recipe(mask=steps.mask_zero_fill)),
    _m("mask_inverted", 5, 10, "masked_scores",
       title=("掩码方向反了（上三角）", "mask inverted (upper triangle)"),
       explain=("这是用上三角掩码的结果：挡住了过去、放开了未来", "these come from an upper-"
                "triangle mask: it blocks the past and opens the future"),
       code="causal_mask = torch.triu(torch.ones(T, T, dtype=torch.bool))",
       fix="causal_mask = torch.tril(torch.ones(T, T, dtype=torch.bool))",
       recipe=Recipe(mask=steps.mask_upper)),
    _m("mask_off_by_one", 5, 10, "masked_scores",
       title=("掩码错一位（挡住了对角线）", "mask off by one (diagonal blocked)"),
       explain=("这是连当前位置也挡住的结果：位置 t 应能读自己", "these come from blocking the "
                "diagonal too: position t may read itself"),
       code="causal_mask = torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)",
       fix="causal_mask = torch.tril(torch.ones(T, T, dtype=torch.bool))",
       recipe=Recipe(mask=steps.mask_off_by_one)),
    _m("mask_after_softmax", 5, 11, "weights",
       title=("Softmax 之后才掩码（未重新归一化）", "mask after softmax, not renormalised"),
       explain=("这是先 Softmax 再把未来清零的结果：每行加起来不再是 1",
                "these come from zeroing the future after the softmax: rows no longer sum to 1"),
       code="weights = torch.softmax(scaled_scores, dim=-1).masked_fill(~causal_mask, 0.0)",
       fix="weights = torch.softmax(masked_scores, dim=-1)",
       recipe=Recipe(mask=steps.mask_none, softmax=steps.softmax_then_mask)),
    _m("softmax_query_axis", 6, 5, "weights",
       title=("Softmax 沿 Query 轴", "softmax over the query axis"),
       explain=("这是沿列（Query 轴）做 Softmax 的结果：应沿每个 Query 行（dim=-1）",
                "these come from a softmax down the columns (query axis): it must run along "
                "each query row (dim=-1)"),
       code="weights = torch.softmax(masked_scores, dim=-2)",
       fix="weights = torch.softmax(masked_scores, dim=-1)",
       recipe=Recipe(softmax=steps.softmax_query_axis)),
    _m("weights_times_keys", 7, 6, "output",
       title=("Weights @ K 而不是 @ V", "weights @ K instead of @ V"),
       explain=("这是用权重加权 Key 的结果：应加权 Value", "these come from weighting the keys: "
                "weight the values"),
       code="output = weights @ k", fix="output = weights @ v",
       recipe=Recipe(retrieve=steps.retrieve_keys)),
    _m("concat_time_axis", 8, 15, "output", multihead_only=True,
       title=("Heads 沿时间轴拼接", "heads concatenated on the time axis"),
       explain=("这是沿时间轴拼接各 Head 再 view 回 [B,T,C] 的结果：应沿特征轴拼接",
                "these come from concatenating the heads along time, then viewing back to "
                "[B, T, C]: concatenate on the feature axis"),
       code="concat = torch.cat(head_outputs, dim=1).view(B, T, C)",
       fix="concat = torch.cat(head_outputs, dim=-1)",
       recipe=Recipe(merge=steps.merge_time_axis)),
    _m("split_without_transpose", 8, 9, "q", multihead_only=True,
       title=("拆分 Heads 时只 view 不 transpose", "heads split with view but no transpose"),
       explain=("这是直接 view 成 [B,n_head,T,d_head] 的结果：Token 被打乱了",
                "these come from viewing straight to [B, n_head, T, d_head]: tokens got "
                "scrambled"),
       code="q = q.view(B, n_head, T, d_head)",
       fix="q = q.view(B, T, n_head, d_head).transpose(1, 2)",
       recipe=Recipe(split=steps.split_no_transpose)),
    _m("no_output_projection", 8, 15, "output", multihead_only=True,
       title=("缺少 W_O", "W_O missing"),
       explain=("这是拼接后没有乘 W_O 的结果", "these are the concatenated heads without W_O"),
       code="output = concat", fix="output = concat @ w_o",
       recipe=Recipe(out_proj=steps.out_proj_none)),
    _m("batch_mixed", 9, 14, "raw_scores",
       title=("批次行互相读取", "batch rows mixed"),
       explain=("这是把 B 和 T 展平后再算分数的结果：一条 Prompt 读到了另一条",
                "these come from flattening B and T before the scores: one prompt read "
                "another"),
       code="raw_scores = q.reshape(B * T, d_head) @ k.reshape(B * T, d_head).T",
       fix="raw_scores = q @ k.transpose(-2, -1)  # [B, T, T]",
       recipe=Recipe(fold=steps.fold_batch)),
    _m("lm_head_on_weights", 10, 16, "output",
       title=("LM Head 读了 Attention Weights", "the LM head fed the attention weights"),
       explain=("这是把 Attention Weights 当特征交给 LM Head 的结果：应交 Weights @ V",
                "these come from handing the attention weights on as features: hand on "
                "weights @ V"),
       code="logits = weights @ w_vocab", fix="logits = output @ w_vocab",
       recipe=Recipe(hand_on=steps.hand_on_weights)),
)  # fmt: skip

_BY_NAME = {m.name: m for m in CATALOGUE}


def get(name: str) -> Mistake:
    """The catalogue entry called ``name``; ``KeyError`` names the known ones otherwise."""
    if name not in _BY_NAME:
        raise KeyError(f"no mistake called {name!r}; known: {', '.join(_BY_NAME)}")
    return _BY_NAME[name]


def lesson_input(dtype: torch.dtype = torch.float64) -> MistakeInput:
    """The lesson's single head on prompts A and B, with section 16's ``W_vocab``."""
    return MistakeInput(
        x=example.lesson_x(dtype),
        w_q=example.lesson_w_q(dtype),
        w_k=example.lesson_w_k(dtype),
        w_v=example.lesson_w_v(dtype),
        token_ids=example.lesson_token_ids(),
        w_vocab=example.lesson_w_vocab(dtype),
    )


def multihead_example(dtype: torch.dtype = torch.float64) -> MistakeInput:
    """Two heads on the lesson's X: head 0 is the lesson's head, head 1 reuses its matrices
    in a cycle (W_K, W_V, W_Q), and a fixed, non-symmetric ``W_O`` [4, 4] mixes them."""
    w_q, w_k, w_v = example.lesson_w_q(dtype), example.lesson_w_k(dtype), example.lesson_w_v(dtype)
    w_o = torch.eye(4, dtype=dtype) + 0.5 * torch.roll(torch.eye(4, dtype=dtype), 1, dims=1)
    return MistakeInput(
        x=example.lesson_x(dtype),
        w_q=torch.cat([w_q, w_k], dim=1),  # [C, C]: head 0 columns 0:2, head 1 columns 2:4
        w_k=torch.cat([w_k, w_v], dim=1),
        w_v=torch.cat([w_v, w_q], dim=1),
        num_heads=2,
        w_o=w_o,
        token_ids=example.lesson_token_ids(),
    )


def correct_stages(inp: MistakeInput) -> dict[str, torch.Tensor]:
    """The right stages of ``inp``, from :mod:`attnlab.pipeline` (plus ``logits`` when
    ``inp.w_vocab`` fits the output width)."""
    if inp.is_single_head:
        s = attention_stages(inp.x, inp.w_q, inp.w_k, inp.w_v)
        stages = {name: t for name, t in s.items() if name != "causal_mask"}
    else:
        m = multi_head_stages(inp.x, inp.w_q, inp.w_k, inp.w_v, inp.num_heads, inp.w_o)
        names = ("x", "q", "k", "v", "raw_scores", "scaled_scores", "masked_scores", "weights",
                 "concat", "output")  # fmt: skip
        stages = {name: getattr(m, name) for name in names}
    logits = steps.lm_head(stages["output"], inp.w_vocab)
    if logits is not None:
        stages["logits"] = logits  # [B, T, V_vocab]
    return stages


def mistake_stages(
    mistake: Mistake | str, inp: MistakeInput | None = None
) -> dict[str, torch.Tensor]:
    """Every stage of ``mistake`` on ``inp`` (the lesson example when omitted).

    Returns the same keys as :func:`correct_stages`; a stage's shape may differ from the right
    one (``batch_mixed`` scores are ``[1, B*T, B*T]``). Raises ``ValueError`` for a
    multi-head mistake on a single-head input.
    """
    m = get(mistake) if isinstance(mistake, str) else mistake
    inp = lesson_input() if inp is None else inp
    if m.multihead_only and inp.num_heads < 2:
        raise ValueError(f"mistake {m.name!r} needs num_heads >= 2, got {inp.num_heads}")
    return steps.run(m.recipe, inp)


def mistake_steps_softmax(mistake: Mistake | None, scaled_scores: torch.Tensor) -> torch.Tensor:
    """Weights from given scaled scores ``[..., T, T]`` through the mask and softmax steps of
    ``mistake`` (None: the lesson's steps). Section 11's 0-versus-−∞ demo uses this."""
    recipe = mistake.recipe if mistake is not None else Recipe()
    return recipe.softmax(recipe.mask(scaled_scores))


def values_match(got: torch.Tensor, want: torch.Tensor, tol: float) -> bool:
    """True when the flattened tensors have equal length and agree within ``tol``
    (−∞ matches −∞, NaN matches NaN)."""
    got, want = got.flatten().double(), want.flatten().double()
    if got.numel() != want.numel():
        return False
    return bool(torch.isclose(got, want, rtol=0.0, atol=tol, equal_nan=True).all())


def _slice(t: torch.Tensor, prompt: int, head: int, row: int | None) -> torch.Tensor | None:
    if t.dim() == 0 or prompt >= t.size(0):
        return None
    part: torch.Tensor | None = t[prompt]
    if part is not None and part.dim() == 3:  # [n_head, T, ...]
        part = part[head] if head < part.size(0) else None
    if part is not None and row is not None:
        part = part[row] if part.dim() >= 1 and row < part.size(0) else None
    return part


_TABLES: list[
    tuple[MistakeInput, tuple[dict[str, torch.Tensor], dict[str, dict[str, torch.Tensor]]]]
] = []


@functools.cache
def _default_input() -> MistakeInput:
    return lesson_input()


def _tables(
    inp: MistakeInput,
) -> tuple[dict[str, torch.Tensor], dict[str, dict[str, torch.Tensor]]]:
    """The right stages and every applicable mistake's stages of ``inp``, computed once per
    input object (a knowledge check asks about the same example many times)."""
    for seen, tables in _TABLES:
        if seen is inp:
            return tables
    wrong = {m.name: mistake_stages(m, inp) for m in CATALOGUE
             if not (m.multihead_only and inp.num_heads < 2)}  # fmt: skip
    tables = (correct_stages(inp), wrong)
    _TABLES[:] = [*_TABLES[-7:], (inp, tables)]
    return tables


def diagnose(
    stage: str,
    values: list[float],
    *,
    prompt: int | str = 0,
    row: int | None = None,
    head: int = 0,
    tol: float = 0.0005 + 1e-6,
    inp: MistakeInput | None = None,
) -> list[Mistake]:
    """The catalogue mistakes that reproduce ``values`` for one stage.

    Args:
        stage: a stage name from :data:`CHECK_STAGES` (``"weights"``, ``"output"``...).
        values: the learner's numbers, flattened (a row, or the whole ``[T, ...]`` table when
            ``row`` is None).
        prompt: ``"A"``, ``"B"`` or a batch index (:func:`attnlab.example.prompt_index`).
        row: the query row / token position, or None for the whole table.
        head: the head, when ``inp`` has several.
        tol: absolute tolerance (default: answers rounded to three decimals).
        inp: the input (default :func:`lesson_input`).

    Returns:
        Matching mistakes in catalogue order; empty when the values are right (a mistake whose
        numbers equal the right ones here explains nothing) or when none matches.

    Example::

        >>> [m.name for m in diagnose("weights", [0.55, 0.45], prompt="A", row=0)]
        ['no_mask', 'mask_inverted']
        >>> diagnose("weights", [1.0, 0.0], prompt="A", row=0)  # right: nothing to explain
        []
    """
    inp = _default_input() if inp is None else inp
    b = example.prompt_index(prompt, inp.x.size(0))
    want = torch.tensor([float(v) for v in values], dtype=torch.float64)
    right_stages, wrong_stages = _tables(inp)
    right = _slice(right_stages.get(stage, torch.empty(0)), b, head, row)
    if right is not None and values_match(want, right, tol):
        return []
    found = []
    for m in CATALOGUE:
        if m.name not in wrong_stages:
            continue
        got = _slice(wrong_stages[m.name].get(stage, torch.empty(0)), b, head, row)
        if got is None or (right is not None and values_match(got, right, 1e-9)):
            continue
        if values_match(want, got, tol):
            found.append(m)
    return found


def decimals_tolerance(texts: list[str]) -> float:
    """Tolerance from a learner's rounding: the most decimals written, ``d``, gives
    ``0.5·10⁻ᵈ`` plus a little float slack (three decimals → ±0.0005)."""
    most = max((len(t.split(".", 1)[1]) if "." in t else 0 for t in texts), default=0)
    return 0.5 * 10.0 ** (-most) + 1e-6
