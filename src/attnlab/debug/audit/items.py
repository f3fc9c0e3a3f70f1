"""The ten checklist items of the lesson's section 18, judged on an :class:`Audit`.

Each ``item_N`` looks at what it can observe directly (recorded softmax, scores, SDPA calls,
re-runs with changed inputs) and returns a :class:`Verdict`, or None when it saw nothing
decisive; :func:`attnlab.debug.audit.judge.judge` then falls back on the end-to-end comparison with
the reference and on the catalogue mistakes that reproduce the learner's output.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from attnlab.debug.audit.context import Audit
from attnlab.debug.audit.mask_check import item_5
from attnlab.debug.audit.observe import as_heads, close, first_diff, forward
from attnlab.debug.audit.verdict import FAIL, NOT_CHECKED, PASS, Verdict, heads_idx
from attnlab.show.fmt import compact_shape, fixed, shape_text, vec


def item_1(a: Audit) -> Verdict:
    s = a.lesson.run
    shape = shape_text(s.out.shape)
    return Verdict(
        PASS,
        f"输入课程的 X {shape_text(s.x.shape)}（浮点向量），模块接受并输出 {shape}",
        f"fed the lesson's X {shape_text(s.x.shape)} (float vectors); the module took it "
        f"and returned {shape}",
    )


def item_2(a: Audit) -> Verdict | None:
    if all(s.layout is None for s in a.sides):
        return Verdict(
            NOT_CHECKED,
            "找不到 query/key/value 投影层，只做黑盒检查",
            "no query/key/value projections found: black-box checks only",
        )
    if a.kind == "head" and a.probe.run.out.shape[-1] != a.width and not _returns_weights(a):
        got = shape_text(a.probe.run.out.shape)
        return Verdict(
            FAIL,
            f"输出应为 [B,T,d_head] = [3,5,{a.width}]，实际 {got}",
            f"the output should be [B, T, d_head] = [3, 5, {a.width}], got {got}",
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
        f"投影层给出{whose_zh}的 Q、K、V：q[0,1] = {qt}，k[0,0] = {kt}，v[1,0] = {vt}",
        f"the projections give {whose_en} Q, K, V: q[0,1] = {qt}, k[0,0] = {kt}, v[1,0] = {vt}",
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
            f"raw_scores{heads_idx(want, i)} = {fixed(float(raw[i]))}，与课程一致",
            f"raw_scores{heads_idx(want, i)} = {fixed(float(raw[i]))}, as in the lesson",
        )
    if close(raw, want.transpose(-2, -1)):
        return Verdict(
            FAIL,
            f"观察到的分数表是课程分数表的转置：raw_scores[0,0,1] = "
            f"{fixed(float(raw[0, 0, 0, 1]))}，课程为 {fixed(float(want[0, 0, 0, 1]))}",
            f"the observed score table is the lesson's transposed: raw_scores[0,0,1] = "
            f"{fixed(float(raw[0, 0, 0, 1]))}, lesson {fixed(float(want[0, 0, 0, 1]))}",
            ["swapped_qk", "scores_transposed"],
        )
    return None


_SCALES = {"none": "no_scale", "d": "scale_by_d_k", "sqrt_c": "scale_by_sqrt_c"}


def item_4(a: Audit) -> Verdict | None:
    run = a.probe.run
    C, d = a.probe.run.x.size(-1), a.width // a.num_heads if a.kind == "multihead" else a.width
    for call in run.sdpa():
        scale = call.kwargs.get("scale")
        if scale is None or math.isclose(scale, 1 / math.sqrt(d), rel_tol=1e-3):
            return Verdict(
                PASS,
                f"scaled_dot_product_attention 使用 1/√d_head = {fixed(1 / math.sqrt(d))}",
                f"scaled_dot_product_attention scales by 1/√d_head = {fixed(1 / math.sqrt(d))}",
            )
        return _scale_fail(float(scale), C, d)
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
            f"Softmax 输入 ÷ 原始分数 = {fixed(ratio)} = 1/√d_head（d_head = {d}）",
            f"softmax input ÷ raw score = {fixed(ratio)} = 1/√d_head (d_head = {d})",
        )
    return _scale_fail(ratio, C, d)


def _scale_fail(ratio: float, C: int, d: int) -> Verdict:
    named = {1.0: "none", 1 / d: "d", 1 / math.sqrt(C): "sqrt_c"}
    which = [_SCALES[n] for r, n in named.items() if math.isclose(ratio, r, rel_tol=1e-3)]
    return Verdict(
        FAIL,
        f"分数被乘以 {fixed(ratio)}，应为 1/√d_head = {fixed(1 / math.sqrt(d))}"
        f"（d_head = {d}, C = {C}）",
        f"the scores were multiplied by {fixed(ratio)}, should be 1/√d_head = "
        f"{fixed(1 / math.sqrt(d))} (d_head = {d}, C = {C})",
        which,
    )


def item_6(a: Audit) -> Verdict | None:
    run = a.probe.run
    dims = run.softmax_dims()
    if any(d not in (-1, None) for d in dims):
        bad = next(d for d in dims if d not in (-1, None))
        axis = (
            ("Query 轴", "the query axis") if bad == -2 else ("批次/Head 轴", "a batch/head axis")
        )
        return Verdict(
            FAIL,
            f"softmax 沿 dim={bad}（{axis[0]}）而不是 dim=-1（Key 轴）",
            f"softmax ran over dim={bad} ({axis[1]}), not dim=-1 (the key axis)",
            ["softmax_query_axis"] if bad == -2 else [],
        )
    w = run.weights()
    if w is None:
        return None
    sums = w.sum(-1)
    sums = sums.masked_fill(sums.isnan(), 1.0)  # a row of nan is item 5's finding (all blocked)
    worst = float((sums - 1).abs().max())
    if worst > 1e-4:
        i = first_diff(sums, torch.ones_like(sums))
        return Verdict(
            FAIL,
            f"weights 第 {compact_shape(i)} 行之和是 {fixed(float(sums[i]))}，不是 1",
            f"row {compact_shape(i)} of the weights sums to {fixed(float(sums[i]))}, not 1",
        )
    return Verdict(
        PASS,
        f"Softmax 沿 dim=-1，每个 Query 行之和为 1（最大 |和-1| = {worst:.1e}）",
        f"softmax over dim=-1; every query row sums to 1 (max |sum-1| = {worst:.1e})",
    )


def item_7(a: Audit) -> Verdict | None:
    """A single head's output against its own observed weights times V (or times K)."""
    side = a.lesson
    seen = side.run.weights()
    if a.kind != "head" or side.ref is None or seen is None or seen.size(1) != 1:
        return None  # multi-head: the reference comparison and the reproductions decide
    out, w = side.run.out, seen[:, 0].double()  # [B, T, d_head], [B, T, T]
    row = (1, side.run.T - 1)
    if close(out, w @ side.ref["v"]):
        return Verdict(
            PASS,
            f"output = weights @ V：output[1,{row[1]}] = {vec(out[row], 3, fixed)}",
            f"output = weights @ V: output[1,{row[1]}] = {vec(out[row], 3, fixed)}",
        )
    if close(out, w @ side.ref["k"]):
        return Verdict(
            FAIL,
            f"output[1,{row[1]}] = {vec(out[row], 3, fixed)} 等于 weights @ K，应为 weights @ V = "
            f"{vec((w @ side.ref['v'])[row], 3, fixed)}",
            f"output[1,{row[1]}] = {vec(out[row], 3, fixed)} equals weights @ K; it should be "
            f"weights @ V = {vec((w @ side.ref['v'])[row], 3, fixed)}",
            ["weights_times_keys"],
        )
    return None


def _returns_weights(a: Audit) -> bool:
    out, w = a.probe.run.out, a.probe.run.weights()
    T = a.probe.run.T
    if out.shape[-1] != T or w is None:
        return False
    return close(as_heads(out) if out.dim() == 3 else out, w) or close(out, w.mean(1))


def item_8(a: Audit) -> Verdict | None:
    if a.kind == "head":
        return Verdict(
            NOT_CHECKED,
            "单个 Head 没有拼接与 W_O（用 --kind multihead 审计多头）",
            "a single head has no concat or W_O (audit a multi-head with --kind multihead)",
        )
    out = a.probe.run.out
    want = [*a.probe.run.x.shape]
    if list(out.shape) != want and not _returns_weights(a):
        return Verdict(
            FAIL,
            f"输出应为 [B,T,C] = {shape_text(want)}，实际 {shape_text(out.shape)}",
            f"the output should be [B, T, C] = {shape_text(want)}, got {shape_text(out.shape)}",
        )
    side = a.probe
    no_w_o = side.inp is not None and side.inp.w_o is None
    if no_w_o and side.ref is not None and close(out, side.ref["concat"]):
        return Verdict(
            FAIL,
            "找不到输出投影 nn.Linear(C, C)，输出就是各 Head 的拼接",
            "found no output projection nn.Linear(C, C): the output is the concatenated heads",
            ["no_output_projection"],
        )
    return None


def item_9(a: Audit) -> Verdict:
    run = a.probe.run
    x3 = run.x.clone()
    x3[1] = torch.randn(x3[1].shape, generator=torch.Generator().manual_seed(13))
    out3 = forward(a.probe.module, x3, a.path).out
    for b in (0, 2):
        if not close(out3[b], run.out[b], 1e-4):
            i = (b, *first_diff(out3[b], run.out[b]))
            return Verdict(
                FAIL,
                f"只改变批次第 1 行，output{compact_shape(i)} 却变了：批次行互相读取",
                f"changing only batch row 1 changed output{compact_shape(i)}: batch rows read "
                "each other",
            )
    return Verdict(
        PASS,
        "只改变批次第 1 行，第 0、2 行的输出完全不变",
        "changing only batch row 1 left the outputs of rows 0 and 2 unchanged",
    )


def item_10(a: Audit) -> Verdict:
    if _returns_weights(a):
        return Verdict(
            FAIL,
            f"模块交出的是 Attention Weights {shape_text(a.probe.run.out.shape)}，"
            "LM Head 需要的是特征 weights @ V",
            f"the module hands on the attention weights {shape_text(a.probe.run.out.shape)}; "
            "the LM head needs the features weights @ V",
            ["lm_head_on_weights"],
        )
    shape = shape_text(a.probe.run.out.shape)
    return Verdict(
        PASS,
        f"模块交出的是特征 {shape}，不是 Attention Weights",
        f"the module hands on features {shape}, not attention weights",
    )


ITEMS: dict[int, Callable[[Audit], Verdict | None]] = {
    1: item_1,
    2: item_2,
    3: item_3,
    4: item_4,
    5: item_5,
    6: item_6,
    7: item_7,
    8: item_8,
    9: item_9,
    10: item_10,
}
