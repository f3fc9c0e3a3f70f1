"""Checklist items 6-10 of the lesson's section 18: the softmax axis, reading the values, the
heads' concat and W_O, batch independence and what the LM head reads (see
:mod:`attnlab.audit.items`)."""

from __future__ import annotations

import torch

from attnlab.audit.axis_check import softmax_verdict
from attnlab.audit.context import Audit
from attnlab.audit.observe import close, first_diff
from attnlab.audit.remote import forward
from attnlab.audit.verdict import FAIL, NOT_CHECKED, PASS, Verdict
from attnlab.text.fmt import compact_shape, fixed, shape_text, vec


def item_6(a: Audit) -> Verdict | None:
    found = softmax_verdict(a)
    if found is not None:
        return found
    run = a.probe.run
    dims = run.softmax_dims()
    if any(d not in (-1, None) for d in dims):
        bad = next(d for d in dims if d not in (-1, None))
        axis = (
            ("Query 轴", "the query axis") if bad == -2 else ("批次/Head 轴", "a batch/head axis")
        )
        return Verdict(
            FAIL,
            {
                "zh": f"softmax 沿 dim={bad}（{axis[0]}）而不是 dim=-1（Key 轴）",
                "en": f"softmax ran over dim={bad} ({axis[1]}), not dim=-1 (the key axis)",
            },
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
            {
                "zh": f"weights 第 {compact_shape(i)} 行之和是 {fixed(float(sums[i]))}，不是 1",
                "en": f"row {compact_shape(i)} of the weights sums to {fixed(float(sums[i]))}, not "
                "1",
            },
        )
    return Verdict(
        PASS,
        {
            "zh": f"Softmax 沿 dim=-1，每个 Query 行之和为 1（最大 |和-1| = {worst:.1e}）",
            "en": f"softmax over dim=-1; every query row sums to 1 (max |sum-1| = {worst:.1e})",
        },
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
            {
                "zh": f"output = weights @ V：output[1,{row[1]}] = {vec(out[row], 3, fixed)}",
                "en": f"output = weights @ V: output[1,{row[1]}] = {vec(out[row], 3, fixed)}",
            },
        )
    if close(out, w @ side.ref["k"]):
        return Verdict(
            FAIL,
            {
                "zh": f"output[1,{row[1]}] = {vec(out[row], 3, fixed)} 等于 weights @ K，应为 "
                f"weights @ V = {vec((w @ side.ref['v'])[row], 3, fixed)}",
                "en": f"output[1,{row[1]}] = {vec(out[row], 3, fixed)} equals weights @ K; it "
                f"should be weights @ V = {vec((w @ side.ref['v'])[row], 3, fixed)}",
            },
            ["weights_times_keys"],
        )
    return None


def item_8(a: Audit) -> Verdict | None:
    if a.kind == "head":
        return Verdict(
            NOT_CHECKED,
            {
                "zh": "单个 Head 没有拼接与 W_O（用 --kind multihead 审计多头）",
                "en": "a single head has no concat or W_O (audit a multi-head with --kind "
                "multihead)",
            },
        )
    out = a.probe.run.out
    want = [*a.probe.run.x.shape]
    if list(out.shape) != want and not a.returns_weights:
        return Verdict(
            FAIL,
            {
                "zh": f"输出应为 [B,T,C] = {shape_text(want)}，实际 {shape_text(out.shape)}",
                "en": f"the output should be [B, T, C] = {shape_text(want)}, got "
                f"{shape_text(out.shape)}",
            },
        )
    side = a.probe
    no_w_o = side.inp is not None and side.inp.w_o is None
    if no_w_o and side.ref is not None and close(out, side.ref["concat"]):
        return Verdict(
            FAIL,
            {
                "zh": "找不到输出投影 nn.Linear(C, C)，输出就是各 Head 的拼接",
                "en": "found no output projection nn.Linear(C, C): the output is the concatenated "
                "heads",
            },
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
                {
                    "zh": f"只改变批次第 1 行，output{compact_shape(i)} 却变了：批次行互相读取",
                    "en": f"changing only batch row 1 changed output{compact_shape(i)}: batch rows "
                    "read each other",
                },
            )
    return Verdict(
        PASS,
        {
            "zh": "只改变批次第 1 行，第 0、2 行的输出完全不变",
            "en": "changing only batch row 1 left the outputs of rows 0 and 2 unchanged",
        },
    )


def item_10(a: Audit) -> Verdict:
    if a.returns_weights:
        return Verdict(
            FAIL,
            {
                "zh": f"模块交出的是 Attention Weights {shape_text(a.probe.run.out.shape)}，LM "
                "Head 需要的是特征 weights @ V",
                "en": "the module hands on the attention weights "
                f"{shape_text(a.probe.run.out.shape)}; the LM head needs the features weights @ V",
            },
            ["lm_head_on_weights"],
        )
    shape = shape_text(a.probe.run.out.shape)
    return Verdict(
        PASS,
        {
            "zh": f"模块交出的是特征 {shape}，不是 Attention Weights",
            "en": f"the module hands on features {shape}, not attention weights",
        },
    )
