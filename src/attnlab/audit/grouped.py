"""Grouped key/value heads (LLaMA's ``n_kv_heads``, Hugging Face's ``num_key_value_heads``).

The audit proper builds such a module with as many K/V heads as query heads, where it is the
lesson's multi-head attention. When the constructor (or its config) takes a K/V head count,
one more build has fewer: :data:`SIZES` (C = 24, 6 heads, 2 K/V heads, head size 4: a group
of 3, so that repeating by the K/V head count instead of the group size shows). Its ``W_K``
and ``W_V`` then give 2 heads' worth of features, and each K/V head serves a group of query
heads (``repeat_kv``). With random weights loaded, its output must equal the lesson's
multi-head reference whose heads read the K and V of their group: head h reads K/V head
``h // 3`` (LLaMA's ``repeat_kv``, ``repeat_interleave``) or ``h % 2`` (a ``repeat`` that
tiles; both pair query heads with K/V heads consistently). Otherwise checklist item 8 (the
heads) fails with the values; a build the module refuses leaves the check NOT CHECKED, with
why. Judge side: nothing of the learner's is imported.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import torch

from attnlab.audit.layers import Projection, projections, set_weight, zero_bias
from attnlab.audit.loader import LearnerError
from attnlab.audit.names import role_of_path
from attnlab.audit.observe import close, first_diff
from attnlab.audit.param_names import KV_HEADS
from attnlab.core.steps import MistakeInput
from attnlab.mistakes import diagnosis

#: (C, heads, T, K/V heads) of the grouped build.
SIZES = (24, 6, 8, 2)
#: (B, T, seed) of its input.
INPUT = (2, 6, 31)


def _entry(status: str, zh: str, en: str) -> dict[str, Any]:
    return {"status": status, "finding": "grouped_kv", "evidence": {"zh": zh, "en": en}}


def _layers(module: torch.nn.Module, C: int, kv_width: int) -> dict[str, Projection] | None:
    """The q, k, v and output layers by their names' roles: q ``C → C``, k and v
    ``C → kv_width``, the output ``C → C``; None when the module keeps them otherwise."""
    found: dict[str, list[Projection]] = {"q": [], "k": [], "v": [], "o": []}
    for name, layer in projections(module):
        role = role_of_path(name)
        if role in found:
            found[role].append(layer)
    if any(len(v) != 1 for v in found.values()):
        return None
    got = {r: v[0] for r, v in found.items()}
    shapes = {r: (m.in_features, m.out_features) for r, m in got.items()}
    want = {"q": (C, C), "k": (C, kv_width), "v": (C, kv_width), "o": (C, C)}
    return got if shapes == want else None


def _takes_kv(built: str, kind: str) -> bool:
    names = "|".join(sorted(KV_HEADS, key=len, reverse=True))
    return kind == "multihead" and bool(re.search(rf"\b(?:{names})=", built, re.IGNORECASE))


def skipped(built: str, kind: str) -> dict[str, Any] | None:
    """NOT CHECKED for a module that takes a K/V head count but already differs from the
    reference with as many K/V heads as heads; None when it takes none."""
    if not _takes_kv(built, kind):
        return None
    return _entry(
        "NOT CHECKED",
        "分组 K/V 头没有检查：K/V 头与头数相同时输出已经与参考不同（见上面各项）",
        "the grouped K/V heads were not checked: with as many K/V heads as heads the output "
        "already differs from the reference (see the items above)",
    )


def check(target: Any, built: str, path: Path, kind: str) -> dict[str, Any] | None:
    """The grouped K/V heads' check, or None when the module takes no K/V head count.

    Args:
        target: the learner's class, as the judge knows it.
        built: the call that built it at the random inputs' sizes (its keywords tell whether a
            K/V head count was set).
        path: the learner's file.
        kind: the audit's kind (only a multi-head has K/V heads).
    """
    from attnlab.audit.remote import build, forward

    if not _takes_kv(built, kind):
        return None
    C, H, _, KV = SIZES
    D, rep = C // H, H // KV
    sizes = {
        "zh": f"C = {C}，{H} 个头，{KV} 个 K/V 头",
        "en": f"C = {C}, {H} heads, {KV} K/V heads",
    }
    try:
        module = build(target, kind, SIZES, path, seed=0)
    except LearnerError as err:
        return _entry(
            "NOT CHECKED",
            f"分组 K/V 头没有检查：以 {sizes['zh']} 构造时出错：{err.zh}",
            f"the grouped K/V heads were not checked: building with {sizes['en']} failed: {err.en}",
        )
    call = target.built.get(SIZES) or ""
    shown = {"zh": f"{call}（{sizes['zh']}）", "en": f"{call} ({sizes['en']})"}
    layers = _layers(module, C, KV * D)
    if layers is None:
        widths = [f"{n} {m.in_features}→{m.out_features}" for n, m in projections(module)]
        if any(m.out_features == C for n, m in projections(module) if role_of_path(n) == "k"):
            return None  # it takes the count but keeps C features of keys: no groups
        return _entry(
            "NOT CHECKED",
            f"分组 K/V 头没有检查：以 {shown['zh']}构造后，找不到 q、k、v、输出投影各一层"
            f"（k、v 应为 {C}→{KV * D}）：{', '.join(widths)}",
            f"the grouped K/V heads were not checked: built with {shown['en']}, its layers are not "
            f"one q, k, v and output projection each (k and v {C}→{KV * D}): {', '.join(widths)}",
        )
    gen = torch.Generator().manual_seed(INPUT[2])
    w_q, w_o = torch.randn(C, C, generator=gen) * 0.5, torch.randn(C, C, generator=gen) * 0.5
    w_k = torch.randn(C, KV * D, generator=gen) * 0.5
    w_v = torch.randn(C, KV * D, generator=gen) * 0.5
    with torch.no_grad():
        for role, w in zip("qkvo", (w_q, w_k, w_v, w_o), strict=True):
            set_weight(layers[role], w)
        zero_bias(list(layers.values()))
    x = torch.randn(INPUT[0], INPUT[1], C, generator=gen)  # [B, T, C]
    try:
        out = forward(module, x, path).out
    except LearnerError as err:
        return _entry(
            "FAIL",
            f"以 {shown['zh']}构造的模块在 forward 时出错（K/V 头的重复？）：{err.zh}",
            f"built with {shown['en']}, the module's forward failed (the repeat of K/V heads?): "
            f"{err.en}",
        )

    def reference(group: list[int]) -> torch.Tensor:
        k = torch.cat([w_k[:, g * D : (g + 1) * D] for g in group], dim=1)  # [C, C]
        v = torch.cat([w_v[:, g * D : (g + 1) * D] for g in group], dim=1)
        inp = MistakeInput(x.double(), w_q.double(), k.double(), v.double(), H, w_o.double())
        return diagnosis.correct_stages(inp)["output"]

    blocks = [h // rep for h in range(H)]  # repeat_kv: heads 0, 1 read K/V head 0
    tiles = [h % KV for h in range(H)]  # a tiling repeat: heads 0, 2 read K/V head 0
    for group, zh_how, en_how in (
        (blocks, "相邻的 Query 头共用一个 K/V 头", "neighbouring query heads share a K/V head"),
        (tiles, "Query 头轮流使用各个 K/V 头", "query heads take the K/V heads in turn"),
    ):
        if close(out, reference(group)):
            pairs = ", ".join(f"{h}→{g}" for h, g in enumerate(group))
            return _entry(
                "PASS",
                f"以 {shown['zh']}构造，{zh_how}（Query 头→K/V 头：{pairs}）：载入随机权重后输出"
                f"与共用 K/V 的多头参考一致",
                f"built with {shown['en']}, {en_how} (query head → K/V head: {pairs}): with random "
                f"weights loaded, the output equals the multi-head reference with shared K/V",
            )
    want = reference(blocks)
    if out.shape != want.shape:
        got = f"{list(out.shape)}"
        return _entry(
            "FAIL",
            f"以 {shown['zh']}构造，输出形状为 {got}，应为 {list(want.shape)}：K/V 头的重复"
            f"（repeat_kv）沿了错误的轴？",
            f"built with {shown['en']}, the output has shape {got}, expected {list(want.shape)}: "
            f"the K/V heads repeated along the wrong axis (repeat_kv)?",
        )
    i = first_diff(out, want)
    at = "output[" + ",".join(map(str, i)) + "]"
    return _entry(
        "FAIL",
        f"以 {shown['zh']}构造，{at} = {float(out[i]):.3f}，而 Query 头共用其组 K/V 头的参考为 "
        f"{float(want[i]):.3f}：K/V 头的重复（repeat_kv）沿了错误的轴，或 Query 头读错了组",
        f"built with {shown['en']}, {at} = {float(out[i]):.3f} where the reference, each "
        f"query head reading its group's K/V head, gives {float(want[i]):.3f}: the K/V heads "
        f"are repeated along the wrong axis (repeat_kv), or query heads read the wrong group",
    )
