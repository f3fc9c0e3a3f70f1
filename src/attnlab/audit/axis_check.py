"""Weights not normalised over the keys (checklist item 6), and what that leaves of items 5
and 7 onwards.

Seen two ways: a recorded softmax over a ``[.., T, T]`` table ran over another axis than the
last (readable in a batch-first module), or probing found a causal mask under which every
query with a masked key gives NaN/Inf and only the last query a finite output
(:attr:`~attnlab.audit.calling.Convention.off_keys`, which also covers time-first modules,
whose intermediates are not read in the lesson's layout). Either way the weights' NaN or
future weight is the softmax's doing, not the mask's: item 6 owns it.
"""

from __future__ import annotations

import torch

from attnlab.audit.context import Audit
from attnlab.audit.observe import aside, blocked, blocks_the_future, off_the_keys
from attnlab.audit.record import Call, softmax_dim
from attnlab.audit.verdict import FAIL, NOT_CHECKED, Verdict, heads_idx
from attnlab.text.fmt import fixed, shape_text


def weights_off_keys(a: Audit) -> bool:
    """The weights are normalised over another axis than the keys."""
    return (a.call is not None and a.call.off_keys is not None) or off_the_keys(a.probe.run)


def _softmax(a: Audit) -> Call | None:
    rec = a.probe.run.rec
    calls = [c for c in (*rec.calls, *rec.time_first) if c.kind == "softmax"]
    return next((c for c in calls if isinstance(c.out, torch.Tensor) and c.out.dim() >= 3), None)


def _axis(a: Audit) -> tuple[str, str]:
    """The axis the softmax ran over, when its length shows it is not the keys' (zh, en)."""
    call, T = _softmax(a), a.probe.run.T
    dim = softmax_dim(call) if call is not None else None
    if call is None or dim is None or call.out.size(dim) == T:
        return "", ""
    n, shape = call.out.dim(), shape_text(call.out.shape)
    size, x = call.out.size(dim), a.probe.run.x
    fed_zh = fed_en = ""
    if a.call is not None and a.call.time_first:
        fed = shape_text((x.size(1), x.size(0), x.size(2)))
        fed_zh = f"（x 以时间在前的 [T, B, C] = {fed} 传入）"
        fed_en = f" (x fed time first, [T, B, C] = {fed})"
    return (
        f"；Softmax 沿形状 {shape} 的张量的 dim={dim % n}{fed_zh}：这一轴有 {size} 个元素，而每个 "
        f"Query 有 T = {T} 个 Key",
        f"; softmax ran over dim={dim % n} of a {shape} tensor{fed_en}: an axis of {size} "
        f"entries, while a query has T = {T} keys",
    )


def softmax_verdict(a: Audit) -> Verdict | None:
    """Item 6 when probing saw NaN at exactly the queries that have a masked key, or, in a
    time-first module, a softmax over another axis of an input that blocks the future."""
    if a.call is None or a.call.off_keys is None:
        return None
    zh, en = _axis(a)
    if a.call.off_keys == "axis":
        if not a.call.time_first:
            return None  # the recorded softmax's own axis decides (item 6's dim check)
        return Verdict(
            FAIL,
            {
                "zh": "在因果掩码下 Softmax 的输入正好屏蔽了未来，但 Softmax 不是沿 Key 轴做的"
                f"{zh}",
                "en": "under the causal mask the softmax input blocks exactly the future, but the "
                f"softmax does not run over the keys{en}",
            },
        )
    return Verdict(
        FAIL,
        {
            "zh": "在因果掩码下，凡是有被屏蔽 Key 的 Query 都得到 NaN，只有最后一个 Query"
            "（没有被屏蔽的 Key）是有限值：Softmax 没有沿 Key 轴归一化，被屏蔽的 −∞ 是和其他 −∞ "
            "一起归一化的"
            f"（0/0）{zh}",
            "en": "under the causal mask every query that has a masked key gives NaN and only the "
            "last query (no key masked) a finite value: the softmax does not normalise along the "
            f"keys, so a masked −∞ is normalised with other −∞ entries (0/0){en}",
        },
    )


def mask_verdict(a: Audit) -> Verdict:
    """Item 5 when the weights are not normalised over the keys: the softmax inputs decide
    where they are readable, else nothing does."""
    for side in a.sides:
        inp = side.run.softmax_inputs()  # [B, n_head, T, T]
        if inp is None:
            continue
        T = inp.size(-1)
        future = ~torch.tril(torch.ones(T, T, dtype=torch.bool))  # [T, T]
        left = future & ~blocked(inp)
        if bool(left.any()):
            i = tuple(int(j) for j in left.nonzero()[0])
            return Verdict(
                FAIL,
                {
                    "zh": f"Softmax 的输入{heads_idx(inp, i)} = {fixed(float(inp[i]))} 没有被屏蔽，"
                    f"但位置 {i[3]} 在位置 {i[2]} 的未来",
                    "en": f"softmax input{heads_idx(inp, i)} = {fixed(float(inp[i]))} is not "
                    f"blocked, but position {i[3]} is in the future of position {i[2]}",
                },
            )
    readable = [s.run for s in a.sides if s.run.softmax_inputs() is not None]
    shown = all(blocks_the_future(run) for run in readable) if readable else False
    if shown or (not readable and any(aside(s.run) for s in a.sides)):
        return Verdict(
            NOT_CHECKED,
            {
                "zh": "Softmax 的输入正好屏蔽了每个未来位置；但权重不是沿 Key 轴归一化的"
                "（见第 6 项），输出无法显示掩码是否起作用",
                "en": "the softmax input blocks exactly the future positions, but the weights are "
                "not normalised over the keys (see item 6), so the output cannot show the mask at "
                "work",
            },
        )
    nan = a.call is not None and a.call.off_keys == "nan"
    return Verdict(
        NOT_CHECKED,
        {
            "zh": "未判断：权重不是沿 Key 轴归一化的（见第 6 项）"
            + ("，凡是有被屏蔽 Key 的 Query 都得到 NaN" if nan else "")
            + "，输出无法显示掩码是否起作用",
            "en": "not judged: the weights are not normalised over the keys (see item 6)"
            + (", so every query with a masked key gives NaN and" if nan else ", so")
            + " the output cannot show the mask at work",
        },
    )
