"""Say where a learner's forward first departs from the reference, and what the code does there.

:func:`describe` names what the learner's tensor at the first differing stage
(:class:`~attnlab.audit.stages.Located`) is, by checking it against what the code could have
computed instead (another projection, the heads summed, a merge without transpose, W_O applied
twice, the input added back...); it names nothing it did not check. :func:`stage_text` writes
the stage, the item, both values and the learner's line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from attnlab.audit.context import Side
from attnlab.audit.observe import close
from attnlab.text.fmt import compact_shape, fixed, shape_text, vec

if TYPE_CHECKING:
    from attnlab.audit.stage_seen import Seen
    from attnlab.audit.stages import Located

#: What each stage is, as the report names it: (zh, en).
LABEL: dict[str, tuple[str, str]] = {
    "q": ("q = x @ W_Q", "q = x @ W_Q"),
    "k": ("k = x @ W_K", "k = x @ W_K"),
    "v": ("v = x @ W_V", "v = x @ W_V"),
    "raw_scores": ("原始分数 q @ kᵀ", "the raw scores q @ kᵀ"),
    "scaled_scores": ("缩放后的分数", "the scaled scores"),
    "masked_scores": ("掩码后的分数", "the masked scores"),
    "weights": ("Attention Weights", "the attention weights"),
    "head_outputs": ("各 Head 的输出 weights @ v", "the heads' outputs weights @ v"),
    "concat": ("各 Head 的拼接", "the heads' concatenation"),
    "projection": ("输出投影 concat @ W_O", "the output projection concat @ W_O"),
}
_ROLE = {"q": ("Query", "query"), "k": ("Key", "key"), "v": ("Value", "value")}


def _text(zh: str, en: str) -> dict[str, str]:
    return {"zh": zh, "en": en}


def _cols(t: torch.Tensor) -> torch.Tensor:
    from attnlab.audit.stages import columns

    return columns(t if t.dim() == 4 else t.unsqueeze(1))


def _projection(at: Located, side: Side) -> dict[str, str] | None:
    """Which projection of x the learner's q, k or v is, when it is not its own."""
    from attnlab.audit.stages import match_columns

    assert side.ref is not None
    got = _cols(at.got)
    for name in ("q", "k", "v"):
        if name != at.stage and match_columns(got, _cols(side.ref[name].double())) is not None:
            zh_role, en_role = _ROLE[at.stage]
            return _text(
                f"你的 {at.stage} 等于 x @ W_{name.upper()}：{zh_role} 是用 "
                f"{_ROLE[name][0]} 投影算的",
                f"your {at.stage} equals x @ W_{name.upper()}: the {en_role}s are computed with "
                f"the {_ROLE[name][1]} projection",
            )
    if split_without_transpose(at, side):
        H, d = at.got.size(1), at.got.size(3)
        return _text(
            f"你的 {at.stage} 是 x @ W_{at.stage.upper()} 直接 view/reshape 成 [B,{H},T,{d}]，"
            "没有 transpose：Token 与特征被打乱；应写 .view(B, T, n_head, d_head).transpose(1, 2)",
            f"your {at.stage} is x @ W_{at.stage.upper()} viewed/reshaped straight to "
            f"[B, {H}, T, {d}] without a transpose, which scrambles tokens and features; write "
            ".view(B, T, n_head, d_head).transpose(1, 2)",
        )
    x = side.run.x.double().reshape(-1, side.run.x.size(-1))
    if match_columns(got, x) is not None:
        return _text(
            f"你的 {at.stage} 就是 x 本身：没有做投影",
            f"your {at.stage} is x itself: no projection",
        )
    return None


def split_without_transpose(at: Located, side: Side) -> bool:
    """The learner's per-head q, k or v is the whole projection ``[B, T, C]`` viewed straight
    as ``[B, n_head, T, d_head]``."""
    if side.ref is None or at.stage not in ("q", "k", "v") or at.got.dim() != 4:
        return False
    full = side.ref[at.stage].double()  # [B, n_head, T, d_head] (or [B, T, d_head])
    if full.dim() != 4 or full.size(1) == 1:
        return False
    merged = full.transpose(1, 2).reshape(full.size(0), full.size(2), -1)  # [B, T, C]
    return close(at.got, merged.reshape(at.got.shape))


def _merge(at: Located, seen: dict[str, Seen], side: Side) -> dict[str, str] | None:
    """What the learner's concatenation is, made from its own heads' outputs."""
    from attnlab.audit.stages import match_columns

    if "head_outputs" not in seen:
        return None
    heads = seen["head_outputs"].t  # [B, n_head, T, d_head]
    B, H, T, d = heads.shape
    got = at.got
    if got.shape == (B, T, d) and close(got, heads.sum(1)):
        return _text(
            f"你的拼接 {shape_text(got.shape)} 是各 Head 输出沿 Head 轴的和：应沿特征轴拼接成 "
            f"[B,T,{H * d}]（y.transpose(1, 2).reshape(B, T, C)）",
            f"your concatenation {shape_text(got.shape)} is the heads' outputs summed over the "
            f"head axis; they must be concatenated along the features into [B, T, {H * d}] "
            "(y.transpose(1, 2).reshape(B, T, C))",
        )
    if got.shape == (B, T, d) and close(got, heads.mean(1)):
        return _text(
            f"你的拼接 {shape_text(got.shape)} 是各 Head 输出的平均：应沿特征轴拼接",
            f"your concatenation {shape_text(got.shape)} is the heads' outputs averaged; they "
            "must be concatenated along the features",
        )
    if got.numel() != heads.numel():
        return None
    if close(got, heads.reshape(got.shape)):
        cats = [c for c in side.run.rec.of("cat") if isinstance(c.out, torch.Tensor)]
        if any(c.out.numel() == got.numel() and close(c.out.reshape(got.shape), got) for c in cats):
            return _text(
                "各 Head 沿时间轴拼接（torch.cat(..., dim=1)）再 view 回 [B,T,C]：应写 "
                "torch.cat(heads, dim=-1)",
                "the heads are concatenated along the time axis (torch.cat(..., dim=1)) and "
                "viewed back as [B, T, C]; write torch.cat(heads, dim=-1)",
            )
        return _text(
            f"各 Head 的输出 [B,{H},T,{d}] 没有先 transpose(1, 2) 就被 view/reshape 成 [B,T,C]："
            "每一行混入了同一个 Head 的不同位置；应写 y.transpose(1, 2).contiguous().view(B, T, C)",
            f"the heads' outputs [B, {H}, T, {d}] are viewed/reshaped to [B, T, C] without "
            "transpose(1, 2) first, so a row mixes positions of one head; write "
            "y.transpose(1, 2).contiguous().view(B, T, C)",
        )
    if got.dim() == 3 and match_columns(_cols(got), _cols(heads)) is not None:
        return _text(
            "拼接里是各 Head 的输出，但放在了与拆分时不同的列：拆分与合并的 Head/特征顺序不一致，"
            "W_O 在错误的行上读到每个特征",
            "the concatenation holds the heads' outputs, but in other columns than the split took "
            "their features from: split and merge order heads/features differently, so W_O meets "
            "each feature in the wrong row",
        )
    return None


def _out_layer(seen: dict[str, Seen], side: Side) -> dict[str, str] | None:
    """Which of the module's matrices the output layer holds, when it is not W_O."""
    if "out_layer" not in seen or side.inp is None:
        return None
    w = seen["out_layer"].t
    inp = side.inp
    for name, m in (("Q", inp.w_q), ("K", inp.w_k), ("V", inp.w_v)):
        if close(w, m):
            return _text(
                f"你的输出层用的是 W_{name} 这一层（也用作 {name} 投影），不是 W_O",
                f"your output layer is the layer holding W_{name} (used as the {name} "
                "projection too), not W_O",
            )
    return None


def _after(at: Located, seen: dict[str, Seen], side: Side) -> dict[str, str] | None:
    """What the code does to the output after the last stage that agrees."""
    out, want = at.got, at.want
    if out.shape != want.shape:
        return None
    x = side.run.x.double()
    if x.shape == out.shape and close(out, want + x):
        return _text(
            "输出 = 参考输出 + x：加回了输入（残差连接属于 Transformer Block，不属于注意力本身）",
            "the output is the reference's plus x: the input is added back (the residual "
            "connection belongs to the transformer block, not to attention)",
        )
    if "out_layer" in seen and close(out, want @ seen["out_layer"].t):
        at.item = 8  # W_O's own item: the projection is part of it
        return _text(
            "输出层被用了两次：输出 = (concat @ W_O) @ W_O",
            "the output layer is applied twice: output = (concat @ W_O) @ W_O",
        )
    return None


def describe(at: Located, seen: dict[str, Seen], side: Side, kind: str) -> dict[str, str] | None:
    """What the learner's code computes at ``at``, when a check names it; else None."""
    if at.stage in ("q", "k", "v"):
        return _projection(at, side)
    flipped = at.got.shape == at.want.shape and close(at.got, at.want.transpose(-2, -1))
    if at.stage == "raw_scores" and flipped:
        return _text("分数表被转置了：算成了 k @ qᵀ", "the score table is transposed: k @ qᵀ")
    if at.stage == "head_outputs" and "weights" in seen and side.ref is not None:
        k = side.ref["k"].double()
        k = k.unsqueeze(1) if k.dim() == 3 else k
        if at.got.shape == at.want.shape and close(at.got, seen["weights"].t @ k):
            return _text(
                "算成了 weights @ k，应为 weights @ v", "it is weights @ k, not weights @ v"
            )
    if at.stage == "concat":
        return _merge(at, seen, side)
    if at.stage == "projection":
        return _out_layer(seen, side)
    if at.stage == "after":
        return _after(at, seen, side)
    return None


def _values(at: Located) -> tuple[str, str, str]:
    """(where, got, want): the row of the largest difference; when both rows print alike, the
    single number at the index where they differ most, to six places."""
    name = "output" if at.stage == "after" else at.stage
    if at.got.shape != at.want.shape:
        return name, shape_text(at.got.shape), shape_text(at.want.shape)
    row = at.index[:-1]
    got, want = vec(at.got[row], 3, fixed), vec(at.want[row], 3, fixed)
    if got == want:
        i = at.index
        return f"{name}{compact_shape(i)}", fixed(float(at.got[i]), 6), fixed(float(at.want[i]), 6)
    return f"{name}{compact_shape(row)}", got, want


def stage_where(at: Located) -> tuple[str, str]:
    """The input the stages were compared on (zh, en)."""
    if at.lesson:
        return "课程例子", "the lesson example"
    shape = shape_text(at.shape)
    return f"形状为 {shape} 的随机 x", f"a random x of shape {shape}"


def stage_text(at: Located, side: Side) -> dict[str, str]:
    """The first differing stage for the report: stage, item, input, both values, line and
    what the code does there; for ``"after"``, the stages that agree and what follows them."""
    where_zh, where_en = stage_where(at)
    name, got, want = _values(at)
    line_zh = f"（第 {at.line} 行）" if at.line is not None else ""
    line_en = f" (line {at.line})" if at.line is not None else ""
    what_zh = f"：{at.what['zh']}" if at.what else ""
    what_en = f": {at.what['en']}" if at.what else ""
    if at.stage != "after":
        zh_label, en_label = LABEL[at.stage]
        if at.hidden:
            hidden_zh = "、".join(LABEL[n][0] for n in at.hidden)
            what_zh += f"（之前的{hidden_zh}看不到，差别可能从那里开始）"
            what_en += (
                f" (the stages before it, {', '.join(LABEL[n][1] for n in at.hidden)}, could not "
                "be seen: the difference may start there)"
            )
        return _text(
            f"第一个与参考不同的步骤是 {zh_label}{line_zh}：在{where_zh}上 {name} = {got}，参考为 "
            f"{want}{what_zh}",
            f"the first stage that differs from the reference is {en_label}{line_en}: on "
            f"{where_en} {name} = {got}, the reference gives {want}{what_en}",
        )
    if not at.compared:
        return _text(
            f"审计器看不到 forward 的中间步骤，只能比较输出{what_zh}",
            f"the auditor could not see any stage of your forward, only its output{what_en}",
        )
    zh_seen = "、".join(LABEL[n][0] for n in at.compared if n in LABEL)
    en_seen = ", ".join(LABEL[n][1] for n in at.compared if n in LABEL)
    last_zh, last_en = LABEL[at.compared[-1]]
    return _text(
        f"能看到的步骤（{zh_seen}）都与参考一致；差别出现在 {last_zh} 之后{line_zh}"
        f"{what_zh or '：之后的代码改变了输出'}",
        f"the stages the auditor could see ({en_seen}) all agree with the reference; the "
        f"difference comes after {last_en}{line_en}"
        f"{what_en or ': code after it changes the output'}",
    )
