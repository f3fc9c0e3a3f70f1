"""The ten checklist items of the lesson's section 18, judged on an :class:`Audit`.

Each ``item_N`` looks at what it can observe directly (recorded softmax, scores, SDPA calls,
re-runs with changed inputs) and returns a :class:`Verdict`, or None when it saw nothing
decisive; :func:`judge` then falls back on the end-to-end comparison with the reference and on
the catalogue mistakes that reproduce the learner's output.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from attnlab import mistakes
from attnlab.audit.context import Audit, Side
from attnlab.audit.observe import as_heads, close, first_diff, forward

PASS, FAIL, NOT_CHECKED = "PASS", "FAIL", "NOT CHECKED"
_MATCH_ZH = "载入课程权重后，输出与 attnlab.pipeline 的参考一致（课程例子与随机输入）"
_MATCH_EN = (
    "with the lesson's weights loaded, the output equals the reference from "
    "attnlab.pipeline (lesson example and a random input)"
)
#: Section to reread for each item when no catalogue mistake names a more precise one.
SECTION = {1: 1, 2: 4, 3: 4, 4: 8, 5: 11, 6: 5, 7: 6, 8: 15, 9: 14, 10: 16}


@dataclass
class Verdict:
    """PASS / FAIL / NOT CHECKED with bilingual evidence and the mistakes that explain it."""

    status: str
    zh: str
    en: str
    mistakes: list[str] = field(default_factory=list)


def _f(v: float) -> str:
    return "nan" if math.isnan(v) else ("-inf" if v == float("-inf") else f"{v:.3f}")


def _vec(t: torch.Tensor) -> str:
    return "[" + ", ".join(_f(float(v)) for v in t.flatten()) + "]"


def _idx(i: tuple[int, ...]) -> str:
    return "[" + ",".join(str(n) for n in i) + "]"


def _heads_idx(w: torch.Tensor, i: tuple[int, ...]) -> str:
    return _idx(i if w.size(1) > 1 else (i[0], *i[2:]))


def item_1(a: Audit) -> Verdict:
    s = a.lesson.run
    shape = list(s.out.shape)
    return Verdict(
        PASS,
        f"输入课程的 X {list(s.x.shape)}（浮点向量），模块接受并输出 {shape}",
        f"fed the lesson's X {list(s.x.shape)} (float vectors); the module took it "
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
        got = list(a.probe.run.out.shape)
        return Verdict(
            FAIL,
            f"输出应为 [B,T,d_head] = [3,5,{a.width}]，实际 {got}",
            f"the output should be [B, T, d_head] = [3, 5, {a.width}], got {got}",
        )
    return None


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
            f"raw_scores{_heads_idx(want, i)} = {_f(float(raw[i]))}，与课程一致",
            f"raw_scores{_heads_idx(want, i)} = {_f(float(raw[i]))}, as in the lesson",
        )
    if close(raw, want.transpose(-2, -1)):
        return Verdict(
            FAIL,
            f"观察到的分数表是课程分数表的转置：raw_scores[0,0,1] = "
            f"{_f(float(raw[0, 0, 0, 1]))}，课程为 {_f(float(want[0, 0, 0, 1]))}",
            f"the observed score table is the lesson's transposed: raw_scores[0,0,1] = "
            f"{_f(float(raw[0, 0, 0, 1]))}, lesson {_f(float(want[0, 0, 0, 1]))}",
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
                f"scaled_dot_product_attention 使用 1/√d_head = {_f(1 / math.sqrt(d))}",
                f"scaled_dot_product_attention scales by 1/√d_head = {_f(1 / math.sqrt(d))}",
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
    if math.isclose(ratio, 1 / math.sqrt(d), rel_tol=1e-3):
        return Verdict(
            PASS,
            f"Softmax 输入 ÷ 原始分数 = {_f(ratio)} = 1/√d_head（d_head = {d}）",
            f"softmax input ÷ raw score = {_f(ratio)} = 1/√d_head (d_head = {d})",
        )
    return _scale_fail(ratio, C, d)


def _scale_fail(ratio: float, C: int, d: int) -> Verdict:
    named = {1.0: "none", 1 / d: "d", 1 / math.sqrt(C): "sqrt_c"}
    which = [_SCALES[n] for r, n in named.items() if math.isclose(ratio, r, rel_tol=1e-3)]
    return Verdict(
        FAIL,
        f"分数被乘以 {_f(ratio)}，应为 1/√d_head = {_f(1 / math.sqrt(d))}（d_head = {d}, C = {C}）",
        f"the scores were multiplied by {_f(ratio)}, should be 1/√d_head = "
        f"{_f(1 / math.sqrt(d))} (d_head = {d}, C = {C})",
        which,
    )


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
            return Verdict(
                FAIL,
                f"只改变位置 ≥ {t0} 的输入，output{_idx(i)} 却变了 {_f(delta)}："
                f"位置 {i[1]} 读到了未来",
                f"changing only positions ≥ {t0} changed output{_idx(i)} by {_f(delta)}: "
                f"position {i[1]} reads the future",
            )
    return None


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
                f"weights{_heads_idx(w, i)} = {_f(float(w[i]))}，但位置 {i[3]} 在位置 "
                f"{i[2]} 的未来",
                f"weights{_heads_idx(w, i)} = {_f(float(w[i]))} but "
                f"position {i[3]} is in the future of position {i[2]}",
            )
        if bool(w.isnan().any()):
            i = first_diff(w.nan_to_num(0.0), w)
            return Verdict(
                FAIL,
                f"weights{_heads_idx(w, i)} 是 nan：这一行所有位置都被挡住（对角线也被掩了）",
                f"weights{_heads_idx(w, i)} is nan: the whole row is blocked (the "
                f"diagonal was masked too)",
                ["mask_off_by_one"],
            )
    return None


def item_5(a: Audit) -> Verdict | None:
    verdict = _future_weight(a) or _causality(a)
    if verdict is not None or a.probe.run.weights() is None:
        return verdict
    return Verdict(
        PASS,
        "所有未来位置的权重都是 0；改变后面的 Token 不会改变前面的输出",
        "every future weight is 0, and changing later tokens never changes an earlier output",
    )


def item_6(a: Audit) -> Verdict | None:
    run = a.probe.run
    dims = run.softmax_dims()
    if any(d not in (-1, None) for d in dims):
        bad = next(d for d in dims if d not in (-1, None))
        return Verdict(
            FAIL,
            f"softmax 沿 dim={bad}（Query 轴）而不是 dim=-1（Key 轴）",
            f"softmax ran over dim={bad} (the query axis), not dim=-1 (the key axis)",
            ["softmax_query_axis"],
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
            f"weights 第 {_idx(i)} 行之和是 {_f(float(sums[i]))}，不是 1",
            f"row {_idx(i)} of the weights sums to {_f(float(sums[i]))}, not 1",
        )
    return Verdict(
        PASS,
        f"Softmax 沿 dim=-1，每个 Query 行之和为 1（最大 |和-1| = {worst:.1e}）",
        f"softmax over dim=-1; every query row sums to 1 (max |sum-1| = {worst:.1e})",
    )


def item_7(a: Audit) -> Verdict | None:
    return None  # the end-to-end comparison and the reproductions decide


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
            f"输出应为 [B,T,C] = {want}，实际 {list(out.shape)}",
            f"the output should be [B, T, C] = {want}, got {list(out.shape)}",
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
                f"只改变批次第 1 行，output{_idx(i)} 却变了：批次行互相读取",
                f"changing only batch row 1 changed output{_idx(i)}: batch rows read each other",
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
            f"模块交出的是 Attention Weights {list(a.probe.run.out.shape)}，"
            "LM Head 需要的是特征 weights @ V",
            f"the module hands on the attention weights {list(a.probe.run.out.shape)}; "
            "the LM head needs the features weights @ V",
            ["lm_head_on_weights"],
        )
    shape = list(a.probe.run.out.shape)
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


def _repro_evidence(a: Audit, names: list[str]) -> Verdict:
    side: Side = a.lesson if a.lesson.ref is not None else a.probe
    out, ref = side.run.out, side.ref["output"] if side.ref is not None else None
    joined = ", ".join(names)
    where_zh = "课程例子" if side is a.lesson else "随机输入"
    where_en = "the lesson example" if side is a.lesson else "a random input"
    if ref is None or out.shape != ref.shape:
        got = list(out.shape)
        return Verdict(
            FAIL,
            f"输出形状 {got}；目录中的错误 {joined} 恰好复现你的输出",
            f"output shape {got}; catalogue mistake {joined} reproduces your output exactly",
            names,
        )
    i = first_diff(out, ref)
    row = i[:-1]
    return Verdict(
        FAIL,
        f"{where_zh}上 output{_idx(row)} = {_vec(out[row])}，正确应为 "
        f"{_vec(ref[row])}；目录中的错误 {joined} 在课程例子和随机输入上都恰好复现你的输出",
        f"on {where_en} output{_idx(row)} = {_vec(out[row])}, the right value is "
        f"{_vec(ref[row])}; catalogue mistake {joined} reproduces your output exactly, "
        "on the lesson example and on a random input",
        names,
    )


def _undecided(a: Audit) -> Verdict:
    if all(s.ref is None for s in a.sides):
        return Verdict(
            NOT_CHECKED,
            "没有找到投影层，无法建立参考；也没有可直接观察的证据",
            "no projections found to build a reference from, and nothing observable decides it",
        )
    return Verdict(
        NOT_CHECKED,
        "没有可直接观察的证据；输出与参考不同，目录中也没有错误能复现它",
        "nothing observable decides it; the output differs from the reference and "
        "no catalogue mistake reproduces it",
    )


def judge(a: Audit) -> list[dict[str, object]]:
    """The ten items in checklist order, as JSON-ready dicts."""
    by_item: dict[int, list[str]] = {}
    for name in a.reproduced_by:
        by_item.setdefault(mistakes.get(name).item, []).append(name)
    if "scores_transposed" in a.reproduced_by and "swapped_qk" in by_item.get(2, []):
        # Swapping W_Q and W_K gives exactly Sᵀ: the score table is where it shows (item 3).
        by_item[2].remove("swapped_qk")
        by_item[3].insert(0, "swapped_qk")
        if not by_item[2]:
            del by_item[2]
    first_fail = min(by_item, default=None)
    results = []
    for n, check in ITEMS.items():
        v = check(a)
        if n == first_fail:
            rv = _repro_evidence(a, by_item[n])
            v = (
                rv
                if v is None or v.status != FAIL
                else Verdict(FAIL, f"{v.zh}；{rv.zh}", f"{v.en}; {rv.en}", by_item[n])
            )
        elif v is not None and v.status == FAIL and not v.mistakes and first_fail is not None:
            cause = ", ".join(by_item[first_fail])
            v = Verdict(
                FAIL,
                f"{v.zh}（这是 {cause} 的后果，见第 {first_fail} 项）",
                f"{v.en} (a consequence of {cause}, item {first_fail})",
                by_item[first_fail],
            )
        elif v is None and (a.matches_ref or first_fail is not None):
            zh, en = (
                (_MATCH_ZH, _MATCH_EN)
                if a.matches_ref
                else (
                    f"与只错在第 {first_fail} 项的复现一致",
                    f"consistent: the only error reproduced is in item {first_fail}",
                )
            )
            v = Verdict(PASS, zh, en)
        elif v is None:
            v = _undecided(a)
        section = mistakes.get(v.mistakes[0]).section if v.mistakes else SECTION[n]
        results.append(
            {
                "item": n,
                "status": v.status,
                "evidence": {"zh": v.zh, "en": v.en},
                "mistakes": v.mistakes,
                "section": section if v.status == FAIL else None,
            }
        )
    return results
