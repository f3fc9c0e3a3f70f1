"""Checklist items 1-4 of the lesson's section 18: X, the Q/K/V projections, the scores and
their scale, judged on an :class:`~attnlab.audit.context.Audit` (see
:mod:`attnlab.audit.items`)."""

from __future__ import annotations

import math

import torch

from attnlab.audit.context import Audit
from attnlab.audit.observe import as_heads, close, first_diff
from attnlab.audit.verdict import FAIL, NOT_CHECKED, PASS, Verdict, heads_idx
from attnlab.text.fmt import fixed, shape_text, vec


def item_1(a: Audit) -> Verdict:
    s = a.lesson.run
    shape = shape_text(s.out.shape)
    return Verdict(
        PASS,
        {
            "zh": f"输入课程的 X {shape_text(s.x.shape)}（浮点向量），模块接受并输出 {shape}",
            "en": f"fed the lesson's X {shape_text(s.x.shape)} (float vectors); the module took it "
            f"and returned {shape}",
        },
    )


def _shared_heads(a: Audit) -> Verdict | None:
    """A multi-head needs 3·C² query/key/value weights of its own; fewer means its heads share
    one set (``nn.ModuleList([head] * n)`` repeats one module)."""
    C = a.probe.run.x.size(-1)
    have = sum(p.numel() for p in a.probe.module.parameters() if p.dim() >= 2)
    need = 3 * C * C
    if a.kind != "multihead" or have >= need:
        return None
    return Verdict(
        FAIL,
        {
            "zh": f"模块的权重矩阵共有 {have} 个数，{a.num_heads} 个 Head 的 Q/K/V 投影至少需要 "
            f"3·{C}·{C} = {need} 个：各 Head 共用同一组权重（nn.ModuleList([head] * n) 重复的是同"
            "一个模块；每个 Head 都要新建）",
            "en": f"the module's weight matrices hold {have} numbers; the Q/K/V projections of "
            f"{a.num_heads} heads need at least 3·{C}·{C} = {need}: its heads share one set of "
            "weights (nn.ModuleList([head] * n) repeats one module; build a new head for each)",
        },
    )


def _roles(a: Audit) -> Verdict | None:
    """The forward uses a layer in another role than its name says."""
    if a.roles_used is None or a.probe.layout is None or a.probe.layout.roles is None:
        return None
    named = a.probe.layout.roles
    moved = [(used, role) for used, role, name in zip(a.roles_used, "qkv", named, strict=True)
             if used != name]  # fmt: skip
    words = {"q": ("query", "Query"), "k": ("key", "Key"), "v": ("value", "Value")}
    en = ", ".join(f"{used} as the {words[role][0]}" for used, role in moved)
    zh = "，".join(f"把 {used} 当作 {words[role][1]}" for used, role in moved)
    return Verdict(
        FAIL,
        {
            "zh": f"你的 forward {zh}：按 forward 实际的用法读权重，输出才与参考一致",
            "en": f"your forward uses {en}: read with the roles your forward gives them, the "
            "output equals the reference",
        },
    )


def item_2(a: Audit) -> Verdict | None:
    shared = _shared_heads(a) or _roles(a)
    if shared is not None:
        return shared
    if all(s.layout is None for s in a.sides):
        return Verdict(
            NOT_CHECKED,
            {
                "zh": "找不到 query/key/value 投影层，只做黑盒检查",
                "en": "no query/key/value projections found: black-box checks only",
            },
        )
    if a.kind == "head" and a.probe.run.out.shape[-1] != a.width and not a.returns_weights:
        got = shape_text(a.probe.run.out.shape)
        return Verdict(
            FAIL,
            {
                "zh": f"输出应为 [B,T,d_head] = [3,5,{a.width}]，实际 {got}",
                "en": f"the output should be [B, T, d_head] = [3, 5, {a.width}], got {got}",
            },
        )
    return _projections_seen(a)


def _projections_seen(a: Audit) -> Verdict | None:
    """PASS when the recorded ``F.linear`` outputs on the lesson example are the lesson's Q, K
    and V (also as thirds of one fused output)."""
    side = a.lesson
    if side.ref is None:
        return None
    want = {n: merge(side.ref[n]) for n in ("q", "k", "v")}  # each [B, T, width]
    outs = [c.out for c in side.run.rec.of("linear") if isinstance(c.out, torch.Tensor)]
    pieces = [p for o in outs if o.dim() == 3 for p in _thirds(o, want["q"].size(-1))]
    if not all(_seen(side.ref[n], pieces) for n in want):
        return None
    qt, kt, vt = (vec(t, 3, fixed) for t in (want["q"][0, 1], want["k"][0, 0], want["v"][1, 0]))
    whose_zh, whose_en = ("课程", "the lesson's") if a.kind == "head" else ("参考", "the reference")
    return Verdict(
        PASS,
        {
            "zh": f"投影层给出{whose_zh}的 Q、K、V：q[0,1] = {qt}，k[0,0] = {kt}，v[1,0] = {vt}",
            "en": f"the projections give {whose_en} Q, K, V: q[0,1] = {qt}, k[0,0] = {kt}, v[1,0] "
            f"= {vt}",
        },
    )


def _seen(ref: torch.Tensor, pieces: list[torch.Tensor]) -> bool:
    """``ref`` (``[B, T, d]`` or ``[B, n_head, T, d]``) is among the recorded outputs, whole or
    one head per output (a per-head ``nn.Linear``)."""
    if any(close(p, merge(ref)) for p in pieces):
        return True
    heads = ref.unbind(1) if ref.dim() == 4 else []
    return bool(heads) and all(any(close(p, h) for p in pieces) for h in heads)


def merge(t: torch.Tensor) -> torch.Tensor:
    """``[B, n_head, T, d]`` → ``[B, T, n_head·d]``; ``[B, T, d]`` unchanged."""
    return t.transpose(1, 2).flatten(2) if t.dim() == 4 else t


def _thirds(out: torch.Tensor, width: int) -> list[torch.Tensor]:
    return list(out.split(width, dim=-1)) if out.size(-1) == 3 * width else [out]


def item_3(a: Audit) -> Verdict | None:
    s = a.lesson
    raw = s.run.raw_scores()
    if s.ref is None or raw is None:
        return None
    want = as_heads(s.ref["raw_scores"])
    if close(raw, want):
        i = first_diff(torch.zeros_like(want), want)
        return Verdict(
            PASS,
            {
                "zh": f"raw_scores{heads_idx(want, i)} = {fixed(float(raw[i]))}，与课程一致",
                "en": f"raw_scores{heads_idx(want, i)} = {fixed(float(raw[i]))}, as in the lesson",
            },
        )
    if close(raw, want.transpose(-2, -1)):
        return Verdict(
            FAIL,
            {
                "zh": "观察到的分数表是课程分数表的转置：raw_scores[0,0,1] = "
                f"{fixed(float(raw[0, 0, 0, 1]))}，课程为 {fixed(float(want[0, 0, 0, 1]))}",
                "en": "the observed score table is the lesson's transposed: raw_scores[0,0,1] = "
                f"{fixed(float(raw[0, 0, 0, 1]))}, lesson {fixed(float(want[0, 0, 0, 1]))}",
            },
            ["swapped_qk", "scores_transposed"],
        )
    return None


_SCALES = {"none": "no_scale", "d": "scale_by_d_k", "sqrt_c": "scale_by_sqrt_c"}


def item_4(a: Audit) -> Verdict | None:
    run = a.probe.run
    C, d = a.probe.run.x.size(-1), a.width // a.num_heads if a.kind == "multihead" else a.width
    sizes = _sizes(a, C, d)
    for call in run.sdpa():
        scale = call.kwargs.get("scale")
        if scale is None or math.isclose(scale, 1 / math.sqrt(d), rel_tol=1e-3):
            return Verdict(
                PASS,
                {
                    "zh": "scaled_dot_product_attention 使用 1/√d_head = "
                    f"{fixed(1 / math.sqrt(d))}（{sizes['zh']}）",
                    "en": "scaled_dot_product_attention scales by 1/√d_head = "
                    f"{fixed(1 / math.sqrt(d))} ({sizes['en']})",
                },
            )
        return _scale_fail(float(scale), C, d, sizes)
    raw, inp = run.raw_scores(), run.softmax_inputs()
    if raw is None or inp is None or raw.shape != inp.shape:
        return None
    keep = torch.tril(torch.ones(run.T, run.T, dtype=torch.bool)) & (raw.abs() > 1e-3)
    ratios = (inp[keep] / raw[keep]).double()
    if ratios.numel() == 0 or (ratios.max() - ratios.min()).abs() > 1e-3:
        return None
    ratio = float(ratios.mean())
    if math.isclose(ratio, 1 / math.sqrt(d), rel_tol=1e-3) or a.matches_ref:
        # With the output equal to the reference, a ratio of 1 means Q and K were scaled
        # before their product (q·d^-¼, k·d^-¼): also right.
        return Verdict(
            PASS,
            {
                "zh": f"Softmax 输入 ÷ 原始分数 = {fixed(ratio)} = 1/√d_head（{sizes['zh']}）",
                "en": f"softmax input ÷ raw score = {fixed(ratio)} = 1/√d_head ({sizes['en']})",
            },
        )
    return _scale_fail(ratio, C, d, sizes)


def _sizes(a: Audit, C: int, d: int) -> dict[str, str]:
    """The sizes the scale is measured at (the random inputs' build), as the report's "for the
    random inputs" line shows them: ``d_head = 12 ÷ 3 = 4`` for a multi-head."""
    if a.kind == "multihead":
        return {
            "zh": f"随机输入的构造：d_head = C ÷ 头数 = {C} ÷ {a.num_heads} = {d}",
            "en": f"the random inputs' build: d_head = C / heads = {C} / {a.num_heads} = {d}",
        }
    return {
        "zh": f"随机输入的构造：d_head = {d}，C = {C}",
        "en": f"the random inputs' build: d_head = {d}, C = {C}",
    }


def _scale_fail(ratio: float, C: int, d: int, sizes: dict[str, str]) -> Verdict:
    named = {1.0: "none", 1 / d: "d", 1 / math.sqrt(C): "sqrt_c"}
    which = [_SCALES[n] for r, n in named.items() if math.isclose(ratio, r, rel_tol=1e-3)]
    return Verdict(
        FAIL,
        {
            "zh": f"分数被乘以 {fixed(ratio)}，应为 1/√d_head = {fixed(1 / math.sqrt(d))}"
            f"（{sizes['zh']}）",
            "en": f"the scores were multiplied by {fixed(ratio)}, should be 1/√d_head = "
            f"{fixed(1 / math.sqrt(d))} ({sizes['en']})",
        },
        which,
    )
