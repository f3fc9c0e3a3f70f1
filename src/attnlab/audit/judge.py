"""Turn the ten item checks and the catalogue reproductions into the audit's verdicts.

An item's own observation decides it when it has one; the catalogue mistakes that reproduce the
learner's output (on the lesson example and on a random input) name the first failing item and
explain the FAILs that follow from it; otherwise the end-to-end comparison with the reference
from :mod:`attnlab.core.pipeline` decides, or the item stays NOT CHECKED.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import torch

from attnlab.audit.context import Audit, Side
from attnlab.audit.items import ITEMS
from attnlab.audit.observe import as_heads, close, first_diff
from attnlab.audit.overall import first_non_finite
from attnlab.audit.verdict import FAIL, NOT_CHECKED, PASS, SECTION, Verdict, heads_idx
from attnlab.mistakes import catalogue
from attnlab.text.fmt import compact_shape, fixed, shape_text, vec

if TYPE_CHECKING:
    from attnlab.audit.stages import Located

_MATCH = {
    "zh": "载入课程权重后，输出与 attnlab.core.pipeline 的参考一致（课程例子与随机输入）",
    "en": "with the lesson's weights loaded, the output equals the reference from "
    "attnlab.core.pipeline (lesson example and a random input)",
}
_SEP = {"zh": "；", "en": "; "}  # between an item's own evidence and the reproduction's


def _repro_evidence(a: Audit, names: list[str]) -> Verdict:
    side: Side = a.lesson if a.lesson.ref is not None else a.probe
    out, ref = side.run.out, side.ref["output"] if side.ref is not None else None
    joined = ", ".join(names)
    where_zh = "课程例子" if side is a.lesson else "随机输入"
    where_en = "the lesson example" if side is a.lesson else "a random input"
    if ref is None or out.shape != ref.shape:
        got = shape_text(out.shape)
        return Verdict(
            FAIL,
            {
                "zh": f"输出形状 {got}；目录中的错误 {joined} 恰好复现你的输出",
                "en": f"output shape {got}; catalogue mistake {joined} reproduces your output "
                "exactly",
            },
            names,
        )
    seen = _weights_evidence(side)
    at, got, right = _output_numbers(out, ref)
    if got == right and side.inp is not None and side.inp.w_o is None and a.kind == "multihead":
        # No W_O was found, so the reference is the concat too: it cannot show the right value.
        return Verdict(
            FAIL,
            {
                "zh": f"{seen['zh']}{where_zh}上 {at} = {got}，就是各 Head 的拼接，没有乘 W_O；"
                f"目录中的错误 {joined} 在课程例子和随机输入上都恰好复现你的输出",
                "en": f"{seen['en']}on {where_en} {at} = {got}, the heads' concatenation with no "
                f"W_O applied; catalogue mistake {joined} reproduces your output exactly, on the "
                "lesson example and on a random input",
            },
            names,
        )
    return Verdict(
        FAIL,
        {
            "zh": f"{seen['zh']}{where_zh}上 {at} = {got}，正确应为 {right}；目录中的错误 {joined} "
            "在课程例子和随机输入上都恰好复现你的输出",
            "en": f"{seen['en']}on {where_en} {at} = {got}, the right value is {right}; catalogue "
            f"mistake {joined} reproduces your output exactly, on the lesson example and on a "
            "random input",
        },
        names,
    )


def _output_numbers(out: torch.Tensor, ref: torch.Tensor) -> tuple[str, str, str]:
    """(where, got, right): the output row that differs most; when both rows print alike, the
    single number where they differ most, to six places."""
    i = first_diff(out, ref)
    row = i[:-1]
    got, right = vec(out[row], 3, fixed), vec(ref[row], 3, fixed)
    if got == right and not close(out, ref):
        return f"output{compact_shape(i)}", fixed(float(out[i]), 6), fixed(float(ref[i]), 6)
    return f"output{compact_shape(row)}", got, right


def _weights_evidence(side: Side) -> dict[str, str]:
    """The first row of observed weights that differs from the reference's, if any."""
    seen = side.run.weights()
    if seen is None or side.ref is None:
        return {"zh": "", "en": ""}
    want = as_heads(side.ref["weights"])
    if seen.shape != want.shape or close(seen, want):
        return {"zh": "", "en": ""}
    row = first_diff(seen, want)[:-1]
    at = heads_idx(want, row)
    return {
        "zh": f"weights{at} = {vec(seen[row], 3, fixed)}，参考为 {vec(want[row], 3, fixed)}；",
        "en": f"weights{at} = {vec(seen[row], 3, fixed)}, the reference gives "
        f"{vec(want[row], 3, fixed)}; ",
    }


def _undecided(a: Audit) -> Verdict:
    if all(s.ref is None for s in a.sides):
        return Verdict(
            NOT_CHECKED,
            {
                "zh": "没有找到投影层，无法建立参考；也没有可直接观察的证据",
                "en": "no projections found to build a reference from, and nothing observable "
                "decides it",
            },
        )
    return Verdict(
        NOT_CHECKED,
        {
            "zh": "没有可直接观察的证据；输出与参考不同，目录中也没有错误能复现它",
            "en": "nothing observable decides it; the output differs from the reference and no "
            "catalogue mistake reproduces it",
        },
    )


def _by_item(a: Audit) -> dict[int, list[str]]:
    """Reproducing mistakes grouped by their checklist item."""
    by_item: dict[int, list[str]] = {}
    for name in a.reproduced_by:
        by_item.setdefault(catalogue.get(name).item, []).append(name)
    if "scores_transposed" in a.reproduced_by and "swapped_qk" in by_item.get(2, []):
        # Swapping W_Q and W_K gives exactly Sᵀ: the score table is where it shows (item 3).
        by_item[2].remove("swapped_qk")
        by_item[3].insert(0, "swapped_qk")
        if not by_item[2]:
            del by_item[2]
    return by_item


def _decide(a: Audit, n: int, v: Verdict | None, by_item: dict[int, list[str]]) -> Verdict:
    """Combine item ``n``'s own observation ``v`` with the reproductions and the reference."""
    first = min(by_item, default=None)
    if first is not None and n == first:
        rv = _repro_evidence(a, by_item[n])
        if v is None or v.status != FAIL:
            return rv
        joined = {lang: f"{v.evidence[lang]}{sep}{rv.evidence[lang]}" for lang, sep in _SEP.items()}
        return Verdict(FAIL, joined, by_item[n])
    if v is not None and v.status == FAIL and not v.mistakes and first is not None:
        cause = ", ".join(by_item[first])
        return Verdict(
            FAIL,
            {
                "zh": f"{v.evidence['zh']}（这是 {cause} 的后果，见第 {first} 项）",
                "en": f"{v.evidence['en']} (a consequence of {cause}, item {first})",
            },
            by_item[first],
        )
    if v is not None:
        return v
    if a.matches_ref:
        return Verdict(PASS, _MATCH)
    if first is None:
        return _undecided(a)
    names = ", ".join(by_item[first])
    return Verdict(
        PASS,
        {
            "zh": f"这一步与课程一致：只改第 {first} 项（{names}）的课程代码就恰好复现你的输出",
            "en": f"this step agrees with the lesson: the lesson's code with only item {first} "
            f"changed ({names}) reproduces your output exactly",
        },
    )


_SAME = {
    "zh": "；但输出在所有输入上都与参考一致：换了一种写法，算的是同一个东西",
    "en": "; but the output equals the reference on every input: another way to compute the same "
    "thing",
}
_ROLES = {
    "zh": "（这是第 2 项中投影层用错角色的后果）",
    "en": " (a consequence of the projection roles in item 2)",
}
_RERUN = {5, 9}  # items judged by re-running the module on changed inputs


def _adjust(a: Audit, n: int, v: Verdict, bad: tuple[int, str] | None) -> Verdict:
    """What the code computes overrides how it looks: a step that looks wrong in a module whose
    output equals the reference passes; re-runs of an unsteady module and steps after a NaN/Inf
    decide nothing; the item where NaN/Inf first appears fails."""
    if a.unsteady is not None and n in _RERUN:
        return Verdict(
            NOT_CHECKED,
            {
                "zh": "未检查：同一输入两次调用的输出不同（见输出检查）",
                "en": "not checked: two calls on the same input differ (see the output check)",
            },
        )
    if bad is not None and n == bad[0] and v.status != FAIL:
        return Verdict(
            FAIL,
            {
                "zh": f"{bad[1]}：这里第一次出现 NaN/Inf",
                "en": f"{bad[1]}: NaN/Inf first appears here",
            },
        )
    if bad is not None and n > bad[0] and v.status == PASS:
        return Verdict(
            NOT_CHECKED,
            {
                "zh": f"未判断：第 {bad[0]} 项出现的 NaN/Inf 流到了这一步",
                "en": f"not judged: the NaN/Inf of item {bad[0]} flows into this step",
            },
        )
    if v.status == FAIL and a.roles_used is not None and n > 2:
        return Verdict(FAIL, {lang: v.evidence[lang] + _ROLES[lang] for lang in _ROLES})
    if v.status == FAIL and a.matches_ref:
        return Verdict(PASS, {lang: v.evidence[lang] + _SAME[lang] for lang in _SAME})
    return v


_SUM = {
    "zh": "（权重行之和不是 1，每行都混入了别的位置和别的提示：见第 6 项）",
    "en": " (weight rows that do not sum to 1 mix in other positions and prompts: see item 6)",
}


def _unnormalised(results: list[dict[str, object]]) -> bool:
    """Item 6 failed because the weight rows do not sum to 1."""
    six = [r for r in results if r["item"] == 6 and r["status"] == FAIL]
    return bool(six) and "sums to" in six[0]["evidence"]["en"]  # type: ignore[index]


#: Items whose own check reads how a step is written (scores, scale, softmax axis): when the
#: step's numbers are the reference's, the code computes the same thing another way.
_LOOKS = {3, 4, 6}


def _agreeing(at: Located, results: list[dict[str, object]]) -> None:
    """Items whose stages were all seen equal to the reference pass: one left NOT CHECKED, and
    one of :data:`_LOOKS` failed on how its step looks, since what the code computes there is
    the reference's (a scale applied to q instead of the scores)."""
    from attnlab.audit.stage_text import LABEL, stage_where
    from attnlab.audit.stages import OWNER

    for r in results:
        n = cast(int, r["item"])
        mine = [s for s, item in OWNER.items() if item == n and s in LABEL]
        looks = r["status"] == FAIL and n in _LOOKS
        if not (r["status"] == NOT_CHECKED or looks) or n == at.item:
            continue
        if not any(s in at.compared for s in mine):
            continue
        if any(s not in at.compared for s in mine if s in at.seen):
            continue
        zh = "、".join(LABEL[s][0] for s in mine if s in at.compared)
        en = ", ".join(LABEL[s][1] for s in mine if s in at.compared)
        where_zh, where_en = stage_where(at)
        before = cast(dict[str, str], r["evidence"])
        r["status"], r["section"], r["mistakes"] = PASS, None, []
        r["evidence"] = {
            "zh": f"在{where_zh}上，{zh}与参考一致（逐步比较）",
            "en": f"on {where_en}, {en} equal the reference's (stage by stage)",
        }
        if looks:
            now = cast(dict[str, str], r["evidence"])
            r["evidence"] = {
                "zh": f"{before['zh']}；但{now['zh']}：换了一种写法，算的是同一个东西",
                "en": f"{before['en']}; but {now['en']}: another way to compute the same thing",
            }


def _locate(a: Audit, results: list[dict[str, object]]) -> None:
    """When the output differs and no catalogue mistake reproduces it, the first differing stage
    (:mod:`~attnlab.audit.stages`) fails the item that owns it when nothing else decided that
    item (else the output check names the stage); an item failed by a re-run (5, 9) is then
    said to be its consequence."""
    from attnlab.audit.stage_text import LABEL, stage_text
    from attnlab.audit.stages import locate

    if a.matches_ref or a.reproduced_by or a.unsteady is not None or a.roles_used is not None:
        return
    if first_non_finite(a) is not None:
        return  # NaN/Inf already fails the item where it first appears
    at = locate(a)
    if at is None:
        return
    _agreeing(at, results)
    if not at.item:
        return
    side = a.lesson if at.lesson else a.probe
    owner = results[at.item - 1]
    if owner["status"] != NOT_CHECKED:
        return  # its own observation decided it: the output check carries the stage instead
    owner.update(status=FAIL, evidence=stage_text(at, side), mistakes=[],
                 section=SECTION[at.item])  # fmt: skip
    zh, en = LABEL[at.stage] if at.stage in LABEL else LABEL["projection"]
    for r in results:
        if r["item"] in _RERUN and r["item"] != at.item and r["status"] == FAIL:
            ev = cast(dict[str, str], r["evidence"])
            r["evidence"] = {
                "zh": f"{ev['zh']}（这是{zh}出错的后果，见第 {at.item} 项）",
                "en": f"{ev['en']} (a consequence of {en}, item {at.item})",
            }


def judge(a: Audit) -> list[dict[str, object]]:
    """The ten items in checklist order, as JSON-ready dicts."""
    by_item = _by_item(a)
    bad = first_non_finite(a)
    results: list[dict[str, object]] = []
    for n, check in ITEMS.items():
        v = _adjust(a, n, _decide(a, n, check(a), by_item), bad)
        section = catalogue.get(v.mistakes[0]).section if v.mistakes else SECTION[n]
        results.append(
            {
                "item": n,
                "status": v.status,
                "evidence": v.evidence,
                "mistakes": v.mistakes,
                "section": section if v.status == FAIL else None,
            }
        )
    _locate(a, results)
    if _unnormalised(results):
        for r in results:
            if r["item"] in _RERUN and r["status"] == FAIL and not r["mistakes"]:
                r["evidence"] = {lang: r["evidence"][lang] + _SUM[lang] for lang in _SUM}  # type: ignore[index]
    return results
