"""Checklist item 5, the causal mask: future weights, SDPA masks, and re-runs with the future
changed (for one prompt only, so that a batch leak is not mistaken for a look-ahead)."""

from __future__ import annotations

import torch

from attnlab.audit.context import Audit
from attnlab.audit.observe import close, first_diff
from attnlab.audit.remote import forward
from attnlab.audit.verdict import FAIL, PASS, Verdict, heads_idx
from attnlab.text.fmt import compact_shape, fixed


def _causality(a: Audit) -> Verdict | None:
    run = a.probe.run
    gen = torch.Generator().manual_seed(11)
    b = 1  # change one prompt only, so that a batch leak (item 9) is not taken for this one
    for t0 in range(1, run.T):
        x2 = run.x.clone()
        x2[b, t0:] = torch.randn(x2[b, t0:].shape, generator=gen)
        out2 = forward(a.probe.module, x2, a.path).out
        if out2.shape != run.out.shape:
            return None
        before, after = run.out[b, :t0], out2[b, :t0]
        if not close(before, after, 1e-4):
            i = (b, *first_diff(after, before))
            delta = float((after[i[1:]] - before[i[1:]]).abs())
            by = fixed(delta) if delta >= 5e-4 else f"{delta:.1e}"  # never "by 0.000"
            return Verdict(
                FAIL,
                {
                    "zh": f"只改变位置 ≥ {t0} 的输入，output{compact_shape(i)} 却变了 "
                    f"{by}：位置 {i[1]} 读到了未来",
                    "en": f"changing only positions ≥ {t0} changed output{compact_shape(i)} by "
                    f"{by}: position {i[1]} reads the future",
                },
            )
    return Verdict(
        PASS,
        {
            "zh": "改变后面的 Token 从不改变前面的输出",
            "en": "changing later tokens never changed an earlier output",
        },
    )


def _future_weight(a: Audit) -> Verdict | None:
    for side in a.sides:
        w = side.run.weights()
        if w is None:
            continue
        T = w.size(-1)
        future = w.masked_fill(torch.tril(torch.ones(T, T, dtype=torch.bool)), 0.0).nan_to_num(0.0)
        if float(future.abs().max()) > 1e-6:
            i = first_diff(future, torch.zeros_like(future))
            return Verdict(
                FAIL,
                {
                    "zh": f"weights{heads_idx(w, i)} = {fixed(float(w[i]))}，但位置 {i[3]} 在位置 "
                    f"{i[2]} 的未来",
                    "en": f"weights{heads_idx(w, i)} = {fixed(float(w[i]))} but position {i[3]} is "
                    f"in the future of position {i[2]}",
                },
            )
        if bool(w.isnan().any()):
            i = first_diff(w.nan_to_num(0.0), w)
            # Only query row 0 empty, softmax along the keys: the diagonal was blocked.
            off_by_one = side.run.softmax_dims() <= {-1, None} and not any(
                bool(seen[..., 1:, :].isnan().any())
                for seen in (s.run.weights() for s in a.sides)
                if seen is not None
            )
            inp = side.run.softmax_inputs()
            why = (
                ("Softmax 的输入里已经有 nan（用 nan 填了掩码？应填 −∞）",
                 "the softmax input already holds nan (a mask filled with nan? fill with −∞)")
                if inp is not None and bool(inp.isnan().any())
                else ("Softmax 归一化的所有分数都是 −∞",
                      "every score the softmax normalised was −∞")
            )  # fmt: skip
            return Verdict(
                FAIL,
                {
                    "zh": f"weights{heads_idx(w, i)} 是 nan："
                    + why[0]
                    + ("（对角线也被掩了）" if off_by_one else ""),
                    "en": f"weights{heads_idx(w, i)} is nan: "
                    + why[1]
                    + (" (the diagonal was masked too)" if off_by_one else ""),
                },
                ["mask_off_by_one"] if off_by_one else [],
            )
    return None


def _sdpa_mask(a: Audit) -> Verdict | None:
    for call in a.probe.run.sdpa():
        mask, causal = call.kwargs.get("attn_mask"), call.kwargs.get("is_causal", False)
        if len(call.args) > 3:
            mask = call.args[3]
        if causal and mask is None:
            continue
        if mask is None:
            return Verdict(
                FAIL,
                {
                    "zh": "scaled_dot_product_attention 既没有 attn_mask 也没有 is_causal=True",
                    "en": "scaled_dot_product_attention was called with neither attn_mask nor "
                    "is_causal=True",
                },
                ["no_mask"],
            )
        T = mask.size(-1)
        future = ~torch.tril(torch.ones(T, T, dtype=torch.bool))
        if mask.dtype == torch.bool and bool((mask & future).any()):
            *_, t, j = (int(n) for n in (mask & future).nonzero()[0])
            return Verdict(
                FAIL,
                {
                    "zh": f"attn_mask[{t},{j}] = True 让位置 {t} 读到位置 {j}（它的未来）：对 SDPA "
                    "来说 True 表示“可以读”",
                    "en": f"attn_mask[{t},{j}] = True lets position {t} read position {j}, its "
                    "future (for SDPA, True means 'may attend')",
                },
            )
        if mask.dtype != torch.bool and bool((mask[..., future] > float("-inf")).any()):
            return Verdict(
                FAIL,
                {
                    "zh": "attn_mask 是浮点张量：SDPA 把它加到分数上，未来位置不是 −∞ "
                    "就没有被挡住（用布尔掩码或 is_causal=True）",
                    "en": "attn_mask is a float tensor: SDPA adds it to the scores, so a future "
                    "entry that is not −∞ blocks nothing (use a bool mask or is_causal=True)",
                },
            )
    return None


def item_5(a: Audit) -> Verdict | None:
    from attnlab.audit.axis_check import mask_verdict, weights_off_keys

    if a.call is not None and a.call.off_keys == "nan":
        return mask_verdict(a)  # NaN at every query with a masked key: re-runs show nothing
    verdict = _future_weight(a) or _sdpa_mask(a) or _causality(a)
    if (verdict is None or verdict.status == FAIL) and weights_off_keys(a):
        return mask_verdict(a)  # a NaN or a future weight of the softmax's own making
    if verdict is None or verdict.status == FAIL or a.probe.run.weights() is None:
        return verdict
    return Verdict(
        PASS,
        {
            "zh": "所有未来位置的权重都是 0；改变后面的 Token 不会改变前面的输出",
            "en": "every future weight is 0, and changing later tokens never changes an earlier "
            "output",
        },
    )
