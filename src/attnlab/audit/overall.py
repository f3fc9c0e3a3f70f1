"""The audit's verdict on the whole module, next to the ten items: does it compute what the
reference computes?

A module is correct exactly when its output equals the reference on the lesson example and on
every random input (:data:`~attnlab.audit.context.EXTRA`), and two identical calls agree.
Otherwise the output check FAILs, naming the first differing numbers: on its own when no item
explains the difference, with the item that explains it otherwise. NaN and Inf fail the item
where they first appear (:func:`first_non_finite`); no later item passes on them.
"""

from __future__ import annotations

import torch

from attnlab.audit.context import Audit
from attnlab.audit.observe import Run, first_diff
from attnlab.audit.verdict import FAIL, NOT_CHECKED, PASS
from attnlab.text.fmt import compact_shape, fixed, shape_text, vec


def _entry(status: str, finding: str, zh: str, en: str, names: list[str]) -> dict[str, object]:
    return {
        "status": status,
        "finding": finding,
        "evidence": {"zh": zh, "en": en},
        "mistakes": names,
    }


def _unsteady(a: Audit) -> dict[str, object]:
    assert a.unsteady is not None
    i, first, second = a.unsteady
    at, shape = f"output{compact_shape(i)}", shape_text(a.probe.run.x.shape)
    return _entry(
        FAIL,
        "nondeterministic",
        f"对同一个形状为 {shape} 的 x 调用两次，{at} 先是 {fixed(first)}，再是 {fixed(second)}："
        "输出不确定。最可能的原因：eval 模式下 Dropout 仍在起作用（F.dropout 没传 "
        "training=self.training？）",
        f"two calls on the same x of shape {shape} differ: {at} = {fixed(first)}, then "
        f"{fixed(second)}. The output is not deterministic; the likely cause is dropout still "
        "active in eval mode (F.dropout without training=self.training?)",
        [],
    )


def _difference(a: Audit) -> tuple[str, str]:
    """The first numbers that differ from the reference, and where (zh, en)."""
    for side, zh, en in ((a.lesson, "课程例子", "the lesson example"), (a.probe, "", "")):
        if side.ref is None or side.matches_ref:
            continue
        return _numbers(side.run.out, side.ref["output"], zh or None, en or None, side.run)
    for x, out, ref in a.extra:
        if out.shape != ref.shape or not torch.allclose(out, ref, rtol=2e-4, atol=2e-4):
            return _numbers(out, ref, None, None, Run(x, out, a.probe.run.rec))
    return (
        "没有找到输出投影 W_O，输出至多是各 Head 的拼接",
        "no W_O was found: the output is at best the heads' concat",
    )


def _numbers(
    out: torch.Tensor, ref: torch.Tensor, zh: str | None, en: str | None, run: Run
) -> tuple[str, str]:
    shape = shape_text(run.x.shape)
    where_zh, where_en = zh or f"形状为 {shape} 的随机 x", en or f"a random x of shape {shape}"
    if out.shape != ref.shape:
        got, want = shape_text(out.shape), shape_text(ref.shape)
        return (
            f"在{where_zh}上输出形状 {got}，参考为 {want}",
            f"on {where_en} the output has shape {got}, the reference {want}",
        )
    row = first_diff(out, ref)[:-1]
    got, want = vec(out[row], 3, fixed), vec(ref[row], 3, fixed)
    at = f"output{compact_shape(row)}"
    return (
        f"在{where_zh}上 {at} = {got}，参考为 {want}",
        f"on {where_en} {at} = {got}, the reference gives {want}",
    )


#: Said when the output check cannot decide: with no FAIL the audit then exits 2, never 0.
_UNDECIDED = {
    "zh": "。输出检查无法判断：没有未通过项时，审计以退出码 2 结束，而不是 0。把投影层写成 "
    "nn.Linear，或按角色命名（query/key/value/out_proj），审计器就能载入课程的权重",
    "en": ". The output check cannot decide: with no FAIL the audit exits 2, not 0. Make the "
    "projections nn.Linear layers, or name them by role (query/key/value/out_proj), so that "
    "the auditor can load the lesson's weights",
}


def _partial(a: Audit) -> dict[str, object] | None:
    """NOT CHECKED when the reference leaves out part of the module and the output does not
    show what that part does: a multi-head's W_O was not found and the output is not just the
    concatenated heads, or the probe build's projections were not read and the lesson example
    (where wrong scalings coincide) matches. A difference on the lesson example, with every
    projection loaded, is still a FAIL."""
    no_w_o = a.kind == "multihead" and any(s.inp is not None and s.inp.w_o is None for s in a.sides)
    concat = all(s.matches_ref for s in a.sides if s.ref is not None)  # reference without W_O
    if no_w_o and not concat:
        return _entry(
            NOT_CHECKED,
            "partial_reference",
            "没有找到输出投影 W_O，而输出也不只是各 Head 的拼接：无法与参考比较" + _UNDECIDED["zh"],
            "no output projection W_O was found, and the output is not just the concatenated "
            "heads: it could not be compared with a reference" + _UNDECIDED["en"],
            [],
        )
    if a.probe.ref is None and a.lesson.matches_ref:
        return _entry(
            NOT_CHECKED,
            "partial_reference",
            "只在课程例子上读到了投影层，并且输出与参考一致；随机输入无法与参考比较"
            + _UNDECIDED["zh"],
            "the projections were read only at the lesson's sizes, where the output equals the "
            "reference; the random inputs could not be compared with a reference"
            + _UNDECIDED["en"],
            [],
        )
    return None


def _after_stages(a: Audit) -> dict[str, str]:
    """Where the difference comes from when no item owns it: after the last stage that agrees
    (:mod:`~attnlab.audit.stages`), or only on inputs other than the two recorded ones."""
    from attnlab.audit.stage_text import stage_text
    from attnlab.audit.stages import locate

    at = locate(a)
    if at is None:
        return {
            "zh": "在课程例子和第一个随机输入上输出与参考一致，只有其他形状的输入显示出差别",
            "en": "on the lesson example and the first random input the output equals the "
            "reference; only inputs of other shapes show the difference",
        }
    return stage_text(at, a.lesson if at.lesson else a.probe)


def _owner(a: Audit, failed: list[dict[str, object]]) -> dict[str, object]:
    """The failed item to point at: the one owning the first differing stage when no catalogue
    mistake reproduces the output (an earlier re-run item's FAIL is its consequence), else the
    first."""
    if a.reproduced_by or first_non_finite(a) is not None:
        return failed[0]
    from attnlab.audit.stages import locate

    at = locate(a)
    return next((i for i in failed if at is not None and i["item"] == at.item), failed[0])


def overall(a: Audit, items: list[dict[str, object]]) -> dict[str, object]:
    """The output check: PASS, FAIL (``finding`` "nondeterministic" or "output_differs") or
    NOT CHECKED (``finding`` "no_reference": no projections found, so no reference to compare
    with; "partial_reference": the reference leaves out a part of the module the output
    depends on). NOT CHECKED never gives exit code 0 (:func:`attnlab.audit.outcome.exit_code`)."""
    if a.unsteady is not None:
        return _unsteady(a)
    if all(s.ref is None for s in a.sides):
        return _entry(
            NOT_CHECKED,
            "no_reference",
            "没有找到投影层，无法把输出与参考比较" + _UNDECIDED["zh"],
            "no projections found, so the output could not be compared with a reference"
            + _UNDECIDED["en"],
            [],
        )
    partial = _partial(a)
    if partial is not None:
        return partial
    if a.matches_ref:
        n = 2 + len(a.extra)
        return _entry(
            PASS,
            "",
            f"载入相同权重后，输出在 {n} 个输入上都与参考一致（课程例子与随机输入，不同 B、T）",
            f"with the same weights loaded, the output equals the reference on {n} inputs (the "
            "lesson example and random inputs of several B and T)",
            [],
        )
    zh, en = _difference(a)
    failed = [i for i in items if i["status"] == FAIL]
    if not failed:
        where = _after_stages(a)
        return _entry(
            FAIL,
            "output_differs",
            f"输出与参考不同：{zh}；{where['zh']}",
            f"the output differs from the reference: {en}; {where['en']}",
            [],
        )
    first = _owner(a, failed)
    names = list(first["mistakes"])  # type: ignore[call-overload]
    return _entry(
        FAIL,
        "output_differs",
        f"输出与参考不同：{zh}（见第 {first['item']} 项）",
        f"the output differs from the reference: {en} (see item {first['item']})",
        names,
    )


def first_non_finite(a: Audit) -> tuple[int, str] | None:
    """The first item whose stage holds NaN or Inf (−∞ in a masked score is expected), with the
    stage and index that show it: raw scores (3), kept softmax inputs (4), masked softmax inputs
    and weights (5), output (7); weights or output when the weights are not normalised over the
    keys (6: :func:`~attnlab.audit.axis_check.weights_off_keys`)."""
    from attnlab.audit.axis_check import weights_off_keys

    found: list[tuple[int, str]] = []
    for side in a.sides:
        run = side.run
        T = run.T
        keep = torch.tril(torch.ones(T, T, dtype=torch.bool))
        raw, inp, w = run.raw_scores(), run.softmax_inputs(), run.weights()
        wrong = inp.isnan() | (inp == float("inf")) if inp is not None else None  # −∞ masks
        checks = [
            (3, "raw_scores", raw, ~torch.isfinite(raw) if raw is not None else None),
            (4, "softmax input", inp, wrong & keep if wrong is not None else None),
            (5, "softmax input", inp, wrong),
            (5, "weights", w, ~torch.isfinite(w) if w is not None else None),
            (7, "output", run.out, ~torch.isfinite(run.out)),
        ]
        for n, name, t, bad in checks:
            if t is not None and bad is not None and bool(bad.any()):
                i = tuple(int(j) for j in bad.nonzero()[0])
                found.append((n, f"{name}{compact_shape(i)} = {float(t[i])}"))
                break
    first = min(found) if found else None
    if first is not None and first[0] >= 5 and weights_off_keys(a):
        return 6, first[1]  # the softmax over another axis made it: 0/0 over −∞ entries
    return first
